"""TopDown's exact terms (ptxc/predict/topdown.py) on nvcc kernels.

Kernels: tests/cuda/topdown.cu, compiled with
``nvcc -ptx -arch=sm_90 -O3 topdown.cu -o topdown.sm90.ptx`` (nvcc 13.0).
Every expected number is derived by hand from the PTX in the comments; each
launch runs hybrid and full, and both must give the same counters and the
same prediction.
"""
from __future__ import annotations

import math
import os

import numpy as np
import pytest

import ptxc
from executor_harness import launch_both
from ptxc.gpus.architecture import gpu
from ptxc.gpus.kernel_resources import Registers
from ptxc.predict import analyse
from ptxc.predict.mix import instruction_mix
from ptxc.predict.topdown import LEVEL1, replays, width_issues

PTX = os.path.join(os.path.dirname(__file__), "cuda", "topdown.sm90.ptx")
REGS = Registers(32, "test: fixed")


@pytest.fixture(scope="module")
def module():
    return ptxc.load(PTX)


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


@pytest.mark.parametrize("key, extra", [
    # issues = ceil(32 / (units per SM / schedulers)):
    ("h100", 1),    # FP64 64/4 = 16 wide -> 2 issues; FP32 128/4 = 32 -> 1: 1 replay
    ("t4", 62),     # FP64 2/4 = 0.5 -> 64 issues; FP32 64/4 = 16 -> 2: 62
    ("gtx260", 28),  # FP64 1/1 -> 32 issues; FP32 8/1 -> 4: 28
])
def test_fp64_width_replays(module, key, extra):
    # dfma(x, 5), two warps (64 threads): the loop body $L__BB2_2 holds one
    # fma.rn.f64 and runs 5 times per warp -> 10 FP64 warp instructions
    # (mov.f64 of constants is class 'move'); width replays = 10 x extra.
    g = gpu(key)
    assert width_issues(g.fp64_per_sm, g.schedulers_per_sm) - \
        width_issues(g.fp32_per_sm, g.schedulers_per_sm) == extra
    hyb, full = run_both(module, "dfma", (1, 1, 1), (64, 1, 1),
                         [np.ones(64, np.float64), 5])
    for prof in (hyb, full):
        mix = instruction_mix(module, prof["per_block"])
        assert mix["fp64"] == 10
        assert replays(mix, prof["memory"], g)["width"] == 10 * extra


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
        r = analyse(module, prof, "h100", REGS)
        td = r["topdown"]
        # one CTA: the busiest SM has all the work (f = 1)
        assert r["prediction"].share == 1
        assert td["slot_counts"]["branch"] == pytest.approx(9)
        assert td["slot_counts"]["retire"] == pytest.approx(15)
        assert td["warp_efficiency"] == pytest.approx(0.625)
    assert analyse(module, hyb, "h100", REGS)["prediction"].cycles == \
        analyse(module, full, "h100", REGS)["prediction"].cycles


@pytest.mark.parametrize("key", ["h100", "a100", "v100", "t4", "rtx2060", "gtx260"])
def test_level1_sums_to_one(module, key):
    a = np.arange(32 * 64, dtype=np.float32)
    hyb, _ = run_both(module, "strided", (2, 1, 1), (32, 1, 1),
                      [a, np.zeros(64, np.float32), 32])
    td = analyse(module, hyb, key, REGS)["topdown"]
    fr = td["fractions"]
    assert math.fsum(fr[k] for k in LEVEL1) == pytest.approx(1.0, abs=1e-12)
    assert fr["branch"] + fr["replay"] == pytest.approx(fr["divergence"])
    assert fr["backend_core"] + fr["backend_memory"] == pytest.approx(fr["backend"])
    assert all(v >= 0 for v in fr.values())
