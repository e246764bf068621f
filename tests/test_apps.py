"""Whole CUDA applications (tests/apps/*/*.cu) under `ptxc run`.

Every app is compiled once per session with `nvcc -cudart shared -arch=sm_90 -O3`
and run under `ptxc run --mode full` and `--mode hybrid`, each with a SQLite
report. Checked, per app:

* it exits 0 and prints PASS (its own check against a CPU reference), in both modes;
* its launches, in order (kernel, grid, block), are those its host loop must make
  (tests/app_specs.py, worked out from the source at the default size);
* the Rodinia/Parboil-style apps' output files match a numpy recomputation;
* every counter column of every launch and the whole per-branch table are equal
  in the two reports (the hybrid run must give exactly the full run's counters);
* two kernels' counters equal the numbers derived by hand from their PTX
  (tests/apps/EXPECTED.md), in both reports and with `ptxc.launch` on the
  committed PTX.

Without nvcc or without the runtime the app runs are skipped; the tests on the
committed PTX still run.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import app_harness as H
import ptxc
from app_specs import APPS, APPS_DIR, BY_NAME

MODES = ("full", "hybrid")
NAMES = [a.name for a in APPS]
WITH_OUTPUT = [a.name for a in APPS if a.output]


@pytest.fixture(scope="session")
def built_apps(tmp_path_factory):
    return H.build_for_tests([a.source for a in APPS], tmp_path_factory, "apps-bin")


@pytest.fixture(scope="session")
def app_run(built_apps, tmp_path_factory):
    """app_run(name, mode) -> harness Run (cached: each app runs once per mode)."""
    runs = {}

    def get(name: str, mode: str):
        if (name, mode) not in runs:
            exe = built_apps[name]
            if isinstance(exe, Exception):
                pytest.fail(str(exe))
            cwd = tmp_path_factory.mktemp(f"{name}-{mode}")
            app = BY_NAME[name]
            out_file = cwd / "out.bin" if app.output else None
            r = H.run(exe, app.args(out_file), mode, cwd / "report.sqlite", cwd,
                      extra=["--keep-ptx", str(cwd / "ptx")])
            r.out_file, r.ptx_dir = out_file, cwd / "ptx"
            runs[name, mode] = r
        return runs[name, mode]
    return get


def report_of(app_run, name: str, mode: str) -> H.Report:
    r = app_run(name, mode)
    assert r.report.exists(), f"{name} ({mode}) wrote no report:\n{r.stderr[-2000:]}"
    return H.read_report(r.report)


# ------------------------------------------------------------------ app checks
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", NAMES)
def test_app_passes(app_run, name, mode):
    r = app_run(name, mode)
    assert r.passed(), (f"{name} --mode {mode}: exit {r.returncode}\n"
                        f"stdout:\n{r.stdout[-2000:]}\nstderr:\n{r.stderr[-2000:]}")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", NAMES)
def test_launches_follow_the_host_loop(app_run, name, mode):
    app = BY_NAME[name]
    r = app_run(name, mode)
    data = app.output(r.out_file) if app.output else None
    want = app.plan(data)
    rep = report_of(app_run, name, mode)
    assert rep.meta["exit_status"] == "0" and rep.meta["mode"] == mode
    assert int(rep.meta["launches"]) == len(rep.launches) == len(want)
    for i, (row, launch) in enumerate(zip(rep.launches, want)):
        got = (row["kernel"], row["grid_x"], row["grid_y"], row["grid_z"],
               row["block_x"], row["block_y"], row["block_z"])
        assert launch.matches(row), f"launch {i}: {got}, expected {launch}"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", WITH_OUTPUT)
def test_output_file_matches_numpy(app_run, name, mode):
    r = app_run(name, mode)
    assert r.out_file.exists(), f"{name} wrote no output file"
    BY_NAME[name].output(r.out_file)


@pytest.mark.parametrize("name", NAMES)
def test_hybrid_counters_equal_full(app_run, name):
    full, hybrid = report_of(app_run, name, "full"), report_of(app_run, name, "hybrid")
    assert len(full.launches) == len(hybrid.launches) > 0
    for f, h in zip(full.launches, hybrid.launches):
        cf, ch = H.counters(f), H.counters(h)
        diff = {k: (cf[k], ch.get(k)) for k in cf if cf[k] != ch.get(k)}
        assert not diff, f"launch {f['id']} ({f['kernel']}): full vs hybrid {diff}"
    assert full.branches == hybrid.branches


# --------------------------------------------------- hand-derived counters
# tests/apps/EXPECTED.md derives these from the committed PTX.
HAND_COUNTS = {
    "vectorAdd": {
        "ptx": "vectorAdd/vectorAdd.sm90.ptx", "kernel": "_Z9vectorAddPKfS0_Pfi",
        "counters": dict(inst_executed=3487, thread_inst_executed=111320,
                         thread_inst_executed_pred_on=106320, branch=160, cond_branch=160,
                         divergent_branch=1, flop_count_sp=5000, flop_count_dp=0,
                         flop_count_hp=0, flop_count_sp_special=0, static_inst=22),
        "branch_efficiency": 100 * 159 / 160, "warp_execution_efficiency": 100 * 111320 / (32 * 3487),
        "branch": dict(line=37, warp_execs=160, active=5120, taken=120, not_taken=5000, divergent=1),
    },
    "deviceQuery": {
        "ptx": "deviceQuery/deviceQuery.sm90.ptx", "kernel": "_Z5probePiS_",
        "counters": dict(inst_executed=515, thread_inst_executed=16387,
                         thread_inst_executed_pred_on=16386, branch=32, cond_branch=32,
                         divergent_branch=1, flop_count_sp=0, flop_count_dp=0,
                         flop_count_hp=0, flop_count_sp_special=0, static_inst=19),
        "branch_efficiency": 100 * 31 / 32, "warp_execution_efficiency": 100 * 16387 / (32 * 515),
        "branch": dict(line=39, warp_execs=32, active=1024, taken=1023, not_taken=1, divergent=1),
    },
}


def ptx_lines(text: str) -> list[str]:
    """PTX lines without comments and with single spaces (line numbers kept)."""
    return [" ".join(re.sub(r"//.*", "", line).split()) for line in text.splitlines()]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(HAND_COUNTS))
def test_report_counters_equal_hand_derivation(app_run, name, mode):
    want = HAND_COUNTS[name]
    r = app_run(name, mode)
    kept = sorted(r.ptx_dir.glob("*.ptx"))
    assert len(kept) == 1, kept
    committed = (APPS_DIR / want["ptx"]).read_text()
    if ptx_lines(kept[0].read_text()) != ptx_lines(committed):
        pytest.skip(f"this nvcc embeds other PTX than {want['ptx']} (nvcc 13.0 V13.0.88)")
    rep = report_of(app_run, name, mode)
    rows = [row for row in rep.launches if row["kernel"] == want["kernel"]]
    assert len(rows) == 1
    row = rows[0]
    assert {k: row[k] for k in want["counters"]} == want["counters"]
    assert row["branch_efficiency"] == pytest.approx(want["branch_efficiency"])
    assert row["warp_execution_efficiency"] == pytest.approx(want["warp_execution_efficiency"])
    branches = [b for b in rep.branches if b["launch_id"] == row["id"]]
    assert [{k: b[k] for k in want["branch"]} for b in branches] == [want["branch"]]


def hand_launch_args(name: str):
    """The launch the app makes, with numpy buffers (as in the app's source)."""
    if name == "vectorAdd":
        n = 5000
        a, b = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
        c = np.zeros(n, np.float32)
        return dict(grid=20, block=256, args=[a, b, c, n]), lambda: (c == a + b).all()
    ids, warp = np.full(1024, -1, np.int32), np.zeros(1, np.int32)
    return (dict(grid=1, block=(32, 8, 4), args=[ids, warp]),
            lambda: (ids == np.arange(1024)).all() and warp[0] == 32)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(HAND_COUNTS))
