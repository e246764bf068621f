"""Error injection on one kernel launch: ``ptxc.inject.campaign(jobs=,
dask=)`` and ``ptxc inject FILE.ptx`` (docs/inject.md, "One kernel launch").

The kernels are nvcc's PTX, committed with their sources and commands:
tests/cuda_apps/inject_poly.cu (inject_poly.sm90.ptx, `nvcc -ptx -arch=sm_90
-O3`) and tests/cuda/inject_vec.cu (inject_vec.sm90.ptx, the same command).
Expected classes are hand-derived (test_inject.HAND and the comments here) or
the independent interpreter's (tests/inject_model.py, via
test_inject.poly_expected); none is copied from a ptxc run.
"""
from __future__ import annotations

import sqlite3
import subprocess

import numpy as np
import pytest
from click.testing import CliRunner
from test_inject import HAND, MAX_STEPS, POLY_CU, POLY_PTX, VEC_PTX, poly_args, poly_expected

import app_harness as H

import ptxc
import ptxc.inject as inj
from ptxc.inject import sites as inject_sites
from ptxc.cli.main import cli

POLY_LAUNCH = ["--kernel", "poly", "--block", "1", "--arg", "0=zeros:u32:1", "--arg", "1=2",
               "--max-steps", str(MAX_STEPS)]
VEC_LAUNCH = ["--kernel", "vec4", "--grid", "1", "--block", "2", "--arg", "0=zeros:f32:2x4",
              "--arg", "1=1.5"]


def _campaign(jobs, **kw):
    return inj.campaign(ptxc.load(POLY_PTX), "poly", 1, 1, poly_args(), max_steps=MAX_STEPS,
                        jobs=jobs, **kw)


# ----------------------------------------------------------- jobs / dask
def test_hand_derived_sites_in_worker_processes():
    """test_inject.HAND's sites (each class derived by hand there) as one
    campaign in 2 processes: each outcome in site order."""
    sites = [inject_sites.Site("register", 0, 0, 0, k, b) for k, b, _ in HAND]
    c = _campaign(2, sites=sites)
    assert [o["site"] for o in c.outcomes] == [s.text() for s in sites]
    assert [o["outcome"] for o in c.outcomes] == [want for _, _, want in HAND]
    assert all(o["flipped"] and o["launch"] == 0 for o in c.outcomes)


@pytest.mark.parametrize("target", ["register", "predicate"])
def test_jobs_1_and_2_give_identical_campaigns(target):
    """The same seed in one process and in two: the same sites, records and
    table; every class is the model's."""
    one = _campaign(1, runs=16, seed=5, target=target)
    two = _campaign(2, runs=16, seed=5, target=target)
    assert one.outcomes == two.outcomes and one.text() == two.text()
    for o in one.outcomes:
        s = inject_sites.parse_site(o["site"])
        assert o["outcome"] == poly_expected(target, s.instance, s.rand % o["bits"])


def test_vector_store_every_memory_site_in_processes():
    """vec4, 2 threads, one st.global.v4.f32 each: 2 x 128 memory sites. A
    flip of a stored bit changes that bit of the output and nothing else
    (no later instruction reads it): every site is an SDC, bit = rand."""
    args = [np.zeros((2, 4), np.float32), np.float32(1.5)]
    sites = [inject_sites.Site("memory", 0, 0, t, 0, b) for t in range(2) for b in range(128)]
    c = inj.campaign(ptxc.load(VEC_PTX), "vec4", 1, 2, args, sites=sites, jobs=2)
    assert c.space == 2
    assert [o["outcome"] for o in c.outcomes] == ["sdc"] * 256
    assert [o["bit"] for o in c.outcomes] == [b for _ in range(2) for b in range(128)]
    assert not args[0].any()          # the caller's arrays are never written


def test_jobs_must_be_positive():
    with pytest.raises(ptxc.errors.PtxcError, match="jobs must be at least 1"):
        _campaign(0, runs=1)


def test_dask_gives_the_same_outcomes():
    """A LocalCluster of one worker process with two threads (the module's
    text, the arguments and the check lambda are pickled; launches in one
    process take turns) gives jobs=1's records, the app check included
    (s(2) = 10: PASS exactly when the output is the golden one)."""
    distributed = pytest.importorskip("distributed")
    check = lambda arrays: int(arrays[0][0]) == 10        # noqa: E731
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        got = _campaign(None, runs=8, seed=3, dask=client, check=check)
    assert got.outcomes == _campaign(1, runs=8, seed=3, check=check).outcomes
    assert [o["app_check"] for o in got.outcomes] == \
        [None if o["outcome"] == "due" else "PASS" if o["outcome"] == "masked" else "FAIL"
         for o in got.outcomes]


