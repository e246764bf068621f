"""Whole-module profiles (ptxc/profile/module_profile.py) and launch inference
(passes/launch_infer.py): grids derived by hand from the PTX, counters derived
by hand for one kernel, hybrid == full for every inferred launch, numpy
outputs, module total == sum of the rows, the command line.

Kernels: tests/cuda/launch_infer.cu (nvcc 13, -arch=sm_90 -O3; __block_size__
gives .reqntid) and the XLA module of the shared corpus (skipped when absent).
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
from ptxc.profile.module_profile import FAILED, RAN, SKIPPED, profile_module
from ptxc.profile.module_render import TOTAL_NAME, render_csv, to_dict
from ptxc.passes.domtree import DomTree
from ptxc.passes.launch_infer import LaunchRefused, infer_launch
from ptxc.ir.passmanager import AnalysisManager

HERE = Path(__file__).resolve().parent
INFER_PTX = HERE / "cuda" / "launch_infer.sm90.ptx"
XLA = CORPUS / "xla" / "module_0000.ptx"
needs_xla = pytest.mark.skipif(not XLA.exists(), reason=f"XLA corpus module not found at {XLA}")


@pytest.fixture(scope="module")
def infer_module():
    return ptxc.load(str(INFER_PTX))


@pytest.fixture(scope="module")
def xla_module():
    return ptxc.load(str(XLA))


def inferred(module, name):
    fn = next(k for k in module.kernels if k.name == name)
    return infer_launch(fn, DomTree.compute(fn, AnalysisManager(module)))


def refusal(module, name) -> str:
    with pytest.raises(LaunchRefused) as e:
        inferred(module, name)
    return e.value.reason


# ------------------------------------------------- inference, by hand
# launch_infer.sm90.ptx, scale_lt (lines 31-36):
#   mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x; mov.u32 %r4, %tid.x;
#   mad.lo.s32 %r1, %r2, %r3, %r4;      index = 128*ctaid + tid (.reqntid 128)
#   setp.gt.u32 %p1, %r1, 999; @%p1 bra $L__BB0_2  ($L__BB0_2: ret)
# in bounds while index <= 999, i.e. < 1000: grid = ceil(1000/128) = 8 (7*128 = 896 < 1000).
# unroll4: shl of the linear id by 2 (index = 256*ctaid + 4*tid, .reqntid 64),
#   setp.gt.u32 %p1, %r1, 3999 -> ret: < 4000, grid = ceil(4000/256) = 16 (exactly).
# wide64: mul.wide.u32 of ctaid by ntid, cvt.u64.u32 of tid, add.s64 (.reqntid 256),
#   setp.gt.u64 %p1, %rd1, 2999 -> ret: < 3000, grid = ceil(3000/256) = 12 (11*256 = 2816).
# signed_idx: mad.lo.s32 (.reqntid 32), setp.gt.s32 %p1, %r1, 776 -> ret:
#   < 777, grid = ceil(777/32) = 25 (24*32 = 768).
HAND_GRIDS = {"scale_lt": (8, 128, 1000, 35), "unroll4": (16, 64, 4000, 73),
              "wide64": (12, 256, 3000, 119), "signed_idx": (25, 32, 777, 150)}


@pytest.mark.parametrize("name", sorted(HAND_GRIDS))
def test_inferred_grid_by_hand(infer_module, name):
    grid, block, bound, line = HAND_GRIDS[name]
    r = inferred(infer_module, name)
    assert (r.grid, r.block, r.bound, r.line) == ((grid, 1, 1), (block, 1, 1), bound, line)
    assert "setp.gt" in r.instruction and str(bound - 1) in r.instruction


@pytest.mark.parametrize("name, reason", [
    ("param_bound", "never compared with a constant"),
    ("grid_stride", "reads %nctaid.x"),
    ("store_first", "runs outside the bound check"),
    ("two_d", "not one-dimensional"),
    ("no_reqntid", "no .reqntid"),
])
def test_refusals_say_why(infer_module, name, reason):
    assert reason in refusal(infer_module, name)


# ---------------------------------------------- counters, by hand
def test_scale_lt_counters_by_hand(infer_module):
    """scale_lt, 8 CTAs x 128 threads = 1024 threads, i < 1000 in bounds.
    Blocks of the PTX: entry (2 ld.param, 3 mov, mad, setp, bra = 8
    instructions, all 1024 threads, 32 warps), body (cvta, mul.wide, add,
    ld, add.f32, cvta, add, st = 8; threads 0..999, warps 0..31 since warp 31
    holds 992..999), exit (ret = 1; all threads, 32 warps).
    thread_inst = 1024*8 + 1000*8 + 1024 = 17216; inst = 32*8 + 32*8 + 32 = 544;
    the bra runs in 32 warps, warp 31 diverges: branch efficiency 31/32;
    flop_count_sp: one add.f32 per in-bounds thread = 1000."""
    for mode in ("hybrid", "full"):
        mp = profile_module(infer_module, mode=mode, kernels=["scale_lt"])
        (row,) = mp.rows
        p = row.profile
        assert row.status == RAN and row.source == "inferred"
        assert (p.thread_inst_executed, p.inst_executed) == (17216, 544)
        assert (p.branch, p.divergent_branch, p.flop_count_sp) == (32, 1, 1000)
        assert p.branch_efficiency == pytest.approx(100 * 31 / 32)


def test_full_run_with_given_buffers_matches_numpy(infer_module):
    inp = np.random.default_rng(3).random(1024).astype(np.float32)
    out = np.zeros(1024, np.float32)
    mp = profile_module(infer_module, args={"scale_lt": {0: out, 1: inp}}, mode="full",
                        kernels=["scale_lt"])
    assert mp.rows[0].status == RAN
    np.testing.assert_array_equal(out[:1000], 2 * inp[:1000])
    assert not out[1000:].any()


def test_hybrid_equals_full_for_every_inferred_launch(infer_module):
    """And for the per-CTA rows of the kernels with no inferred launch."""
    hyb = profile_module(infer_module, mode="hybrid")
    full = profile_module(infer_module, mode="full")
    assert [r.kernel for r in hyb.ran if r.source == "inferred"] == ["scale_lt", "unroll4",
                                                                      "wide64", "signed_idx"]
    assert [r.kernel for r in hyb.ran if r.per_cta] == ["grid_stride", "store_first", "two_d",
                                                        "no_reqntid"]
    for h, f in zip(hyb.rows, full.rows):
        assert (h.kernel, h.status, h.grid) == (f.kernel, f.status, f.grid)
        if h.status == RAN:
            assert h.profile.counters() == f.profile.counters(), h.kernel


def test_control_inputs_need_arguments(infer_module):
    """param_bound's slice reads its parameter n: without it the kernel is
    not launched; with it, it runs (n = 1000 of 1024 threads: like scale_lt's
    bound, one divergent warp)."""
    mp = profile_module(infer_module, launches={"param_bound": (8, None)}, kernels=["param_bound"])
    assert mp.rows[0].status == SKIPPED and "--arg param_bound:param_1=" in mp.rows[0].reason
    mp = profile_module(infer_module, launches={"param_bound": (8, None)},
                        args={"param_bound": ["param_1=1000"]}, kernels=["param_bound"])
    (row,) = mp.rows
    assert row.status == RAN and row.source == "explicit"
    assert (row.profile.branch, row.profile.divergent_branch) == (32, 1)


def test_explicit_launch_wins_over_inference(infer_module):
    mp = profile_module(infer_module, launches={"scale_lt": ((2, 1, 1), None)}, kernels=["scale_lt"])
    assert (mp.rows[0].grid, mp.rows[0].source) == ((2, 1, 1), "explicit")
    assert mp.rows[0].profile.thread_inst_executed == 256 * (8 + 8 + 1)   # all in bounds


def test_run_time_error_is_a_row(infer_module):
    """A buffer too small for the kernel: the full run fails, the row says where."""
    mp = profile_module(infer_module, args={"scale_lt": {0: np.zeros(4, np.float32),
                                                         1: np.zeros(4, np.float32)}},
                        mode="full", kernels=["scale_lt"])
    assert mp.rows[0].status == FAILED and "out-of-bounds" in mp.rows[0].reason


# ------------------------------------------------ totals and formats
def sum_rows(rows, key):
    return sum(float(r[key]) for r in rows if r[key] != "")


def test_csv_total_row_is_the_sum_of_the_rows(infer_module):
    mp = profile_module(infer_module)
    rows = list(csv.DictReader(io.StringIO(render_csv(mp))))
    *kernels, total = rows
    assert total["kernel"] == TOTAL_NAME and len(kernels) == 9
    for key in ("threads", "static_inst", "slice_inst", "dynamic_inst", "divergent_branch",
                "executed_inst", "fp_inst", "dynamic_fp_inst", "class_load", "flop_count_sp"):
        assert float(total[key]) == sum_rows(kernels, key), key
    ran = [r for r in kernels if r["status"] == RAN and r["launch"] == "inferred"]
    assert len(ran) == 4 and all(r["note"].startswith("inferred from line ") for r in ran)
    assert all(r["dynamic_inst"] == "" and r["note"] for r in kernels if r["status"] != RAN)


def test_json_total_is_the_sum_of_the_kernels(infer_module):
    d = to_dict(profile_module(infer_module))
    ran = [k for k in d["kernels"] if k["status"] == RAN]
    for key in ("inst_executed", "thread_inst_executed", "branch", "divergent_branch",
                "flop_count_sp", "thread_inst_executed_pred_on"):
        assert d["total"][key] == sum(k["profile"][key] for k in ran), key
    t = d["total"]
    assert t["branch_efficiency"] == pytest.approx(100 * (t["branch"] - t["divergent_branch"])
                                                   / t["branch"])
    assert ran[0]["launch"]["inferred_from"]["line"] == 35


# ----------------------------------------------------------- XLA module
# fusion_53 (corpus xla/module_0000.ptx lines 16-33): .reqntid 256;
#   shl.b32 %r10, %ctaid.x, 10 (1024*ctaid); shl.b32 %r11, %tid.x, 2 (4*tid <= 1020 < 1024,
#   so or.b32 %r1, %r11, %r10 adds); setp.lt.u32 %p1, %r1, 158700; @%p1 bra LBB0_2 (the
#   work), bra.uni LBB0_1 (ret). 1024 = 256*4; grid = ceil(158700/1024) = 155
#   (154*1024 = 157696 < 158700 <= 158720).
# copy_55 (line 196): .reqntid 128; shl 9 / shl 2: index 512*ctaid + 4*tid < 9408:
#   grid = ceil(9408/512) = 19 (18*512 = 9216).
# copy_57 (line 787): the same index, < 36864: grid = 36864/512 = 72 exactly.
# fusion_12 (line 7139): .reqntid 256; shl 10 / shl 2: index 1024*ctaid + 4*tid < 25088:
#   grid = ceil(25088/1024) = 25 (24*1024 = 24576).
# fusion (line 9802): .reqntid 128; index 512*ctaid + 4*tid < 1000: grid = 2.
XLA_GRIDS = {"fusion_53": (155, 256, 158700, 33), "copy_55": (19, 128, 9408, 196),
             "copy_57": (72, 128, 36864, 787), "fusion_12": (25, 256, 25088, 7139),
             "fusion": (2, 128, 1000, 9802)}


@needs_xla
@pytest.mark.parametrize("name", sorted(XLA_GRIDS))
def test_xla_grid_by_hand(xla_module, name):
    grid, block, bound, line = XLA_GRIDS[name]
    r = inferred(xla_module, name)
    assert (r.grid, r.block, r.bound, r.line) == ((grid, 1, 1), (block, 1, 1), bound, line)
    assert r.instruction.startswith("setp.lt.u32") and r.instruction.endswith(str(bound))


@needs_xla
@pytest.mark.parametrize("name, reason", [
    ("fusion_51", "1024*%ctaid.x + 4*%tid.x (line 725) is never compared"),
    ("copy_100", "line 7584 (ld.global.nc.f32) runs outside the bound check at line 7592"),
    ("add_855", "no bound check"),
])
def test_xla_refusals(xla_module, name, reason):
    assert reason in refusal(xla_module, name)


@needs_xla
def test_xla_hybrid_equals_full(xla_module):
    """Every inferred launch of the module (52). Full runs get a zero-filled
    4 GiB mapping per pointer (only the touched pages cost memory); the
    slices read no data, so the counters do not depend on the contents."""
    hyb = profile_module(xla_module, mode="hybrid", per_cta=False)
    names = [r.kernel for r in hyb.ran]
    assert len(names) == 52 and set(XLA_GRIDS) <= set(names)
    full = profile_module(xla_module, mode="full", kernels=names)
    for h, f in zip(hyb.ran, full.rows):
        assert h.kernel == f.kernel and f.status == RAN, (f.kernel, f.reason)
        assert h.profile.counters() == f.profile.counters(), h.kernel


@needs_xla
def test_xla_module_profile_lists_every_kernel(xla_module):
    mp = profile_module(xla_module, per_cta=False)
    assert len(mp.rows) == len(xla_module.kernels) == 109
    by = {r.kernel: r for r in mp.rows}
    assert by["fusion_53"].status == RAN and by["fusion_53"].grid == (155, 1, 1)
    assert by["fusion_51"].status == SKIPPED and "never compared" in by["fusion_51"].reason
    assert {r.status for r in mp.rows} == {RAN, SKIPPED}
    total = mp.total()
    assert total["thread_inst_executed"] == sum(r.profile.thread_inst_executed for r in mp.ran)


# ----------------------------------------------------------- command line
def run_cli(*args):
    return CliRunner().invoke(cli, ["profile", *args], catch_exceptions=False)


def test_cli_text_names_inferred_launches_and_reasons():
    r = run_cli(str(INFER_PTX))
    assert r.exit_code == 0, r.output
    assert "inferred launches (4):" in r.output
    assert ("scale_lt: line 35: setp.gt.u32 %r1, 999: index 128*%ctaid.x + 1*%tid.x < 1000, "
            "grid = ceil(1000/128) = 8") in r.output
    assert "not launched (1):" in r.output and "param_bound: its control flow" in r.output
    assert "per-CTA rows (4):" in r.output and "two_d: block .reqntid 16x16x1" in r.output
    assert "total (8 of 9 ran, 4 per-CTA rows: counters of one CTA)" in r.output


def test_cli_json_and_explicit_launch():
    r = run_cli("--format=json", "--launch", "grid_stride:4:128", "--kernel", "grid_stride",
                str(INFER_PTX))
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    (k,) = d["kernels"]
    assert k["launch"] == {"source": "explicit", "grid": [4, 1, 1], "block": [128, 1, 1],
                           "inferred_from": None, "per_cta": False, "one_cta": None,
                           "block_from": None, "file": None, "inputs": "given",
                           "zero_filled": []}
    assert d["total"]["thread_inst_executed"] == k["profile"]["thread_inst_executed"]


@pytest.mark.parametrize("args, code, text", [
    (["--launch", "nosuch:4"], 1, "no kernel named 'nosuch'"),
    (["--launch", "scale_lt"], 2, "KERNEL:GRID[:BLOCK]"),
    (["--launch", "scale_lt:0"], 2, "dimensions must be >= 1"),
    (["--arg", "scale_lt=5"], 2, "KERNEL:NAME=VALUE"),
    (["--launch", "scale_lt:4:64"], 1, "requires block"),
])
def test_cli_errors_are_one_line(args, code, text):
    r = CliRunner().invoke(cli, ["profile", *args, str(INFER_PTX)])
    assert r.exit_code == code and text in r.output, r.output
    assert "Traceback" not in r.output


def test_cli_failed_kernel_exits_1():
    r = CliRunner().invoke(cli, ["profile", "--kernel", "scale_lt", "--mode", "full",
                                 "--arg", "scale_lt:0=zeros:f32:4", "--arg", "scale_lt:1=zeros:f32:4",
                                 str(INFER_PTX)])
    assert r.exit_code == 1
    assert "errors (1):" in r.output and "1 kernel(s) failed: scale_lt" in r.output
