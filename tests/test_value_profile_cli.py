"""--value-profile on the command line (ptxc opt / profile / run) and in
ptxc run's report (docs/value-profile.md). Kernels: tests/value_profile
(README there); apps: tests/apps (built with nvcc at test time, skipped
without it). Expected values are derived by hand in the comments.
"""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import app_harness as H
import ptxc
from ptxc.cli.main import cli
from ptxc.runtime import report
from ptxc.runtime.server import LaunchRecord

HERE = Path(__file__).resolve().parent
PTX = str(HERE / "value_profile" / "valueprof.sm90.ptx")
APPS = HERE / "apps"
MASK_LAUNCH = ["--kernel", "vp_mask", "--grid", "1", "--block", "256", "--arg", "0=zeros:u32:256"]


def invoke(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


# ------------------------------------------------------------ ptxc opt
def test_opt_prints_the_table_after_the_counts():
    r = invoke("opt", "--pass=count", "--value-profile", *MASK_LAUNCH, PTX)
    assert r.exit_code == 0, r.output
    counts, _, table = r.output.partition("value profile of vp_mask")
    assert "inst_executed" in counts
    # and.b32 of tid & 0xF0 over 256 threads: 8 warp writes, none scalar
    line = next(ln for ln in table.splitlines() if "and.b32" in ln)
    assert line.split()[-2:] == ["0/8", "0" * 24 + "TTTT0000"]
    assert "constant register bits" in table and "scalar writes" in table


def test_opt_csv_and_json():
    r = invoke("opt", "--pass=count{csv=values}", "--format=csv", "--value-profile", *MASK_LAUNCH, PTX)
    rows = [ln.split(",") for ln in r.output.splitlines()]
    assert rows[0][:7] == ["function", "index", "line", "opcode", "register", "bits", "mask"]
    and_row = next(x for x in rows if x[3] == "and.b32")
    assert and_row[6:] == ["0" * 24 + "TTTT0000", "28", "0", "8", "256", ""]   # no .loc: no source
    r = invoke("opt", "--pass=count", "--format=json", "--value-profile", *MASK_LAUNCH, PTX)
    dyn = json.loads(r.output)["count"]["functions"]["vp_mask"]["dynamic"]
    assert dyn["mode"] == "full" and dyn["value_profile"]["summary"]["writes"] == 6 * 8


def test_opt_refuses_hybrid_and_no_launch():
    r = invoke("opt", "--pass=count", "--value-profile", "--mode", "hybrid", *MASK_LAUNCH, PTX)
    assert r.exit_code == 2 and "--value-profile needs --mode full" in r.output
    r = invoke("opt", "--pass=count", "--value-profile", PTX)
    assert r.exit_code == 2 and "--value-profile" in r.output


# ------------------------------------------------------------ ptxc profile
def test_profile_summary_per_kernel(tmp_path):
    db = tmp_path / "p.sqlite"
    r = invoke("profile", "--value-profile", "--kernel", "vp_scalar", "--launch", "vp_scalar:3:64",
               "--arg", "vp_scalar:0=zeros:u32:192", "--report", str(db), PTX)
    assert r.exit_code == 0, r.output
    assert "full runs" in r.output and "value profile (docs/value-profile.md):" in r.output
    # vp_scalar, 3 CTAs of 64 threads (6 warp writes per instruction):
    # 9 registers; scalar: %rd1, %rd2, %r1 (ctaid), %r2 (ctaid*4), %r3
    # (ntid) -> 5 of 9 = 55.56 %, 30 of 54 writes.
    assert "registers written            9 (416 bits), 54 warp-level writes, 30 scalar" in r.output
    assert "static   55.56%" in r.output
    con = sqlite3.connect(db)
    assert con.execute("SELECT kernel, registers, writes, scalar_writes FROM value_profile").fetchall() \
        == [("vp_scalar", 9, 54, 30)]
    assert con.execute("SELECT mask FROM value_profile_instructions WHERE opcode = 'shl.b32'").fetchall() \
        == [("0" * 28 + "TT00",)]
    r = invoke("profile", "--value-profile", "--mode", "hybrid", PTX)
    assert r.exit_code == 2 and "needs --mode full" in r.output
    r = invoke("profile", "--value-profile", PTX, PTX)
    assert r.exit_code == 2 and "one module at a time" in r.output


# ------------------------------------------------------------ ptxc run's report
@pytest.fixture(scope="module")
def records():
    """Two launches of vp_scalar (1 CTA, then 3 CTAs of 64 threads)."""
    m = ptxc.load(PTX)
    out = []
    for i, grid in enumerate((1, 3)):
        p = ptxc.launch(m, "vp_scalar", grid, 64, [np.zeros(64 * grid, np.uint32)], mode="full",
                        value_profile=True)
        out.append(LaunchRecord(i + 1, "vp_scalar", "fatbin1", (grid, 1, 1), (64, 1, 1), 0, 0,
                                "full", p, 0.01, 0.001))
    return out


def test_report_merges_the_launches(records, tmp_path):
    # shl.b32 (blockIdx.x * 4): 0 in the first launch, 0/4/8 in the second:
    # merged mask ...TT00, 2 + 6 = 8 writes, all scalar.
    path = tmp_path / "r.sqlite"
    report.write_sqlite(str(path), records, {"pid": 1})
    db = sqlite3.connect(path)
    (launches, static_scalar, writes, scalar), = db.execute(
        'SELECT launches, static_scalar_pct, writes, scalar_writes FROM value_profile').fetchall()
    # 9 registers x (2 + 6) warp writes; 5 registers always scalar (above)
    assert (launches, writes, scalar) == (2, 72, 40) and static_scalar == pytest.approx(100 * 5 / 9, abs=1e-3)
    shl = db.execute("SELECT mask, writes, scalar_writes, lanes FROM value_profile_instructions "
                     "WHERE opcode = 'shl.b32'").fetchall()
    assert shl == [("0" * 28 + "TT00", 8, 8, 256)]
    cols = [r[1] for r in db.execute('PRAGMA table_info("kernels")')]
    assert "vp_dynamic_scalar_pct" in cols
    text = report.summary_text(records, {"pid": 1})
    assert "==1== Value profile" in text and "72 warp-level writes, 40 scalar" in text
    doc = json.loads(report.summary_json(records, {"pid": 1}))
    assert doc["value_profile"][0]["summary"]["writes"] == 72
    assert report.summary_csv(records, {}).splitlines()[0].endswith("vp_dynamic_scalar_pct")


def test_report_without_value_profile_is_unchanged(tmp_path):
    m = ptxc.load(PTX)
    p = ptxc.launch(m, "vp_scalar", 1, 64, [np.zeros(64, np.uint32)], mode="full")
    rec = [LaunchRecord(1, "vp_scalar", "f", (1, 1, 1), (64, 1, 1), 0, 0, "full", p, 0.0, 0.0)]
    path = tmp_path / "r.sqlite"
    report.write_sqlite(str(path), rec, {})
    tables = {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    assert "value_profile" not in tables
    assert "vp_static" not in report.summary_csv(rec, {}).splitlines()[0]
    assert "Value profile" not in report.summary_text(rec, {})


# ------------------------------------------------------------ ptxc run on apps
@pytest.fixture(scope="module")
def built(tmp_path_factory):
    sources = [APPS / "vectorAdd" / "vectorAdd.cu", APPS / "reduction" / "reduction.cu"]
    return H.build_for_tests(sources, tmp_path_factory, "vp-apps")


@pytest.mark.parametrize("name", ["vectorAdd", "reduction"])
def test_run_value_profile_on_apps(built, tmp_path, name):
    runs = {}
    for label, extra in (("vp", ["--value-profile"]), ("plain", [])):
        cwd = tmp_path / label
        cwd.mkdir()
        runs[label] = H.run(built[name], [], "full", cwd / "r.sqlite", cwd, extra=extra)
        assert runs[label].passed(), runs[label].stderr[-2000:]
    vp, plain = (H.read_report(runs[k].report) for k in ("vp", "plain"))
    # profiling changes no counter of any launch
    drop = ("wall_s", "compile_s", "run_s")
    assert [{k: v for k, v in r.items() if k not in drop} for r in vp.launches] == \
        [{k: v for k, v in r.items() if k not in drop} for r in plain.launches]
    db = sqlite3.connect(runs["vp"].report)
    kernels = {r[0] for r in db.execute("SELECT kernel FROM launches")}
    summary = db.execute("SELECT kernel, static_const_bits_pct, dynamic_scalar_pct "
                         "FROM value_profile").fetchall()
    assert {k for k, *_ in summary} == kernels
    assert all(0 <= a <= 100 and 0 <= b <= 100 for _, a, b in summary)
    if name == "vectorAdd":
        # 20 CTAs of 256 threads, n = 5000: i = blockDim.x * blockIdx.x + tid
        # takes 0..5119 (bits 12..0 vary) in 160 warps, none scalar; i >= n
        # is mixed only in warp 156 (threads 4992..5023): 159 scalar writes;
        # i * 4 (mul.wide) for the 5000 threads below n: bits 14..2 vary.
        rows = {r[0]: r[1:] for r in db.execute(
            "SELECT opcode, mask, scalar_writes, writes, lanes FROM value_profile_instructions "
            "WHERE opcode IN ('mad.lo.s32', 'setp.ge.s32', 'mul.wide.s32')")}
        assert rows["mad.lo.s32"] == ("0" * 19 + "T" * 13, 0, 160, 5120)
        assert rows["setp.ge.s32"] == ("T", 159, 160, 5120)
        assert rows["mul.wide.s32"] == ("0" * 49 + "T" * 13 + "00", 0, 157, 5000)
