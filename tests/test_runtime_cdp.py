"""Dynamic parallelism under ``ptxc run`` (tests/cuda_apps/cdp_print.cu, a
cdpSimplePrint-style tree: every block launches the next level from thread
0; 3 levels of grids of 2 blocks of 2 threads = 14 blocks, 7 grids).

The application checks its own block and thread counts and prints PASS.
ptxc runs a grid's launches after it, depth first in issue order
(docs/runtime.md, "Device-side launches"), so the block ids (atomicAdd on a
``__device__`` counter) and the printf lines follow that order; each grid
is a launch of its own in the report, its ``parent`` the launch whose grid
launched it. Full and hybrid runs give the same output and counters.

The unmodified application (an -rdc=true build, whose objects' PTX ptxc
links: ptxc/runtime/rdc.py) runs as built; the other tests give ptxc the
application's PTX with ``--ptx`` (nvcc -ptx -rdc=true) as well.
"""
from __future__ import annotations

import os
import subprocess

import pytest

from runtime_apps import APPS, AppBuilder, nvcc, run_ptxc

RDC = ("-rdc=true", "-cudart", "shared", "-arch=sm_90")
# uid, parent uid, depth: the host's grid (0, 1), then depth first in issue order
ORDER = [(0, -1, 0), (1, -1, 0), (2, 0, 1), (3, 0, 1), (4, 2, 2), (5, 2, 2), (6, 3, 2), (7, 3, 2),
         (8, 1, 1), (9, 1, 1), (10, 8, 2), (11, 8, 2), (12, 9, 2), (13, 9, 2)]
EXPECTED = [f"BLOCK {u} launched by {p} at depth {d}" for u, p, d in ORDER] + \
    ["PASS: 14 blocks in 3 levels"]


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    return AppBuilder(tmp_path_factory.mktemp("cdp_apps"))


def build_with_ptx(apps, name: str) -> tuple[str, str]:
    """The -rdc=true application and its PTX (nvcc -ptx -rdc=true), for --ptx."""
    app = apps.build(name, flags=RDC)
    ptx = app + ".ptx"
    proc = subprocess.run([nvcc(), "-ptx", "-rdc=true", "-arch=sm_90",
                           os.path.join(APPS, name + ".cu"), "-o", ptx],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return app, ptx


@pytest.fixture(scope="module")
def app_and_ptx(apps):
    return build_with_ptx(apps, "cdp_print")


def check_run(r) -> list:
    assert r.returncode == 0, r.proc.stderr[-2000:]
    assert r.proc.stdout.splitlines() == EXPECTED
    rows = r.rows("select id, kernel, grid_x, block_x, parent from launches order by id")
    # launch 1 by the host; 2 (from its block 0) with 3, 4 (from 2's blocks);
    # 5 (from the host grid's block 1) with 6, 7
    assert [(x["id"], x["parent"]) for x in rows] == [(1, None), (2, 1), (3, 2), (4, 2), (5, 1),
                                                     (6, 5), (7, 5)]
    assert all(x["kernel"] == "_Z10cdp_kerneliii" and x["grid_x"] == 2 and x["block_x"] == 2
               for x in rows)
    return r.summary["launches"]


def test_cdp_print_tree_with_its_ptx(app_and_ptx):
    app, ptx = app_and_ptx
    runs = {m: run_ptxc(app, "3", mode=m, options=("--ptx", ptx)) for m in ("full", "hybrid")}
    full, hybrid = (check_run(runs[m]) for m in ("full", "hybrid"))
    keys = ("inst_executed", "thread_inst_executed", "branch", "divergent_branch")
    assert [[x[k] for k in keys] for x in full] == [[x[k] for k in keys] for x in hybrid]
    # the grids whose blocks launch (1, 2, 5) run one path, the leaf grids (depth 2) another
    inst = [x["inst_executed"] for x in full]
    assert len({inst[k] for k in (0, 1, 4)}) == 1 and len({inst[k] for k in (2, 3, 5, 6)}) == 1
    assert inst[0] > inst[2]


def test_cdp_print_unmodified(app_and_ptx):
    app, _ = app_and_ptx
    for mode in ("full", "hybrid"):
        check_run(run_ptxc(app, "3", mode=mode))


@pytest.mark.parametrize("mode", ["full", "hybrid"])
def test_pending_launch_limit_set_by_the_application(apps, mode):
    """cdp_limits.cu: CUDA's default limit is 2048; set to 4, four of the
    eight device-side launches run and the others get
    cudaErrorLaunchPendingCountExceeded (69)."""
    app, ptx = build_with_ptx(apps, "cdp_limits")
    r = run_ptxc(app, mode=mode, options=("--ptx", ptx))
    assert r.returncode == 0, r.proc.stderr[-2000:]
    assert r.proc.stdout.splitlines() == ["default 2048", "set 4: 0, limit 4",
                                          "errors 0 0 0 0 69 69 69 69", "grids 4"]
    rows = r.rows("select kernel, parent from launches order by id")
    assert rows == [{"kernel": "_Z4manyPiS_", "parent": None}] + \
        [{"kernel": "_Z7nothingPi", "parent": 1}] * 4