# ------------------------------------------------------------------- CLI
def _inject(*argv):
    r = CliRunner().invoke(cli, ["inject", *map(str, argv)], catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def test_cli_memory_campaign_table_by_hand(tmp_path):
    """poly's only store writes s(2) = 10: a flip of any of its 32 bits
    changes the output, so 5 of 5 runs are SDCs. Wilson at n = 5, z = 1.96:
    x = 0 gives hi = (1.9207 + 1.96 * 0.98) / 8.8415 = 43.4%, x = 5 lo = 56.6%.
    The report: space 17 / 1 / 3 (test_inject.test_poly_space_by_hand)."""
    db = tmp_path / "r.sqlite"
    code, out, err = _inject(*POLY_LAUNCH, "--target", "memory", "--runs", 5, "--report", db,
                             POLY_PTX)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "injection space (memory): 1 dynamic instructions in 1 launch of poly; " \
                       "5 runs, seed 0"
    row = "5 0 0.0 [ 0.0, 43.4] 5 100.0 [ 56.6,100.0] 0 0.0 [ 0.0, 43.4]"
    assert [" ".join(ln.split()) for ln in lines[3:5]] == ["poly " + row, "all " + row]
    assert "injected launches" in err
    con = sqlite3.connect(db)
    assert con.execute("SELECT target, threads, instances FROM inject_space ORDER BY target")\
        .fetchall() == [("memory", 1, 1), ("predicate", 1, 3), ("register", 1, 17)]
    assert con.execute("SELECT outcome, launch, line, opcode FROM inject_runs").fetchall() == \
        [("sdc", 0, 50, "st.global.u32")] * 5
    assert con.execute("SELECT sdc, runs FROM inject_summary WHERE kernel = 'all'").fetchone() \
        == (5.0, 5.0)


@pytest.mark.parametrize("site,line", [
    ("register/0/0/0/1/1", "SDC; flipped bit 1 of line 26 (ld.param.u32)"),       # n = 0: s = 1
    ("register/0/0/0/16/2", "DUE ("),                   # the store address + 4: out of bounds
    ("register/0/0/0/2/5", "MASKED; flipped bit 5 of line 28 (mov.u32)"),      # dead mov %r16
])
def test_cli_replay_by_hand(site, line):
    code, out, err = _inject(*POLY_LAUNCH, "--replay", site, POLY_PTX)
    assert code == 0, err
    assert out.startswith(f"site {site}: {line}") and len(out.splitlines()) == 1


def test_cli_same_seed_and_any_jobs_same_output():
    base = [*POLY_LAUNCH, "--runs", 12, "--seed", 4]
    a, b = _inject(*base, "--jobs", 1, POLY_PTX), _inject(*base, "--jobs", 2, POLY_PTX)
    c = _inject(*POLY_LAUNCH, "--runs", 12, "--seed", 5, POLY_PTX)
    assert a[0] == b[0] == c[0] == 0
    assert a[1] == b[1] and a[1] != c[1]


def test_cli_grid_and_vector_kernel():
    """vec4 on 2 threads: one store each, 2 memory instances; every flip of a
    stored bit is an SDC (see test_vector_store_every_memory_site_in_processes).
    Wilson at n = 6: x = 0 gives hi = (1.9207 + 1.96 * 0.98) / 9.8415 = 39.0%."""
    code, out, err = _inject(*VEC_LAUNCH, "--target", "memory", "--runs", 6, VEC_PTX)
    assert code == 0, err
    assert out.startswith("injection space (memory): 2 dynamic instructions in 1 launch of vec4")
    assert " ".join(out.splitlines()[4].split()) == \
        "all 6 0 0.0 [ 0.0, 39.0] 6 100.0 [ 61.0,100.0] 0 0.0 [ 0.0, 39.0]"


@pytest.mark.parametrize("argv,code,message", [
    (["--output", "x", *POLY_LAUNCH, POLY_PTX], 2, "--output: for an application"),
    (["--timeout", "3", *POLY_LAUNCH, POLY_PTX], 2, "--timeout: for an application"),
    ([*POLY_LAUNCH, POLY_PTX, "x"], 2, "takes one FILE.ptx"),
    ([*POLY_LAUNCH, "--replay", "register/1/0/0/0/0", POLY_PTX], 1,
     "ptxc: error: site register/1/0/0/0/0: a campaign on one launch has launch 0 only"),
    (["--block", "1", POLY_PTX], 1, "missing argument for parameter 0 'poly_param_0'"),
])
def test_cli_errors(argv, code, message):
    got, out, err = _inject(*argv)
    assert got == code and message in err and "Traceback" not in err + out


def _runs(db):
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT site, outcome, flipped, line, opcode, bit FROM inject_runs "
                           "ORDER BY run").fetchall()
    finally:
        con.close()


def test_launch_campaign_is_the_applications(tmp_path):
    """inject_poly makes exactly this launch (poly<<<1, 1>>>(d, 2)) and writes
    only s to out.txt: the application campaign (nvcc at test time, skipped
    without it) and the launch campaign draw the same sites from the same
    space and give each the same class."""
    if H.find_nvcc() is None:
        pytest.skip("nvcc not found: the application needs it")
    why = H.runtime_missing()
    if why:
        pytest.skip(why)
    exe = H.build(POLY_CU, tmp_path)
    opts = ["--runs", "6", "--seed", "5", "--max-steps", str(MAX_STEPS)]
    proc = subprocess.run([H.find_ptxc(), "inject", *opts, "--output", "out.txt", "--ptx",
                           str(POLY_PTX), "--report", str(tmp_path / "app.sqlite"), "--",
                           str(exe), "2", "out.txt"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    code, out, err = _inject(*POLY_LAUNCH, "--runs", 6, "--seed", 5, "--report",
                             tmp_path / "launch.sqlite", POLY_PTX)
    assert code == 0, err
    assert _runs(tmp_path / "app.sqlite") == _runs(tmp_path / "launch.sqlite")
    assert out.splitlines()[1:] == proc.stdout.splitlines()[1:]
