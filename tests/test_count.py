"""Tests of the count pass (passes/count*.py): static counts against hand
counts of small nvcc PTX, the report formats, and the launch hook."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

import ptxc
from ptxc.ir.opcodes import CLASSES
from ptxc.profile import count_pass as count_mod
from ptxc.passes.count.static import FLOP_KEYS, module_counts

CUDA = Path(__file__).resolve().parent / "cuda"


def load(name: str):
    return ptxc.load(str(CUDA / name))


def counts_of(name: str) -> dict:
    return module_counts(load(name))


def test_tid_branch_hand_count():
    # slice_tid.ptx, by hand: 3 ld.param, 3 mov of specials, mad, setp, @p bra |
    # cvta, mul.wide, add, ld.global, fma, cvta, add, st.global | ret
    fc = counts_of("slice_tid.ptx")["functions"]["tid_branch"]
    assert fc["static_inst"] == 18
    assert fc["classes"] == {**{c: 0 for c in CLASSES}, "integer": 5, "fp32": 1, "load": 4,
                             "store": 1, "control": 2, "move": 5}
    assert fc["memory"] == {"load.global": 1, "load.param": 3, "store.global": 1}
    assert fc["flops"] == {"flop_count_sp": 2, "flop_count_dp": 0, "flop_count_hp": 0,
                           "flop_count_sp_special": 0}
    assert (fc["branch"], fc["cond_branch"], fc["fp_inst"]) == (1, 1, 1)
    assert [(b["block"], b["static_inst"]) for b in fc["blocks"]] == \
        [("bb0", 9), ("bb1", 8), ("$L__BB0_2", 1)]
    assert "slice_inst" not in fc


def test_hypa_kernel_hand_count():
    # slice_hypa.ptx: 4 ld.param, 3 mov, mad, setp, @p bra | bra.uni | cvta, mul.wide,
    # add, ld, mul.lo, bra.uni | cvta, mul.wide, add, ld, add | setp, @p bra |
    # cvt.rn.f32.s32, fma, cvta, mul.wide, add, st | ret
    fc = counts_of("slice_hypa.ptx")["functions"]["two_writers"]
    assert fc["static_inst"] == 31
    assert [b["static_inst"] for b in fc["blocks"]] == [10, 1, 6, 5, 2, 6, 1]
    assert (fc["branch"], fc["cond_branch"]) == (4, 2)
    cls = fc["classes"]
    assert (cls["load"], cls["store"], cls["control"], cls["conversion"], cls["fp32"]) == \
        (6, 1, 5, 1, 1)
    assert cls["integer"] == 11 and cls["move"] == 6   # mad setp | 3 | 3 | setp | 2; mov x3 cvta x3
    assert sum(cls.values()) == 31


def test_shared_and_barrier_counts():
    fc = counts_of("slice_shared.ptx")["functions"]["shared_flag"]
    assert fc["classes"]["barrier"] == 1
    assert fc["memory"]["load.shared"] == 1 and fc["memory"]["store.shared"] == 1
    assert fc["flops"]["flop_count_sp"] == 2


def test_module_totals_and_functions():
    rep = counts_of("slice_call.ptx")
    assert set(rep["functions"]) == {"_Z8classifyii", "call_branch"}
    assert rep["total"]["static_inst"] == 6 + 25
    assert rep["total"]["kernels"] == 1 and rep["total"]["functions"] == 2
    assert rep["total"]["memory"]["store.param"] == 3


def test_flop_weights_packed_and_special():
    text = """.version 7.0
