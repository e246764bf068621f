"""TopDown as Saiz's thesis defines it (chapter 4; ptxc/predict/topdown.py).

Two halves:

* every equation, (4.1)-(4.14), on hand-made predictions (a SimpleNamespace
  with the fields of issue 28's Prediction: cycles, share, t_compute,
  t_current, t_previous) and a toy GPU, each value computed by hand in the
  comments;
* the exact terms on nvcc kernels: tests/cuda/topdown.cu and
  tests/cuda/topdown_thesis.cu, compiled with ``nvcc -ptx -arch=sm_90 -O3``
  (nvcc 13.0; tests/cuda/README.md). Every count is derived by hand from the
  PTX; each launch runs hybrid and full, which must agree.

And each GPU model's IPC_MAX against its source (section 4.2: the dispatch
units of the SM).
"""
from __future__ import annotations

import math
import os
import sqlite3
from types import SimpleNamespace

import numpy as np
import pytest

import ptxc
from executor_harness import launch_both
from ptxc.errors import PtxcError
from ptxc.gpus.architecture import GPUS, gpu
from ptxc.gpus.kernel_resources import Registers
from ptxc.predict import analyse, render
from ptxc.predict.mix import instruction_mix
from ptxc.predict.topdown import (LEVEL1, LEVEL2, LEVEL3, METRICS, NODES, computation_costs,
                                  metric_set, replays, topdown, width_issues)

HERE = os.path.dirname(__file__)
PTX = os.path.join(HERE, "cuda", "topdown.sm90.ptx")
THESIS_PTX = os.path.join(HERE, "cuda", "topdown_thesis.sm90.ptx")
REGS = Registers(32, "test: fixed")


class ToyGpu(SimpleNamespace):
    def source(self, field):
        return f"toy {field}"


# IPC_MAX 4 (four dispatch units), compute capability 7.5 (the ncu tables).
TOY = ToyGpu(key="toy", major=7, minor=5, ipc_max=4)


def pred(**kw):
    base = dict(share=0.5, active_warps=8, t_compute=400.0, t_current=150.0,
                t_previous=50.0, cycles=600.0)
    base.update(kw)
    return SimpleNamespace(**base)


REP = {"global": 40, "shared": 20, "width": 40}
MIX = {"barrier": 20, "control": 100, "fp32": 600, "load": 280}
COSTS = {"barrier": 10.0, "control": 30.0, "fp32": 60.0}


def toy_topdown(**kw):
    return topdown(pred(**kw), 1000, 24000, REP, TOY, MIX, COSTS)


# -- the equations, by hand ----------------------------------------------------

def test_retire_and_divergence_equations():
    # f = 0.5: the busiest SM executes 0.5 x 1000 = 500 warp instructions and
    # issues 0.5 x (1000 + 100 replays) = 550, in T = 600 cycles (t_issue =
    # 550 / 4 = 137.5 < t_compute 400: not issue-limited).
    # eff = 24000 / (32 x 1000) = 3/4                     (Tables 4.1, 4.2)
    # IPC = 500 / 600 = 5/6; IPC_issued = 550 / 600 = 11/12
    td = toy_topdown()
    assert td["warp_efficiency"] == 0.75
    assert td["ipc"] == pytest.approx(5 / 6)
    assert td["ipc_issued"] == pytest.approx(11 / 12)
    assert td["cycles"] == 600 and not td["issue_limited"]
    ipc = {n: d["ipc"] for n, d in td["nodes"].items()}
    assert ipc["retire"] == pytest.approx(5 / 6 * 3 / 4)              # (4.2) = 5/8
    assert ipc["branch"] == pytest.approx(5 / 6 * 1 / 4)              # (4.3) = 5/24
    assert ipc["replay"] == pytest.approx(11 / 12 - 5 / 6)            # (4.4) = 1/12
    assert ipc["divergence"] == pytest.approx(5 / 24 + 1 / 12)        # (4.5) = 7/24
    assert td["ipc_stall"] == pytest.approx(4 - (7 / 24 + 5 / 8))     # (4.7) = 37/12


