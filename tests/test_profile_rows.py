"""Rows of ``ptxc profile`` beyond inferred launches (ptxc/profile/module_profile.py,
ptxc/launcher/launch_file.py, docs/profile.md): per-CTA rows, launch files (JSON and
CSV), --zero-fill, the launch-source order, bad launch files.

Kernels: tests/cuda/profile_rows.cu, compiled by
    nvcc -ptx -arch=sm_90 -O3 profile_rows.cu -o profile_rows.sm90.ptx
(nvcc 13.0; committed, so no nvcc is needed). Every expected counter below is
derived by hand from that PTX; the derivation is next to the numbers.
Warp counts: a CTA of B threads has ceil(B/32) warps; an instruction counts
once per warp that executes it (inst_executed) and once per thread
(thread_inst_executed); a bra counts one branch per warp, divergent when
the warp's threads go both ways (METRICS.md).
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import ptxc
from corpus import CORPUS
from ptxc.cli.main import cli
from ptxc.launcher.launch_file import load_launches
from ptxc.profile.module_profile import (DEFAULT_BLOCK, FAILED, ONE_CTA, RAN, SKIPPED,
                                         profile_module)
from ptxc.profile.module_render import render_csv, render_text, to_dict

HERE = Path(__file__).resolve().parent
ROWS_PTX = HERE / "cuda" / "profile_rows.sm90.ptx"
XLA = CORPUS / "xla" / "module_0000.ptx"
needs_xla = pytest.mark.skipif(not XLA.exists(), reason=f"XLA corpus module not found at {XLA}")


@pytest.fixture(scope="module")
def rows_module():
    return ptxc.load(str(ROWS_PTX))


def one(mp, name):
    return next(r for r in mp.rows if r.kernel == name)


def counts(p):
    return (p.inst_executed, p.thread_inst_executed, p.branch, p.divergent_branch)


# ------------------------------------------------------------ per-CTA rows
# exact_fit (PTX lines 29-48, .reqntid 64), no bound check of its index:
#   entry  ld.param x2, mov %tid.x, setp.gt.u32 tid > 39, @p bra   = 5 instructions
#   body   cvta, mov, shl, add, mul.wide, add, ld, mul.f32, cvta, add, st = 11
#   exit   ret                                                      = 1
# One CTA = 64 threads = 2 warps. Warp 0 (tid 0..31): all tid <= 39, all run
# the body; warp 1 (32..63): tids 32..39 run it (8 threads), the rest skip.
#   inst_executed = 2*5 + 2*11 + 2*1 = 34
#   thread_inst   = 64*5 + 40*11 + 64*1 = 824
#   branch = 2 (one bra per warp), divergent = 1 (warp 1); flop_count_sp = 40 mul.f32
EXACT_FIT_CTA = (34, 824, 2, 1)
# max_only (lines 61-70, .maxntid 96 only): 10 instructions, no branch; the
# block is .maxntid = 96 threads = 3 warps: inst = 30, thread_inst = 960.
MAX_ONLY_CTA = (30, 960, 0, 0)


@pytest.mark.parametrize("mode", ["hybrid", "full"])
def test_per_cta_rows_by_hand(rows_module, mode):
    mp = profile_module(rows_module, mode=mode, kernels=["exact_fit", "max_only"])
    fit, mx = one(mp, "exact_fit"), one(mp, "max_only")
    assert fit.status == RAN and fit.source == ONE_CTA and fit.per_cta
    assert (fit.grid, fit.block, fit.block_from) == ((1, 1, 1), (64, 1, 1), ".reqntid")
    assert counts(fit.profile) == EXACT_FIT_CTA and fit.profile.flop_count_sp == 40
    assert "never compared with a constant" in fit.no_launch and not fit.reads_nctaid
    assert (mx.grid, mx.block, mx.block_from) == ((1, 1, 1), (96, 1, 1), ".maxntid")
    assert counts(mx.profile) == MAX_ONLY_CTA
    t = mp.total()
    assert (t["per_cta_rows"], t["zero_filled_rows"], t["kernels_run"]) == (2, 0, 2)
    assert t["inst_executed"] == 34 + 30 and t["threads"] == 64 + 96


def test_per_cta_row_is_cta_zero_of_any_launch(rows_module):
    """exact_fit never reads %nctaid and its branch depends on %tid.x only,
    so CTA (0,0,0) of a one-CTA grid is a third of a 3-CTA launch: the
    per-CTA row is not scaled, and a given grid gives 3x its counters."""
    mp = profile_module(rows_module, launches={"exact_fit": (3, None)}, kernels=["exact_fit"])
    assert counts(mp.rows[0].profile) == tuple(3 * c for c in EXACT_FIT_CTA)


# no_bounds (no .reqntid, no .maxntid, no bound check): 11 straight-line
# instructions (ld.param, cvta, mov x3, mad, mul.wide, add, mov, st, ret), no
# bra. With no block known, its one-CTA row runs the documented default block
# of 256 threads = 8 warps: inst_executed = 8*11 = 88, thread_inst = 256*11 =
# 2816, no branch.
@pytest.mark.parametrize("mode", ["hybrid", "full"])
def test_no_reqntid_no_maxntid_runs_the_default_block(rows_module, mode):
    mp = profile_module(rows_module, kernels=["no_bounds"], mode=mode)
    (row,) = mp.rows
    assert row.status == RAN and row.source == ONE_CTA
    assert row.grid == (1, 1, 1) and row.block == DEFAULT_BLOCK == (256, 1, 1)
    assert counts(row.profile) == (88, 2816, 0, 0)
    assert row.block_from == "default (no .reqntid or .maxntid)"
    text = render_text(mp)
    assert "no_bounds: block default (no .reqntid or .maxntid) 256x1x1;" in text
    launch = to_dict(mp)["kernels"][0]["launch"]
    assert launch["block_from"] == "default (no .reqntid or .maxntid)" and launch["per_cta"]


# vadd (tests/cuda/profile_no_block.cu): no .reqntid or .maxntid and a bound
# check against the scalar n (parameter 3): its control flow reads a value the
# PTX does not hold, so even a one-CTA row cannot run. The row keeps no launch
# (no grid, block or one-CTA note of ptxc's own), and a total over no measured
# kernel shows no efficiency.
def test_not_launched_row_keeps_no_one_cta_launch():
    mp = profile_module(ptxc.load(str(HERE / "cuda" / "profile_no_block.sm90.ptx")))
    (row,) = mp.rows
    assert row.status == SKIPPED and row.profile is None
    assert row.reason == ("its control flow reads data the PTX does not hold: "
                          "give --arg vadd:param_3=...")
    assert (row.grid, row.block, row.source, row.per_cta) == (None, None, "", False)
    k = to_dict(mp)["kernels"][0]
    assert k["launch"]["source"] == "" and k["launch"]["grid"] is None
    assert k["launch"]["per_cta"] is False and k["launch"]["one_cta"] is None
    t = to_dict(mp)["total"]
    assert t["kernels_run"] == 0 and t["branch_efficiency"] is None
    assert t["warp_execution_efficiency"] is None
    lines = render_text(mp).splitlines()
    assert lines[2].split() == ["vadd", "not", "launched"]
    assert lines[3].split()[-6:] == ["0", "0", "-", "0", "0", "0.0"]


def test_per_cta_false_keeps_the_old_rows(rows_module):
    mp = profile_module(rows_module, kernels=["exact_fit"], per_cta=False)
    assert mp.rows[0].status == SKIPPED and "never compared" in mp.rows[0].reason


def test_grid_stride_per_cta_row_says_it_reads_nctaid():
    m = ptxc.load(str(HERE / "cuda" / "launch_infer.sm90.ptx"))
    mp = profile_module(m, kernels=["grid_stride"])
    assert mp.rows[0].per_cta and mp.rows[0].reads_nctaid
    assert "reads %nctaid, which is 1 here" in render_text(mp)


def test_reports_label_per_cta_rows(rows_module):
    mp = profile_module(rows_module, kernels=["exact_fit", "guarded"])
    text = render_text(mp)
    assert "total (2 of 2 ran, 1 per-CTA rows: counters of one CTA)" in text
    assert "per-CTA rows (1): no launch known, so each ran one CTA, (0,0,0)" in text
    assert "not scaled to a launch" in text
    rows = {r["kernel"]: r for r in csv.DictReader(io.StringIO(render_csv(mp)))}
    assert rows["exact_fit"]["launch"] == "one CTA: grid unknown"
    assert rows["exact_fit"]["note"].startswith("counters of one CTA, (0,0,0) of a 1x1x1 grid")
    assert rows["(module total)"]["status"] == "2 of 2 ran, 1 per-CTA rows: counters of one CTA"
    d = to_dict(mp)
    k = next(k for k in d["kernels"] if k["kernel"] == "exact_fit")
    assert k["launch"]["source"] == "one CTA: grid unknown" and k["launch"]["per_cta"] is True
    assert k["launch"]["one_cta"]["cta"] == [0, 0, 0] and k["launch"]["block_from"] == ".reqntid"
    assert d["total"]["per_cta_rows"] == 1
    g = next(k for k in d["kernels"] if k["kernel"] == "guarded")
    assert g["launch"]["per_cta"] is False and g["launch"]["one_cta"] is None


# ---------------------------------------------------------------- zero-fill
# data_branch (lines 174-195, .reqntid 32): the branch reads flags[i].
#   entry  ld.param x2, cvta, mov, shl, mov, add, cvt, mul.wide, add, ld, setp.eq, @p bra = 13
#   body   cvta, shl, add, mov, st = 5;  exit ret = 1
# Zero-filled flags: every flags[i] == 0, setp.eq is true, all 32 threads (1
# warp) branch to ret: inst = 13 + 1 = 14, thread_inst = 32*14 = 448,
# branch 1, divergent 0.
DATA_BRANCH_ZEROS = (14, 448, 1, 0)
# Given flags with flags[i] = 1 for i < 10: threads 0..9 run the body:
# inst = 13 + 5 + 1 = 19, thread_inst = 32*13 + 10*5 + 32 = 498, branch 1, divergent 1.
DATA_BRANCH_TEN = (19, 498, 1, 1)


@pytest.mark.parametrize("mode", ["hybrid", "full"])
def test_zero_fill_by_hand(rows_module, mode):
    mp = profile_module(rows_module, mode=mode, kernels=["data_branch"], zero_fill=True)
    (row,) = mp.rows
    assert row.status == RAN and row.per_cta and row.zero_filled == ["data_branch_param_1"]
    assert row.inputs == "zero-filled" and counts(row.profile) == DATA_BRANCH_ZEROS
    assert mp.total()["zero_filled_rows"] == 1


def test_without_zero_fill_the_row_names_the_arg(rows_module):
    (row,) = profile_module(rows_module, kernels=["data_branch"]).rows
    assert row.status == SKIPPED
    assert row.reason == ("its control flow reads data the PTX does not hold: give "
                          "--arg data_branch:param_1=... (or --zero-fill for param_1)")


def test_given_memory_wins_over_zero_fill(rows_module):
    flags = np.zeros(32, np.int32)
    flags[:10] = 1
    mp = profile_module(rows_module, args={"data_branch": {1: flags}}, kernels=["data_branch"],
                        zero_fill=True)
    (row,) = mp.rows
    assert row.zero_filled == [] and counts(row.profile) == DATA_BRANCH_TEN


# mixed (lines 213-238): n (a scalar) and flags[i] (memory) decide.
#   entry ld.param x3, mov, shl, mov, add, setp.ge i >= n, @p bra = 9
#   mid   cvta, cvt, mul.wide, add, ld, setp.eq, @p bra = 7; body 5; ret 1
# n = 40, one CTA of 32: all i < 40 reach the load, flags are 0, all skip
# the body: inst = 9 + 7 + 1 = 17, thread_inst = 32*17 = 544, branch 2, divergent 0.
def test_zero_fill_is_memory_only(rows_module):
    (row,) = profile_module(rows_module, kernels=["mixed"], zero_fill=True).rows
    assert row.status == SKIPPED and row.reason.endswith("give --arg mixed:param_2=...")
    (row,) = profile_module(rows_module, kernels=["mixed"], zero_fill=True,
                            args={"mixed": ["param_2=40"]}).rows
    assert row.zero_filled == ["mixed_param_1"] and counts(row.profile) == (17, 544, 2, 0)


def test_zero_fill_reports(rows_module):
    mp = profile_module(rows_module, kernels=["data_branch"], zero_fill=True)
    text = render_text(mp)
    assert "one CTA (zeros)" in text
    assert "zero-filled inputs (1):" in text and "  data_branch: data_branch_param_1" in text
    assert "1 on zero-filled inputs" in text
    rows = csv.DictReader(io.StringIO(render_csv(mp)))
    (row,) = [r for r in rows if r["kernel"] == "data_branch"]
    assert row["inputs"] == "zero-filled: data_branch_param_1"
    (k,) = to_dict(mp)["kernels"]
    assert k["launch"]["inputs"] == "zero-filled"
    assert k["launch"]["zero_filled"] == ["data_branch_param_1"]


# ------------------------------------------------------------ launch files
# bounded (lines 141-157, .reqntid 32): i = 32*ctaid + tid, body while i < n.
#   entry ld.param x2, mov, shl, mov, add, setp.ge, @p bra = 8; body cvta,
#   mul.wide, add, cvt, st = 5; ret 1.
# grid 4, n = 100: 128 threads, 4 warps; warps 0-2 all in bounds, warp 3
# only 96..99 (4 threads).
#   inst = 4*8 + 4*5 + 4 = 56; thread_inst = 128*8 + 100*5 + 128 = 1652;
#   branch 4, divergent 1 (warp 3).
BOUNDED_4_100 = (56, 1652, 4, 1)
# n = 40 (an --arg over the file's n = 100): warp 0 all, warp 1 8 threads:
#   inst = 32 + 2*5 + 4 = 46; thread_inst = 1024 + 40*5 + 128 = 1352; branch 4, divergent 1.
BOUNDED_4_40 = (46, 1352, 4, 1)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_json_launch_file_by_hand(rows_module, tmp_path):
    """exact_fit with grid [3]: three CTAs like the per-CTA row's (see
    test_per_cta_row_is_cta_zero_of_any_launch); bounded with n (param_1) = 100."""
    path = write(tmp_path, "l.json", json.dumps([
        {"kernel": "exact_fit", "grid": [3, 1, 1], "block": [64, 1, 1]},
        {"kernel": "bounded", "grid": 4, "args": {"param_1": 100}}]))
    for mode in ("hybrid", "full"):
        mp = profile_module(rows_module, mode=mode, launch_file=path,
                            kernels=["exact_fit", "bounded"])
        fit, bnd = one(mp, "exact_fit"), one(mp, "bounded")
        assert (fit.source, fit.grid, fit.where) == ("file", (3, 1, 1), f"{path} $[0]")
        assert counts(fit.profile) == tuple(3 * c for c in EXACT_FIT_CTA)
        assert (bnd.source, bnd.grid, bnd.block, bnd.block_from) == ("file", (4, 1, 1),
                                                                     (32, 1, 1), ".reqntid")
        assert counts(bnd.profile) == BOUNDED_4_100
        assert mp.total()["per_cta_rows"] == 0


def test_json_object_keyed_by_kernel(rows_module, tmp_path):
    path = write(tmp_path, "l.json", '{"bounded": {"grid": [4], "args": {"1": "100"}}}')
    (row,) = profile_module(rows_module, launch_file=path, kernels=["bounded"]).rows
    assert row.where == f"{path} $.bounded" and counts(row.profile) == BOUNDED_4_100


def test_csv_launch_file_by_hand(rows_module, tmp_path):
    path = write(tmp_path, "l.csv", "# from my harness\n\nkernel,grid,block,args\n"
                                    "bounded,4x1x1,32,param_1=100\n")
    for mode in ("hybrid", "full"):
        (row,) = profile_module(rows_module, mode=mode, launch_file=path, kernels=["bounded"]).rows
        assert (row.source, row.where, row.grid, row.block) == ("file", f"{path}:4", (4, 1, 1),
                                                                (32, 1, 1))
        assert row.block_from == "" and counts(row.profile) == BOUNDED_4_100


def test_csv_launch_file_with_a_buffer(rows_module, tmp_path):
    """An @file.npy argument is read relative to the launch file; the
    data_branch counts with flags[i] = 1 for i < 10 (DATA_BRANCH_TEN)."""
    flags = np.zeros(32, np.int32)
    flags[:10] = 1
    np.save(tmp_path / "flags.npy", flags)
    path = write(tmp_path, "l.csv", "kernel,grid,args\ndata_branch,1,param_1=@flags.npy\n")
    (row,) = profile_module(rows_module, launch_file=path, kernels=["data_branch"]).rows
    assert row.status == RAN and counts(row.profile) == DATA_BRANCH_TEN


# ------------------------------------------------------------- precedence
# guarded (lines 108-123, .reqntid 32): entry ld.param, mov, shl, mov, add,
# setp.gt i > 49, @p bra = 7; body cvta, mul.wide, add, mov, st = 5; ret 1.
#   inferred grid ceil(50/32) = 2: warp 0 all in, warp 1 18 threads:
#     inst = 2*7 + 2*5 + 2 = 26; thread_inst = 64*7 + 50*5 + 64 = 762; branch 2, div 1
#   file grid 1: one warp, all in: inst = 13; thread_inst = 32*13 = 416; branch 1, div 0
#   --launch grid 3: warps 0, 1 as inferred, warp 2 (64..95) out:
#     inst = 3*7 + 2*5 + 3 = 34; thread_inst = 96*7 + 250 + 96 = 1018; branch 3, div 1
def test_launch_over_file_over_inferred(rows_module, tmp_path):
    path = write(tmp_path, "l.csv", "kernel,grid,args\nguarded,1,\nbounded,4,param_1=100\n")
    (row,) = profile_module(rows_module, kernels=["guarded"]).rows
    assert (row.source, counts(row.profile)) == ("inferred", (26, 762, 2, 1))
    (row,) = profile_module(rows_module, kernels=["guarded"], launch_file=path).rows
    assert (row.source, counts(row.profile)) == ("file", (13, 416, 1, 0))
    (row,) = profile_module(rows_module, kernels=["guarded"], launch_file=path,
                            launches={"guarded": (3, None)}).rows
    assert (row.source, counts(row.profile)) == ("explicit", (34, 1018, 3, 1))
    # --arg replaces the file's argument; the file's grid still applies.
    (row,) = profile_module(rows_module, kernels=["bounded"], launch_file=path,
                            args={"bounded": ["param_1=40"]}).rows
    assert (row.source, counts(row.profile)) == ("file", BOUNDED_4_40)


def test_cli_launches_and_zero_fill(tmp_path):
    path = write(tmp_path, "l.json", '{"bounded": {"grid": 4, "args": {"param_1": 100}}}')
    r = CliRunner().invoke(cli, ["profile", "--format=json", "--launches", path, "--zero-fill",
                                 "--launch", "exact_fit:3", str(ROWS_PTX)])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    by = {k["kernel"]: k for k in d["kernels"]}
    assert by["bounded"]["launch"]["source"] == "file"
    assert by["bounded"]["launch"]["file"] == f"{path} $.bounded"
    assert by["bounded"]["profile"]["thread_inst_executed"] == BOUNDED_4_100[1]
    assert by["exact_fit"]["launch"]["source"] == "explicit"
    assert by["data_branch"]["launch"]["inputs"] == "zero-filled"
    assert by["max_only"]["launch"]["source"] == "one CTA: grid unknown"
    assert by["no_bounds"]["launch"]["block_from"] == "default (no .reqntid or .maxntid)"
    assert by["mixed"]["status"] == SKIPPED
    t = d["total"]      # no_bounds: a per-CTA row on the default block
    assert (t["kernels_run"], t["per_cta_rows"], t["zero_filled_rows"]) == (6, 3, 1)


# -------------------------------------------------------- bad launch files
BAD_FILES = [
    ("l.json", '[{"kernel": "guarded", "grid": [2,]}]', "l.json:1:35: error: not valid JSON"),
    ("l.json", "3", "l.json: $: expected a list of launches or an object keyed by kernel name"),
    ("l.json", '[{"kernel": "nosuch", "grid": 1}]', "l.json: $[0]: no kernel named 'nosuch'"),
    ("l.json", '[{"kernel": "guarded", "grid": [0]}]',
     "l.json: $[0].grid: expected a positive integer or a list of 1 to 3, got [0]"),
    ("l.json", '[{"kernel": "guarded"}]', "l.json: $[0]: missing 'grid'"),
    ("l.json", '{"guarded": {"grid": 2, "blok": 32}}', "l.json: $.guarded.blok: unknown key"),
    ("l.json", '{"bounded": {"grid": 2, "args": {"q": 1}}}',
     "l.json: $.bounded.args.q: kernel bounded: no parameter named 'q'"),
    ("l.json", '{"bounded": {"grid": 2, "args": {"param_1": [1]}}}',
     "l.json: $.bounded.args.param_1: expected a number or a string in the --arg syntax"),
    ("l.json", '[{"kernel": "guarded", "grid": 1}, {"kernel": "guarded", "grid": 2}]',
     "l.json: $[1]: kernel 'guarded' already has a launch (TMP/l.json $[0])"),
    ("l.csv", "kernel,block\nguarded,32\n", "l.csv:1:1: error: the header has no 'grid' column"),
    ("l.csv", "kernel,grid,blocks\n", "l.csv:1:1: error: unknown column 'blocks' in the header"),
    ("l.csv", "# c\n\nkernel,grid\nguarded,2x0\n",
     "l.csv:4:1: error: grid '2x0': expected X, XxY or XxYxZ with positive integers"),
    ("l.csv", "kernel,grid\nguarded,2\nnosuch,1\n", "l.csv:3:1: error: no kernel named 'nosuch'"),
    ("l.csv", "kernel,grid,args\nbounded,2,n\n",
     "l.csv:2:1: error: argument 'n' is not NAME=VALUE"),
    ("l.csv", "kernel,grid,args\nbounded,2,param_1=zeros:q32:4\n",
     "l.csv:2:1: error: kernel bounded: unknown element type 'q32'"),
    ("l.csv", "kernel,grid\nguarded,2,32\n", "l.csv:2:1: error: 3 fields, the header has 2"),
    ("l.csv", "", "l.csv: empty launch file"),
]


@pytest.mark.parametrize("name, text, message", BAD_FILES)
def test_bad_launch_files_are_one_line_errors(tmp_path, name, text, message):
    path = write(tmp_path, name, text)
    r = CliRunner().invoke(cli, ["profile", "--launches", path, str(ROWS_PTX)])
    assert r.exit_code == 1, r.output
    out = r.output.strip()
    assert "\n" not in out and "Traceback" not in out, out
    assert message.replace("TMP", str(tmp_path)) in out, out


def test_unreadable_launch_file(tmp_path):
    r = CliRunner().invoke(cli, ["profile", "--launches", str(tmp_path / "none.csv"),
                                 str(ROWS_PTX)])
    assert r.exit_code == 1 and "cannot read launch file" in r.output
    assert r.output.count("\n") == 1


def test_bad_block_in_a_file_is_an_error_row(rows_module, tmp_path):
    """A block the kernel's .reqntid forbids: the row fails (exit 1), like --launch."""
    path = write(tmp_path, "l.csv", "kernel,grid,block\nguarded,2,64\n")
    (row,) = profile_module(rows_module, launch_file=path, kernels=["guarded"]).rows
    assert row.status == FAILED and "requires block" in row.reason