def test_committed_ptx_counters_equal_hand_derivation(name, mode):
    want = HAND_COUNTS[name]
    module = ptxc.load(APPS_DIR / want["ptx"])
    launch, outputs_ok = hand_launch_args(name)
    prof = ptxc.launch(module, want["kernel"], mode=mode, **launch)
    assert {k: getattr(prof, k) for k in want["counters"]} == want["counters"]
    assert prof.branch_efficiency == pytest.approx(want["branch_efficiency"])
    assert prof.warp_execution_efficiency == pytest.approx(want["warp_execution_efficiency"])
    (branch,) = prof.per_branch.values()
    assert {k: branch[k] for k in want["branch"]} == want["branch"]
    if mode == "full":
        assert outputs_ok()


# -------------------------------------------------- nw kernels without the runtime
def test_nw_kernels_on_committed_ptx():
    """The nw tiles need `[%r+imm]` shared addresses to wrap at 2^32 (nvcc keeps a
    negative base register; /work/notes/apps-findings.md F1). The two kernels run
    over the whole matrix with ptxc.launch and give the numpy DP; hybrid counters
    equal full ones."""
    module = ptxc.load(APPS_DIR / "nw" / "nw.sm90.ptx")
    n, penalty, width = 32, 2, 33
    rng = np.random.default_rng(8)
    sub = np.array([3, -1, -2, -1, -1, 3, -1, -2, -2, -1, 3, -1, -1, -2, -1, 3]).reshape(4, 4)
    a, b = rng.integers(0, 4, n), rng.integers(0, 4, n)
    sim = np.zeros((width, width), np.int32)
    sim[1:, 1:] = sub[a[:, None], b[None, :]]
    score = np.zeros((width, width), np.int32)
    score[0, :] = score[:, 0] = -penalty * np.arange(width)
    want = score.astype(np.int64)
    for i in range(1, width):
        for j in range(1, width):
            want[i, j] = max(want[i - 1, j - 1] + sim[i, j], want[i - 1, j] - penalty,
                             want[i, j - 1] - penalty)
    tiles = n // 16
    launches = [("_Z11nwUpperLeftPiPKiiii", d + 1, [width, d, penalty]) for d in range(tiles)]
    launches += [("_Z12nwLowerRightPiPKiiiii", 2 * tiles - 1 - d, [width, d, tiles, penalty])
                 for d in range(tiles, 2 * tiles - 1)]
    for kernel, grid, scalars in launches:
        hybrid = ptxc.launch(module, kernel, grid=grid, block=16, args=[score, sim, *scalars],
                             mode="hybrid")
        full = ptxc.launch(module, kernel, grid=grid, block=16, args=[score, sim, *scalars],
                           mode="full")
        assert hybrid.counters() == full.counters()
    assert (score == want).all()