def test_stall_split_equations():
    # Unused dispatch slots: 4 x 600 - 550 = 1850.
    #   memory_bound: 4 x (t_current + t_previous) = 4 x 200 = 800
    #   computation stall: 4 x 400 - 550 = 1050, split by the computation
    #   time's shares (COSTS: barrier 10, control 30, of 100):
    #     sync 0.1 x 1050 = 105, branch_resolving 0.3 x 1050 = 315, core 630
    # STALL_x = 100 x slots / 1850; IPC_STALL_x = STALL_x / 100 x 37/12.
    td = toy_topdown()
    n = td["nodes"]
    slots = {"memory_bound": 800, "core_bound": 630, "sync": 105, "branch_resolving": 315,
             "instruction_fetch": 0, "decode": 0, "fetch": 420, "frontend": 420,
             "backend": 1430}
    for name, s in slots.items():
        assert n[name]["stall_percent"] == pytest.approx(100 * s / 1850), name
        assert n[name]["ipc"] == pytest.approx(s / 1850 * 37 / 12), name
        assert n[name]["slots"] == pytest.approx(s), name      # IPC x T
    # (4.6) STALL_Frontend = STALL_Fetch + STALL_Decode; (4.11) Backend = Memory + Core
    assert n["frontend"]["stall_percent"] == pytest.approx(
        n["fetch"]["stall_percent"] + n["decode"]["stall_percent"])
    assert n["backend"]["stall_percent"] == pytest.approx(
        n["memory_bound"]["stall_percent"] + n["core_bound"]["stall_percent"])
    # Memory Bound's IPC: 800 / 1850 x 37/12 = 4/3 = 800 slots / 600 cycles
    assert n["memory_bound"]["ipc"] == pytest.approx(4 / 3)


def test_level1_sums_to_ipc_max_by_hand():
    # (4.1): 5/8 + 7/24 + 420/600 + 1430/600 = 0.625 + 0.29167 + 0.7 + 2.38333 = 4
    td = toy_topdown()
    ipc = {n: d["ipc"] for n, d in td["nodes"].items()}
    assert ipc["frontend"] == pytest.approx(0.7)
    assert ipc["backend"] == pytest.approx(1430 / 600)
    assert math.fsum(ipc[k] for k in LEVEL1) == pytest.approx(4.0, abs=1e-12)
    assert math.fsum(td["level1"].values()) == pytest.approx(1.0, abs=1e-12)
    assert td["slots"] == 4 * 600
    assert td["fractions"]["retire"] == pytest.approx(0.625 / 4)


def test_issue_limited():
    # The model's 250 cycles (t_compute 50) are fewer than the waits (200) plus
    # the issue time 550 / 4 = 137.5: T = 337.5, no computation stall left,
    # every stall is a memory wait: Memory Bound = 4 x 200 / 337.5.
    td = toy_topdown(t_compute=50.0, cycles=250.0)
    assert td["issue_limited"] and td["cycles"] == 337.5 and td["model_cycles"] == 250
    n = td["nodes"]
    assert n["memory_bound"]["stall_percent"] == pytest.approx(100)
    assert n["core_bound"]["ipc"] == pytest.approx(0, abs=1e-12)
    assert n["memory_bound"]["ipc"] == pytest.approx(800 / 337.5)
    assert td["ipc_issued"] == pytest.approx(550 / 337.5)
    assert math.fsum(td["level1"].values()) == pytest.approx(1.0, abs=1e-12)


def test_no_stall_at_all():
    # One dispatch unit kept busy every cycle: 100 full warp instructions in
    # 100 cycles, IPC = IPC_MAX = 1, Retire = 1, no stall (no 0 / 0).
    g = ToyGpu(key="one", major=6, minor=1, ipc_max=1)
    p = SimpleNamespace(share=1.0, t_compute=100.0, t_current=0.0, t_previous=0.0,
                        cycles=100.0)
    td = topdown(p, 100, 3200, {"global": 0, "shared": 0, "width": 0}, g, {"fp32": 100})
    assert td["nodes"]["retire"]["ipc"] == 1.0 and td["ipc_stall"] == 0
    assert all(td["nodes"][n]["stall_percent"] == 0 for n in ("frontend", "backend"))


def test_shares_without_costs_count_instructions():
    # Without the model's costs each computation instruction weighs one:
    # barrier 20 and control 100 of 20 + 100 + 600 = 720 (loads excluded).
    td = topdown(pred(), 1000, 24000, REP, TOY, MIX)
    n = td["nodes"]
    assert n["sync"]["slots"] == pytest.approx(1050 * 20 / 720)
    assert n["branch_resolving"]["slots"] == pytest.approx(1050 * 100 / 720)
    assert (td["barriers"], td["branches"]) == (20, 100)