def test_launch_file_api(rows_module, tmp_path):
    path = write(tmp_path, "l.csv", "kernel,grid,block,args\nbounded,4x2,32x1x1,param_1=100 0=0\n")
    entry = load_launches(path, rows_module)["bounded"]
    assert (entry.grid, entry.block, entry.args) == ((4, 2, 1), (32, 1, 1), {1: 100, 0: 0})


# ------------------------------------------------------------- XLA module
@needs_xla
def test_xla_every_kernel_gets_a_row_that_ran():
    """module_0000.ptx: 52 inferred launches; the 57 others (45 exact-fit
    grids, 6 with work before the check, 6 without a bound check) get per-CTA
    rows; fusion_55 reads its buffers in its control flow and runs only with
    --zero-fill."""
    m = ptxc.load(str(XLA))
    mp = profile_module(m)
    assert len(mp.rows) == 109 and len(mp.ran) == 108
    (skipped,) = [r for r in mp.rows if r.status != RAN]
    assert skipped.kernel == "fusion_55" and "--zero-fill" in skipped.reason
    mp = profile_module(m, zero_fill=True)
    assert [r.kernel for r in mp.rows if r.status != RAN] == []
    t = mp.total()
    assert (t["kernels_run"], t["per_cta_rows"], t["zero_filled_rows"]) == (109, 57, 1)
    assert sum(1 for r in mp.rows if r.source == "inferred") == 52
    assert "total (109 of 109 ran, 57 per-CTA rows: counters of one CTA" in render_text(mp)


