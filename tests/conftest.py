"""pytest setup shared by every test: tests/ on sys.path (for the helper
modules app_harness, executor_harness, ...) and fixtures several test files
use."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="module")
def dask_address():
    """The address of a local Dask cluster of two one-thread worker processes
    (skipped without the distributed package)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        yield cluster.scheduler_address