def test_labels_and_metrics():
    td = toy_topdown()
    kinds = {n: d["kind"] for n, d in td["nodes"].items()}
    assert [n for n, k in kinds.items() if k == "exact"] == \
        ["retire", "divergence", "branch", "replay"]
    assert td["figures"]["warp_efficiency"]["kind"] == "exact"
    assert td["figures"]["ipc_max"]["kind"] == "exact"
    assert {td["figures"][f]["kind"] for f in ("ipc", "ipc_issued", "ipc_stall", "cycles")} \
        == {"modelled"}
    # cc 7.5 >= 7.2: the Nsight Compute tables (4.2, 4.4, 4.6, 4.8, 4.10, 4.12)
    assert td["nodes"]["memory_bound"]["metric"].startswith(
        "smsp__warp_issue_stalled_long_scoreboard")
    assert td["figures"]["ipc"]["metric"] == "sm__inst_executed.avg.per_cycle_active"
    # cc < 7.2: the nvprof tables (4.1, 4.3, 4.5, 4.7, 4.9, 4.11)
    assert metric_set(gpu("v100")) == 0 and metric_set(gpu("gtx1070")) == 0
    assert metric_set(gpu("quadro-rtx4000")) == 1 and metric_set(gpu("h100")) == 1
    assert METRICS["fetch"][0] == "stall_inst_fetch + stall_sync"          # Table 4.7
    assert METRICS["decode"][0] == "stall_other"
    assert METRICS["core_bound"][0] == "stall_pipe_busy + stall_exec_dependency"  # 4.11
    assert [n for n, lvl, *_ in NODES if lvl == 2] == list(LEVEL2) == \
        ["branch", "replay", "fetch", "decode", "memory_bound", "core_bound"]
    assert LEVEL3 == ("sync", "branch_resolving", "instruction_fetch")


@pytest.mark.parametrize("args, message", [
    ((pred(), 0, 0, REP), "at least one executed warp instruction"),
    ((pred(), 10, 321, REP), "not within 0..32 x inst_executed"),
    ((pred(share=0.0), 10, 320, REP), "share must be in (0, 1]"),
    ((pred(cycles=-1.0), 10, 320, REP), "cycles must be a number >= 0"),
    ((pred(), 10, 320, {"global": -1}), "negative replay count"),
])
def test_bad_input(args, message):
    with pytest.raises(PtxcError) as e:
        topdown(*args, TOY)
    assert message in str(e.value) and "\n" not in str(e.value)


# -- replays (section 4.3) -----------------------------------------------------

@pytest.mark.parametrize("key, cls, extra", [
    # issues = ceil(32 / (units per SM / schedulers)), minus the FP32 unit's:
    ("h100", "fp64", 1),      # FP64 64/4 = 16 wide -> 2 issues; FP32 128/4 = 32 -> 1
    ("t4", "fp64", 62),       # FP64 2/4 = 0.5 -> 64 issues; FP32 64/4 = 16 -> 2
    ("gtx260", "fp64", 28),   # FP64 1/1 -> 32 issues; FP32 8/1 -> 4
    ("gtx1070", "fp64", 31),  # FP64 4/4 = 1 -> 32 issues; FP32 128/4 = 32 -> 1
    ("h100", "special", 7),   # SFU 16/4 = 4 -> 8 issues; FP32 1
    ("gtx1070", "special", 3),  # SFU 32/4 = 8 -> 4 issues; FP32 1
    ("quadro-rtx4000", "special", 6),  # SFU 16/4 = 4 -> 8; FP32 64/4 = 16 -> 2
])
def test_width_replays(key, cls, extra):
    g = gpu(key)
    assert replays({cls: 10, "fp32": 99}, {}, g) == {"global": 0, "shared": 0,
                                                     "width": 10 * extra}


def test_width_issues_rejects_a_missing_unit():
    with pytest.raises(PtxcError, match="no issue rate"):
        width_issues(0, 4)


@pytest.fixture(scope="module")
def module():
    return ptxc.load(PTX)