.target sm_80
.address_size 64
.visible .entry k()
{
    .reg .f32 %f<4>; .reg .b32 %h<3>; .reg .f64 %d<3>;
    mov.f32 %f0, 0f3F800000;
    mov.b32 %h0, 0;
    mov.f64 %d0, 0d3FF0000000000000;
    fma.rn.f16x2 %h1, %h0, %h0, %h0;
    mad.rn.f32 %f1, %f0, %f0, %f0;
    ex2.approx.f32 %f2, %f1;
    add.f64 %d1, %d0, %d0;
    ret;
}
"""
    fc = module_counts(ptxc.parse(text))["functions"]["k"]
    assert fc["flops"] == {"flop_count_sp": 2, "flop_count_dp": 1, "flop_count_hp": 4,
                           "flop_count_sp_special": 1}
    assert fc["flops_total"] == 8


def test_sliced_counts_per_block():
    m = load("slice_tid.ptx")
    r = ptxc.run_pipeline(m, "slice,count")["count"]
    fc = r.data["functions"]["tid_branch"]
    assert fc["slice_inst"] == 8
    assert fc["slice_fraction"] == pytest.approx(8 / 18, abs=1e-6)
    assert [b["slice_inst"] for b in fc["blocks"]] == [7, 0, 1]
    assert "8 in the slice (44.4%)" in r.text


def test_text_report_says_static_only():
    r = ptxc.run_pipeline(load("slice_tid.ptx"), "count")["count"]
    assert "count kernel @tid_branch: 18 instructions" in r.text
    assert "static counts only" in r.text
    assert r.data["note"].startswith("static counts only")


def test_json_is_serialisable_and_stable():
    r = ptxc.run_pipeline(load("slice_call.ptx"), "count", format="json")["count"]
    text = json.dumps(r.data, sort_keys=False)
    again = ptxc.run_pipeline(load("slice_call.ptx"), "count", format="json")["count"]
    assert json.dumps(again.data, sort_keys=False) == text
    k = r.data["functions"]["call_branch"]
    assert list(k["flops"]) == list(FLOP_KEYS)
    assert list(k["classes"]) == list(CLASSES)
    for key in ("static_inst", "branch", "cond_branch", "fp_inst", "blocks"):
        assert key in k


def test_csv_one_row_per_kernel():
    m = load("slice_call.ptx")
    r = ptxc.run_pipeline(m, "slice,count", format="csv")["count"]
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert len(rows) == 1
    row = rows[0]
    assert row["kernel"] == "call_branch" and row["static_inst"] == "25"
    assert row["file_instructions"] == "31" and row["kernels"] == "1"
    assert row["ptx_version"] == "9.0" and row["target"] == "sm_90"
    assert row["address_size"] == "64"
    assert row["slice_inst"] == "25" and row["dynamic_inst"] == ""


def test_launch_mode_follows_the_pipeline():
    m = load("slice_tid.ptx")
    assert count_mod.launch_mode(m, {"mode": "hybrid"}) == "full"
    ptxc.run_pipeline(m, "slice")
    assert count_mod.launch_mode(m, {"mode": "hybrid"}) == "hybrid"
    assert count_mod.launch_mode(m, {"mode": "full"}) == "full"


def test_launch_hook_reports_dynamic_counters(monkeypatch):
    """With a launch configuration, count calls launch_from_options and puts
    the profile under 'dynamic' (a stand-in executor here)."""
    seen = {}

    class Profile:
        def to_dict(self):
            return {"kernel": "tid_branch", "grid": [1, 1, 1], "block": [32, 1, 1],
                    "inst_executed": 9, "thread_inst_executed": 288, "branch": 1,
                    "divergent_branch": 0, "branch_efficiency": 100.0,
                    "per_block": {"tid_branch:bb0": {"warp_execs": 1, "thread_execs": 32},
                                  "tid_branch:bb1": {"warp_execs": 1, "thread_execs": 32},
                                  "tid_branch:$L__BB0_2": {"warp_execs": 1, "thread_execs": 32}}}

    def fake(module, opts, mode):
        seen["mode"] = mode
        return Profile()

    monkeypatch.setattr(count_mod, "run_launch",
                        lambda module, opts: (fake(module, opts, count_mod.launch_mode(module, opts))
                                              .to_dict(), None,
                                              count_mod.launch_mode(module, opts), 0.001))
    m = load("slice_tid.ptx")
    launch = {"kernel": "tid_branch", "grid": (1,), "block": (32,), "args": [], "mode": "hybrid"}
    r = ptxc.run_pipeline(m, "slice,count", format="csv", launch=launch)["count"]
    assert seen["mode"] == "hybrid"
    dyn = r.data["functions"]["tid_branch"]["dynamic"]
    assert dyn["mode"] == "hybrid" and dyn["thread_inst_executed"] == 288
    row = next(csv.DictReader(io.StringIO(r.text)))
    assert row["threads"] == "32" and row["dynamic_inst"] == "288"
    assert row["executed_inst"] == str(32 * 8) and row["dynamic_fp_inst"] == "32"
    assert float(row["percent_executed"]) == pytest.approx(100 * 256 / 288, abs=1e-3)


def test_real_launch_if_available():
    try:
        from ptxc.launcher.api import launch_from_options  # noqa: F401
    except ImportError:
        pytest.skip("ptxc.launcher (the JIT executor) is not available")
    launch = {"kernel": "tid_branch", "grid": (2,), "block": (64,),
              "args": ["tid_branch_param_0=random:f32:128:1", "tid_branch_param_1=zeros:f32:128",
                       "tid_branch_param_2=100"],
              "shared": 0, "mode": "hybrid", "max_steps": None, "threads": None}
    hybrid = ptxc.run_pipeline(load("slice_tid.ptx"), "slice,count", format="csv",
                               launch=launch)["count"]
    full = ptxc.run_pipeline(load("slice_tid.ptx"), "count", launch=launch)["count"]
    dh = hybrid.data["functions"]["tid_branch"]["dynamic"]
    df = full.data["functions"]["tid_branch"]["dynamic"]
    assert (dh["mode"], df["mode"]) == ("hybrid", "full")
    for key in ("inst_executed", "thread_inst_executed", "thread_inst_executed_pred_on",
                "branch", "divergent_branch", "flop_count_sp"):
        assert dh[key] == df[key], key
    row = next(csv.DictReader(io.StringIO(hybrid.text)))
    assert row["threads"] == "128" and row["dynamic_inst"] == str(df["thread_inst_executed"])
    # 128 threads run bb0 (7 kept) and the exit block (1 kept); 100 run bb1 (none kept)
    assert row["executed_inst"] == str(128 * 7 + 128 * 1)
    assert row["dynamic_fp_inst"] == "100"
