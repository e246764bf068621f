"""Device new/delete under ``ptxc run`` (tests/cuda_apps/heap.cu): the heap
persists between launches, as CUDA's does. The app checks its own sums
(100 t length + length (length - 1) / 2 per thread) and prints PASS; full
and hybrid runs must give the same output and counters."""
from __future__ import annotations

import pytest

from runtime_apps import AppBuilder, run_ptxc


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("heap_apps"))


def test_lists_on_the_device_heap_across_launches(apps):
    app = apps.build("heap")
    runs = {mode: run_ptxc(app, "6", mode=mode) for mode in ("full", "hybrid")}
    for mode, r in runs.items():
        assert r.returncode == 0, (mode, r.proc.stderr[-2000:])
        assert "PASS: 256 lists of 6 nodes" in r.proc.stdout
    full, hybrid = (runs[m].summary for m in ("full", "hybrid"))
    assert [k["kernel"] for k in full["kernels"]] == ["_Z5buildi", "_Z4walkPx", "_Z7destroyv"]
    for a, b in zip(full["launches"], hybrid["launches"]):
        assert a["inst_executed"] == b["inst_executed"]
        assert a["thread_inst_executed"] == b["thread_inst_executed"]
        assert a["divergent_branch"] == b["divergent_branch"]


@pytest.mark.parametrize("mode", ["full", "hybrid"])
def test_malloc_heap_size_limit(apps, mode):
    """tests/cuda_apps/heap_limit.cu: CUDA's default heap is 8 MiB (8388608);
    after cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64 MiB) a 32 MiB
    malloc succeeds; once a kernel used malloc, a new limit is refused with
    cudaErrorInvalidValue (1) and a 96 MiB malloc returns NULL."""
    app = apps.build("heap_limit")
    r = run_ptxc(app, mode=mode)
    assert r.returncode == 0, r.proc.stderr[-2000:]
    assert r.proc.stdout.splitlines() == [
        "default limit 8388608",
        "set 64 MiB: 0, limit 67108864",
        "grab 33554432: 1",
        "set after a malloc kernel: 1",
        "grab 100663296: 0",
        "PASS"]