@pytest.fixture(scope="module")
def thesis():
    return ptxc.load(THESIS_PTX)


def run_both(module, kernel, grid, block, args):
    """(hybrid profile dict, full profile dict); their counters must agree."""
    runs = launch_both(module, kernel, grid, block, args, memory_counters=True)
    return runs["hybrid"][0].to_dict(), runs["full"][0].to_dict()


def test_global_replays_strided(module):
    # strided(a, out, 32), one warp: lane t loads a[32 t], byte offset 128 t:
    # 32 different 128-byte lines in one request; the store out[t] covers
    # bytes 0..127: one line in one request. Replays = lines - requests =
    # (32 + 1) - 2 = 31.
    a = np.arange(32 * 32, dtype=np.float32)
    hyb, full = run_both(module, "strided", (1, 1, 1), (32, 1, 1),
                         [a, np.zeros(32, np.float32), 32])
    for prof in (hyb, full):
        mix = instruction_mix(module, prof["per_block"])
        assert replays(mix, prof["memory"], gpu("h100")) == {"global": 31, "shared": 0,
                                                           "width": 0}


def test_shared_bank_conflicts(module):
    # bank2, one warp: st.shared to word 2t: lanes t and t+16 hit bank 2t mod 32
    # at different words (2-way): 2 transactions, 1 ideal -> 1 conflict.
    # ld.shared word (2t + 2) mod 64: lanes t and t+16 again share a bank at
    # different words -> 1 conflict. Shared replays = 2; the global store
    # out[t] is one line per request -> 0 global replays.
    hyb, full = run_both(module, "bank2", (1, 1, 1), (32, 1, 1), [np.zeros(32, np.float32)])
    for prof in (hyb, full):
        rep = replays(instruction_mix(module, prof["per_block"]), prof["memory"], gpu("h100"))
        assert rep == {"global": 0, "shared": 2, "width": 0}


@pytest.mark.parametrize("kernel, conflicts, inst", [
    # column_sum, one warp: the first loop ($L__BB1_1, 7 instructions, 32
    # times) stores tile[r][t], word 32 r + t, bank t: conflict-free. The
    # second ($L__BB1_3, 6 instructions, 32 times) loads tile[t][c], word
    # 32 t + c, bank c for every lane: 32 words in one bank, 32 transactions
    # for 1 ideal: 31 conflicts x 32 loads = 992 shared replays. The global
    # loads in[r * 32 + t] are 128 contiguous bytes (one line), the store
    # out[t] too: 0 global replays. inst_executed = 11 (entry) + 7 x 32 +
    # 7 (cvt, cvta, bar.sync, shl, add, mov, mov) + 6 x 32 + 4 (shl, add,
    # st, ret) = 438, all with 32 lanes; one bar.sync per warp.
    ("column_sum", 992, 438),
    # column_sum_padded: rows of 33 words: stores to word 33 r + t and loads
    # of word 33 t + c fall in bank (r + t) mod 32 and (t + c) mod 32, all
    # different: no conflict. mad.lo replaces shl + add: 437 instructions.
    ("column_sum_padded", 0, 437),
])
def test_bank_conflict_replays(thesis, kernel, conflicts, inst):
    hyb, full = run_both(thesis, kernel, (1, 1, 1), (32, 1, 1),
                         [np.ones(1024, np.float32), np.zeros(32, np.float32)])
    for prof in (hyb, full):
        mix = instruction_mix(thesis, prof["per_block"])
        assert replays(mix, prof["memory"], gpu("quadro-rtx4000")) == \
            {"global": 0, "shared": conflicts, "width": 0}
        assert (prof["inst_executed"], prof["thread_inst_executed"]) == (inst, 32 * inst)
        assert mix["barrier"] == 1
        td = analyse(thesis, prof, "quadro-rtx4000", REGS)["topdown"]
        # one CTA: f = 1; Replay's slots = the replays; no branch loss
        assert td["share"] == 1 and td["barriers"] == 1
        assert td["nodes"]["replay"]["slots"] == pytest.approx(conflicts)
        assert td["nodes"]["branch"]["slots"] == pytest.approx(0)
        assert td["inst_issued"] == inst + conflicts