@needs_xla
def test_xla_per_cta_rows_hybrid_equals_full():
    """Per-CTA rows of a few kernels (an exact-fit fusion, a copy with a load
    before its check, a reduction without a bound check, the one-thread
    add_855, the zero-filled fusion_55): the hybrid run counts what the full
    run executes."""
    m = ptxc.load(str(XLA))
    names = ["fusion_51", "copy_100", "fusion_4", "add_855", "fusion_55"]
    hyb = profile_module(m, kernels=names, zero_fill=True)
    full = profile_module(m, kernels=names, zero_fill=True, mode="full")
    for h, f in zip(hyb.rows, full.rows):
        assert h.status == f.status == RAN and h.per_cta and f.per_cta, (h.kernel, f.reason)
        assert h.grid == (1, 1, 1) and h.block == f.block
        assert h.profile.counters() == f.profile.counters(), h.kernel


def test_zero_buffers_are_never_copied(rows_module):
    """A hybrid run copies a caller's buffer when its slice may store to
    global memory; the 4 GiB zero-filled buffers are ptxc's own (Scratch)
    and are used in place, while an ordinary array is still copied."""
    from types import SimpleNamespace

    from ptxc.launcher.buffers import Scratch, private_buffers
    from ptxc.profile.module_profile import zero_buffer
    fn = rows_module.kernels[0]
    z = zero_buffer(fn)
    a = np.zeros(8, np.uint8)
    assert isinstance(z, Scratch) and z.nbytes == 1 << 32
    bufs = private_buffers(SimpleNamespace(writes_global=True), "hybrid", [z, a], [(z, z), (a, a)])
    assert bufs[0] is z and bufs[1] is not a
