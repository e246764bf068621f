"""cudaLaunchCooperativeKernel under ``ptxc run`` (tests/cuda_apps/coop_reduce.cu):
the app sizes the grid with the occupancy API (H100 model: 132 SMs, 2 blocks
per SM of 128 threads), checks its sum on the host, and checks that a grid
one block larger than (blocks per SM) x SMs is refused with
cudaErrorCooperativeLaunchTooLarge. Full and hybrid counters must agree."""
from __future__ import annotations

import pytest

from runtime_apps import AppBuilder, run_ptxc


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("coop_apps"))


def test_cooperative_reduction(apps):
    app = apps.build("coop_reduce")
    runs = {mode: run_ptxc(app, "50000", mode=mode) for mode in ("full", "hybrid")}
    for mode, r in runs.items():
        assert r.returncode == 0, (mode, r.proc.stdout, r.proc.stderr[-2000:])
        assert "PASS: 264 blocks of 128 threads" in r.proc.stdout
        assert "cudaErrorCooperativeLaunchTooLarge" in r.proc.stdout
    full, hybrid = (runs[m].summary["launches"] for m in ("full", "hybrid"))
    assert len(full) == len(hybrid) == 1 and full[0]["grid_x"] == hybrid[0]["grid_x"] == 264
    for key in ("inst_executed", "thread_inst_executed", "branch", "divergent_branch"):
        assert full[0][key] == hybrid[0][key]