@pytest.mark.parametrize("fp64, extra", [("h100", 1), ("t4", 62), ("gtx260", 28)])
def test_fp64_width_replays(module, fp64, extra):
    # dfma(x, 5), two warps (64 threads): the loop body $L__BB2_2 holds one
    # fma.rn.f64 and runs 5 times per warp -> 10 FP64 warp instructions
    # (mov.f64 of constants is class 'move'); width replays = 10 x extra.
    g = gpu(fp64)
    hyb, full = run_both(module, "dfma", (1, 1, 1), (64, 1, 1),
                         [np.ones(64, np.float64), 5])
    for prof in (hyb, full):
        mix = instruction_mix(module, prof["per_block"])
        assert mix["fp64"] == 10 and not mix.get("special")
        assert replays(mix, prof["memory"], g)["width"] == 10 * extra


# -- warp efficiency and branch loss (Tables 4.1-4.2, eq. 4.2-4.3) ------------

@pytest.mark.parametrize("n", [1, 4])
def test_if_else_divergence(thesis, n):
    # if_else(x, n), one warp (the thesis's Figure 4.2: lanes 0-15 take the IF
    # part, lanes 16-31 the ELSE part). Per warp, n >= 1:
    #   entry (ld.param x2, cvta, mov, mul.wide, add, ld, and, setp, @bra)
    #                                        10 instructions x 32 lanes
    #   bra.uni $L__BB0_1 (not-taken lanes)   1 x 16
    #   IF:   $L__BB0_4 (setp, @bra) 2, mov 1, loop $L__BB0_6 (fma, add,
    #         setp, @bra) 4 x n, bra.uni 1                   (4 + 4n) x 16
    #   ELSE: $L__BB0_1 (setp, @bra) 2, shl + mov 2, loop $L__BB0_3
    #         4 x 2n                                         (4 + 8n) x 16
    #   $L__BB0_7 (st, ret), reconverged      2 x 32
    # inst_executed = 10 + 1 + 4 + 4n + 4 + 8n + 2 = 21 + 12n
    # thread_inst_executed = 320 + 16 + 16 (4 + 4n) + 16 (4 + 8n) + 64 = 528 + 192n
    # branch loss (4.3) in warp-instruction slots = inst x (1 - eff)
    #   = inst - thread / 32 = 21 + 12n - (16.5 + 6n) = 4.5 + 6n
    inst, thread = 21 + 12 * n, 528 + 192 * n
    hyb, full = run_both(thesis, "if_else", (1, 1, 1), (32, 1, 1),
                         [np.ones(32, np.float32), n])
    for prof in (hyb, full):
        assert (prof["inst_executed"], prof["thread_inst_executed"]) == (inst, thread)
        td = analyse(thesis, prof, "gtx1070", REGS)["topdown"]
        assert td["warp_efficiency"] == pytest.approx(thread / (32 * inst))
        assert td["nodes"]["branch"]["slots"] == pytest.approx(4.5 + 6 * n)
        assert td["nodes"]["retire"]["slots"] == pytest.approx(thread / 32)
        # x[t] loads and stores are one 128-byte line each: no replay, so
        # Divergence = Branch
        assert td["replays"] == {"global": 0, "shared": 0, "width": 0}
        assert td["nodes"]["divergence"]["ipc"] == pytest.approx(td["nodes"]["branch"]["ipc"])
        # bra (x3 or x4 per path), bra.uni and ret: the control class
        assert td["branches"] == instruction_mix(thesis, prof["per_block"])["control"]
    n4 = (69, 1296) if n == 4 else (33, 720)
    assert (inst, thread) == n4


def test_branch_loss_partial_warp(module):
    # partial, block 40: two warps, the second with 8 lanes. The kernel is
    # straight-line, 12 instructions (2 ld.param, 2 cvta, mov, mul.wide, add,
    # ld, add.f32, add, st, ret): inst_executed = 2 x 12 = 24,
    # thread_inst_executed = 40 x 12 = 480, warp efficiency 480 / 768 = 0.625,
    # branch-loss slots = 24 x (1 - 0.625) = 9 (lanes lost, in warp units).
    hyb, full = run_both(module, "partial", (1, 1, 1), (40, 1, 1),
                         [np.ones(40, np.float32), np.zeros(40, np.float32)])
    for prof in (hyb, full):
        assert (prof["inst_executed"], prof["thread_inst_executed"]) == (24, 480)
        td = analyse(module, prof, "h100", REGS)["topdown"]
        assert td["share"] == 1
        assert td["slot_counts"]["branch"] == pytest.approx(9)
        assert td["slot_counts"]["retire"] == pytest.approx(15)
        assert td["warp_efficiency"] == pytest.approx(0.625)
    assert analyse(module, hyb, "h100", REGS)["topdown"] == \
        analyse(module, full, "h100", REGS)["topdown"]


