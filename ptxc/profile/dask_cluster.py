"""Run a batch of ``ptxc profile`` modules on a Dask distributed cluster.

``run_dask(paths, options, address, ...)`` connects a ``distributed.Client``
to the scheduler at ``address`` (``tcp://host:8786``), submits the batch
worker (``ptxc.profile.batch.profile_file``) once per module with
``Client.map`` (``pure=False``: every path is a task, even a repeated one)
and gathers the results in input order. A task that fails on the cluster
(for example ``KilledWorker`` after a worker process died on it as often
as the scheduler allows, ``distributed.scheduler.allowed-failures``) is an
error result for its module. Dask is an optional dependency
(``pip install 'ptxc[dask]'``), imported only here.

Documentation: https://distributed.dask.org/en/stable/client.html
(``Client.map``, ``as_completed``).
"""
from __future__ import annotations

from ptxc.errors import PtxcError

INSTALL_HINT = "--dask needs Dask's distributed package: pip install 'ptxc[dask]'"


def run_dask(paths, options: dict, address: str, timings: bool, progress, worker,
             error_result) -> list[dict]:
    """``worker(path, options, timings)`` of every path on the cluster; a
    failed task gives ``error_result(path, message)``."""
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise PtxcError(INSTALL_HINT) from None
    client = connect(Client, address)
    try:
        futures = client.map(worker, paths, options=options, timings=timings, pure=False)
        for _ in as_completed(futures):
            progress()
        results = []
        for path, f in zip(paths, futures):
            try:
                results.append(f.result())
            except Exception as e:  # noqa: BLE001 - a failed task is that module's error
                results.append(error_result(path, f"the Dask task failed: {type(e).__name__}: {e}"))
        return results
    finally:
        client.close()


def connect(Client, address: str):
    try:
        return Client(address, timeout="10s")
    except (OSError, TimeoutError, ValueError) as e:
        raise PtxcError(f"cannot connect to the Dask scheduler at '{address}': "
                        f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