def test_computation_costs(thesis):
    # With a cost of 1 per instruction the computation costs are column_sum's
    # mix without its loads and stores (their time is the memory waits).
    hyb, _ = run_both(thesis, "column_sum", (1, 1, 1), (32, 1, 1),
                      [np.ones(1024, np.float32), np.zeros(32, np.float32)])
    mix = instruction_mix(thesis, hyb["per_block"])
    from ptxc.predict.mix import instr_class
    from ptxc.predict.static_costs import ModuleCosts
    static = ModuleCosts(thesis, None, cost=lambda ins: 1.0,
                         is_memory=lambda ins: instr_class(ins) in ("load", "store"))
    costs = computation_costs(static, hyb["per_block"])
    assert costs == {c: float(n) for c, n in mix.items() if c not in ("load", "store")}


@pytest.mark.parametrize("key", sorted(GPUS))
def test_level1_sums_to_one(module, key):
    a = np.arange(32 * 64, dtype=np.float32)
    hyb, _ = run_both(module, "strided", (2, 1, 1), (32, 1, 1),
                      [a, np.zeros(64, np.float32), 32])
    td = analyse(module, hyb, key, REGS)["topdown"]
    fr, n = td["fractions"], td["nodes"]
    assert math.fsum(fr[k] for k in LEVEL1) == pytest.approx(1.0, abs=1e-12)       # (4.1)
    assert fr["branch"] + fr["replay"] == pytest.approx(fr["divergence"])           # (4.5)
    assert fr["fetch"] + fr["decode"] == pytest.approx(fr["frontend"])              # (4.6)
    assert fr["sync"] + fr["branch_resolving"] + fr["instruction_fetch"] == \
        pytest.approx(fr["fetch"])
    assert fr["memory_bound"] + fr["core_bound"] == pytest.approx(fr["backend"])    # (4.11)
    assert n["frontend"]["stall_percent"] + n["backend"]["stall_percent"] == \
        pytest.approx(100)
    assert all(v >= -1e-12 for v in fr.values())
    assert td["ipc_max"] == gpu(key).ipc_max


# -- the GPU models: IPC_MAX (section 4.2) and Table 5.1 -----------------------

@pytest.mark.parametrize("key, ipc_max, source", [
    # one warp scheduler + one dispatch unit in each of four processing blocks
    ("h100", 4, "H100WP"), ("a100", 4, "A100WP"), ("v100", 4, "V100WP"),
    ("t4", 4, "TUWP"), ("rtx2060", 4, "TUWP"), ("quadro-rtx4000", 4, "TUWP"),
    # GP104: four processing blocks, one scheduler with two dispatch units each
    ("gtx1070", 8, "GP104WP"),
    # GT200: one instruction unit per SM
    ("gtx260", 1, "GT200"),
])
def test_ipc_max_of_each_gpu(key, ipc_max, source):
    g = gpu(key)
    assert g.ipc_max == ipc_max
    assert "TDT section 4.2" in g.source("ipc_max") and source in g.source("ipc_max")
    assert g.dispatch_units_per_sm == ipc_max


@pytest.mark.parametrize("key, cc, sms, boost, cores, tensor", [
    # TDT Table 5.1: compute capability, SMs, "frecuencia de reloj máxima",
    # CUDA cores, tensor units
    ("gtx1070", (6, 1), 15, 1683, 1920, 0),
    ("quadro-rtx4000", (7, 5), 36, 1545, 2304, 288),
])
def test_table_5_1_models(key, cc, sms, boost, cores, tensor):
    g = gpu(key)
    assert (g.major, g.minor, g.sm_count, g.clock_mhz) == (*cc, sms, boost)
    assert g.sm_count * g.fp32_per_sm == cores
    assert g.sm_count * g.tensor_per_sm == tensor
    assert g.max_threads_per_block == 1024
    assert "Table 5.1" in g.source("sm_count")


def test_gpu_aliases():
    assert gpu("Quadro-RTX4000").key == gpu("rtx4000").key == "quadro-rtx4000"
    assert gpu("GTX1070").key == gpu("sm61").key == "gtx1070"


# -- the output forms label every figure ---------------------------------------

def test_text_json_sqlite_labels(module, tmp_path):
    hyb, _ = run_both(module, "bank2", (1, 1, 1), (32, 1, 1), [np.zeros(32, np.float32)])
    r = analyse(module, hyb, "gtx1070", REGS)
    lines = render.topdown_text(r["topdown"])
    text = "\n".join(lines)
    assert "IPC_MAX" in text and "(exact; section 4.2)" in text
    assert "IPC_issued" in text and "(modelled; Tables 4.3, 4.4)" in text
    assert "replays (exact)  global 0  shared 2  width 0" in text
    for name, level, _p, kind, eq in NODES:
        (row,) = [ln for ln in lines if ln.strip().startswith(name + " ")]
        assert kind in row and f"({eq})" in row
    js = render.as_json(r)["topdown"]
    assert {n: d["kind"] for n, d in js["nodes"].items()} == \
        {n: k for n, _l, _p, k, _e in NODES}
    assert js["figures"]["warp_efficiency"]["kind"] == "exact"
    assert "retire" in js["exact"] and "memory_bound" in js["modelled"]
    assert js["metric_set"] == "cc < 7.2 (nvprof)"
    db = tmp_path / "t.sqlite"
    render.write_sqlite(str(db), [r])
    con = sqlite3.connect(db)
    rows = con.execute("SELECT node, level, parent, kind, equation FROM topdown").fetchall()
    assert rows == [(n, lvl, p, k, e) for n, lvl, p, k, e in NODES]
    figs = dict(con.execute("SELECT figure, kind FROM topdown_figures").fetchall())
    assert figs == {"ipc_max": "exact", "ipc": "modelled", "ipc_issued": "modelled",
                    "warp_efficiency": "exact", "ipc_stall": "modelled", "cycles": "modelled"}
    (total,) = con.execute("SELECT SUM(fraction) FROM topdown WHERE level = 1").fetchone()
    assert total == pytest.approx(1.0)


@pytest.mark.parametrize("key, blocks, warps, limiters", [
    # 32 registers, 256 threads (8 warps), no shared memory. Registers:
    # roundup(32 x 32, 256) = 1024 per warp; (65536 / 4) // 1024 = 16 warps
    # per sub-partition, x 4 // 8 = 8 blocks.
    # gtx1070 (cc 6.1): warps 64 // 8 = 8, blocks 32, registers 8 -> 8 blocks.
    ("gtx1070", 8, 64, ["warps", "registers"]),
    # quadro-rtx4000 (cc 7.5): warps 32 // 8 = 4, blocks 16, registers 8 -> 4.
    ("quadro-rtx4000", 4, 32, ["warps"]),
])
def test_table_5_1_models_occupancy(key, blocks, warps, limiters):
    from ptxc.gpus.occupancy import occupancy
    occ = occupancy(gpu(key), 32, 256)
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.limiters) == (blocks, warps, limiters)


def test_analyse_uses_the_time_models_costs(thesis):
    # analyse() splits the computation stalls with the time model's costs
    # (the module's static_costs.ModuleCosts, Table 1's by default): costs
    # that charge bar.sync 1e4 clocks and everything else 0 give sync all of them:
    # no branch_resolving, no Core Bound.
    from ptxc.predict.mix import instr_class
    from ptxc.predict.params import load_params
    from ptxc.predict.static_costs import ModuleCosts
    p = load_params("h100", None)
    static = ModuleCosts(thesis, p, cost=lambda ins: 1e4 if instr_class(ins) == "barrier" else 0.0,
                         is_memory=lambda ins: instr_class(ins) in ("load", "store"))
    hyb, _ = run_both(thesis, "column_sum", (1, 1, 1), (32, 1, 1),
                      [np.ones(1024, np.float32), np.zeros(32, np.float32)])
    n = analyse(thesis, hyb, "h100", REGS, params=p, static=static)["topdown"]["nodes"]
    assert n["sync"]["slots"] > 0
    assert n["branch_resolving"]["slots"] == 0 and n["core_bound"]["slots"] == 0
