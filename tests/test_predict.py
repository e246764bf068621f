"""Luo & Suda's execution-time model (ptxc/predict/: costs, periods,
luo_suda) against the paper's arithmetic, and the ``ptxc predict`` command.

Every expected number is computed by hand in the comments from the paper's
GTX 260 parameters (section 3.4: a = 3, b = 11, c = 0.5, d = 80; section
4.2: m = 32 warps; Table 1 costs; t_mem = 200; Table 2: 24 SMs, 1242 MHz,
111.9 GB/s, so GPU_bwt = 111.9e9 / 1242e6 = 90.0966 bytes per clock) and,
for kernels, from their PTX (tests/cuda/luo_suda.cu, compiled with
``nvcc -ptx -arch=sm_90 -O3 luo_suda.cu -o luo_suda.sm90.ptx``; nvcc 13.0).
No number comes from a run of ptxc.
"""
from __future__ import annotations

import json
import math
import os
import sqlite3
from types import SimpleNamespace

import numpy as np
import pytest
from click.testing import CliRunner

import ptxc
from ptxc.cli.main import cli
from ptxc.errors import PtxcError
from ptxc.gpus.kernel_resources import Registers
from ptxc.predict import analyse
from ptxc.predict.costs import (FALLBACK_PARAMS, TABLE1_PARAMS, access_bytes, cost_name,
                                instruction_cost, is_memory_access)
from ptxc.predict.luo_suda import (Inputs, Readings, accuracy, cpd, cpd1, cpd2, cpd2_n, mpd,
                                   parse_readings, period_time, predict, warp_bandwidth)
from ptxc.predict.params import ModelParams, load_params
from ptxc.predict.periods import BlockTasks, Task, function_periods

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOPDOWN_PTX = os.path.join(ROOT, "tests", "cuda", "topdown.sm90.ptx")
LS_PTX = os.path.join(ROOT, "tests", "cuda", "luo_suda.sm90.ptx")

# ---------------------------------------------------------------- parameters

TABLE1 = {  # Luo & Suda, Table 1 (GTX 260, GPU clocks): int_const int_reg float_const float_reg
    "add": (22, 65, 22, 65), "sub": (22, 65, 22, 65), "mul": (44, 136, 22, 65),
    "div": (728, 753, 748, 783), "neg": (22, 22, 17, 17), "min": (62, 62, 62, 62),
    "max": (62, 62, 62, 62), "and": (64, 64, 64, 64), "or": (62, 62, 62, 62),
    "xor": (62, 62, 62, 62), "not": (22, 22, 22, 22)}
KINDS = ("int_const", "int_reg", "float_const", "float_reg")
GPU_BWT = 111.9e9 / 1242e6          # 90.0966 bytes per GPU clock


def gtx260_values(**over) -> dict:
    v = {"a": 3, "b": 11, "c": 0.5, "d": 80, "m": 32, "t_mem": 200, "cost.ld_st": 200,
         "n_sm": 24, "clock_mhz": 1242, "gpu_bwt": GPU_BWT}
    for row, vals in TABLE1.items():
        v.update({f"cost.{row}.{k}": x for k, x in zip(KINDS, vals)})
    # The fallbacks are the test's choice (Table 1 has no row for them): a
    # multiply-add costs a mul plus an add; comparisons and selects cost a
    # min; one-operand moves, parameter loads and branches cost a not.
    mad = [m + a for m, a in zip(TABLE1["mul"], TABLE1["add"])]     # 66 201 44 130
    v.update({f"cost.mad.{k}": x for k, x in zip(KINDS, mad)})
    v.update({f"cost.setp.{k}": 62 for k in KINDS})
    v.update({"cost.shift.int_const": 64, "cost.shift.int_reg": 64, "cost.special": 65,
              "cost.cvt": 65, "cost.mov": 22, "cost.branch": 22, "cost.barrier": 22,
              "cost.warp": 64, "cost.shared": 38, "cost.const": 22, "cost.tensor": 65,
              "cost.other": 22})
    v.update(over)
    return v


def gtx260(**over) -> ModelParams:
    vals = gtx260_values(**over)
    return ModelParams("gtx260", vals, {k: "test" for k in vals})


P260 = gtx260()
G260 = SimpleNamespace(key="gtx260", schedulers_per_sm=1)


def test_every_parameter_named():
    # 11 Table 1 rows x 4 kinds, and the fallbacks of docs/predict.md
    assert len(TABLE1_PARAMS) == 44 and "cost.div.float_const" in TABLE1_PARAMS
    assert set(FALLBACK_PARAMS) <= set(P260.values)
    assert set(TABLE1_PARAMS) <= set(P260.values)


# ---------------------------------------------------------------- eq. (1)-(2)

def test_eq1_warp_bandwidth():
    # a coalesced 4-byte load, 4 sectors: 32 x 4 / (4 x 200) = 0.16 bytes per clock
    assert warp_bandwidth(4, 4, 200) == pytest.approx(0.16)
    # a task of five 16-byte accesses, 5 transactions: 32 x 80 / (5 x 200) = 2.56
    assert warp_bandwidth(80, 5, 200) == pytest.approx(2.56)
    assert warp_bandwidth(4, 0, 200) == 0.0     # no transaction: no bandwidth used


def test_eq2_mpd_readings():
    # per SM: 90.0966 / (24 x 0.16) = 23.4627 -> floor 23; MPD = min{N_act, 23}
    r = Readings()
    assert [mpd(n, 0.16, GPU_BWT, 24, r) for n in (1, 8, 23, 32)] == [1, 8, 23, 23]
    # printed, N_act in the denominator: N_act = 8: 23.4627 / 8 = 2.9328 -> 2;
    # N_act = 32: 0.7332 -> 0, kept at 1 (section 3.3: serial execution is MPD = 1)
    p = Readings(eq2="printed")
    assert [mpd(n, 0.16, GPU_BWT, 24, p) for n in (1, 2, 8, 32)] == [1, 2, 2, 1]
    # Warp_bwt 2.56: 90.0966 / (24 x 2.56) = 1.4664 -> 1
    assert mpd(8, 2.56, GPU_BWT, 24, r) == 1
    assert mpd(8, 0.0, GPU_BWT, 24, r) == 8


# ---------------------------------------------------------------- eq. (3)-(5)

def test_eq3_to_5_svm_proportion():
    # P = 0.2623 (svm, Table 3). CPD1 = (0.5 - 0.2623)(N - 11) + 3:
    # N = 1: 0.2377 x -10 + 3 = 0.623; N = 16: 0.2377 x 5 + 3 = 4.1885; N = 32: 7.9917
    assert cpd1(0.2623, 1, 3, 11, 0.5) == pytest.approx(0.623)
    assert cpd1(0.2623, 16, 3, 11, 0.5) == pytest.approx(4.1885)
    assert cpd1(0.2623, 32, 3, 11, 0.5) == pytest.approx(7.9917)
    # n = 80 (0.2623 - 0.5)^2 = 80 x 0.05650129 = 4.5201032
    assert cpd2_n(0.2623, 0.5, 80) == pytest.approx(4.5201032)
    # CPD2 = (n / 31) sqrt(31^2 - (N - 32)^2) + 3: N = 1: sqrt(0) -> 3;
    # N = 16: 0.145810 x sqrt(705) = 0.145810 x 26.5518 = 3.87152 -> 6.87152; N = 32: n + 3
    assert cpd2(0.2623, 1, 32, 3, 0.5, 80) == pytest.approx(3.0)
    assert cpd2(0.2623, 16, 32, 3, 0.5, 80) == pytest.approx(6.87152, abs=1e-5)
    assert cpd2(0.2623, 32, 32, 3, 0.5, 80) == pytest.approx(7.5201032)
    # CPD = min{CPD1, CPD2}: N = 16: 4.1885; N = 32: 7.5201; N = 1: 0.623,
    # kept at 1 by default (cpd_floor=one), 0.623 as printed (cpd_floor=none)
    assert cpd(0.2623, 16, P260, Readings())[2] == pytest.approx(4.1885)
    assert cpd(0.2623, 32, P260, Readings())[2] == pytest.approx(7.5201032)
    assert cpd(0.2623, 1, P260, Readings())[2] == 1.0
    assert cpd(0.2623, 1, P260, Readings(cpd_floor="none"))[2] == pytest.approx(0.623)


def test_cpd_high_proportion_readings():
    # Blackscholes' P = 0.8697 > c: n = 80 x 0.3697^2 = 10.9342472.
    # N = 20: CPD1 = -0.3697 x 9 + 3 = -0.3273; CPD2 = (10.9342/31) sqrt(961 - 144) + 3
    #       = 0.352718 x 28.5832 + 3 = 13.0818
    # N = 8:  CPD1 = -0.3697 x -3 + 3 = 4.1091;  CPD2 = 0.352718 x sqrt(385) + 3 = 9.9208
    c1, c2, v = cpd(0.8697, 20, P260, Readings())
    assert (c1, c2) == (pytest.approx(-0.3273), pytest.approx(13.0818, abs=1e-4))
    assert v == pytest.approx(13.0818, abs=1e-4)                 # regime: CPD2 when P >= c
    assert cpd(0.8697, 20, P260, Readings(cpd="min"))[2] == 1.0  # min -0.3273, floor 1
    with pytest.raises(PtxcError, match="CPD = -0.3273 <= 0"):
        cpd(0.8697, 20, P260, Readings(cpd="min", cpd_floor="none"))
    assert cpd(0.8697, 8, P260, Readings())[2] == pytest.approx(9.9208, abs=1e-4)
    assert cpd(0.8697, 8, P260, Readings(cpd="min"))[2] == pytest.approx(4.1091)


# ---------------------------------------------------------------- eq. (6)-(13)

N, CPD = 8, 4.0       # period_time(c, m, c_prev, m_prev, MPD_prev, N_act, CPD, n_eq5, readings)


def test_type1_eq6():
    # c = 300 >= m = 200 after c = 300 >= m = 200: T = ceil(8 x 300 / 4) = 600
    assert period_time(300, 200, 300, 200, 8, N, CPD, 0, Readings()) == (1, 600, 0, 0)
    # c = 101, CPD 3: 808 / 3 = 269.33: ceil 270 (default), 269.33 with brackets=plain
    assert period_time(101, 0, 0, 0, 0, N, 3.0, 0, Readings())[1] == 270
    assert period_time(101, 0, 0, 0, 0, N, 3.0, 0,
                       Readings(brackets="plain"))[1] == pytest.approx(808 / 3)


def test_type2_eq7_eq8():
    # c = 100 < m = 1000 after start: T_c = max{1000 - (8 - 1) x 100, 0} = 300;
    # T = ceil(800 / 4) + 300 = 500
    assert period_time(100, 1000, 0, 0, 0, N, CPD, 4.52, Readings()) == (2, 500, 300, 0)
    # eq8_n=eq5, n = 4.52: T_c = 1000 - 3.52 x 100 = 648; T = 848
    k, t, tc, tp = period_time(100, 1000, 0, 0, 0, N, CPD, 4.52, Readings(eq8_n="eq5"))
    assert (k, t, tc) == (2, pytest.approx(848), pytest.approx(648))
    # eq. (7)'s ceiling stays under brackets=plain: ceil(8 x 101 / 3) = 270, T_c = 293
    assert period_time(101, 1000, 0, 0, 0, N, 3.0, 0, Readings(brackets="plain"))[1] == 563


def test_type3_eq9_eq10():
    # c = 100 >= m = 50 after c = 100 < m = 1000, MPD_prev = 3:
    # floor(8 / 3 - 1) = floor(1.667) = 1: T_p = max{1000 x 1 - 7 x 100, 0} = 300; T = 200 + 300
    assert period_time(100, 50, 100, 1000, 3, N, CPD, 0, Readings()) == (3, 500, 0, 300)
    # eq10=ceil: ceil(1.667) = 2: T_p = 2000 - 700 = 1300; T = 1500
    assert period_time(100, 50, 100, 1000, 3, N, CPD, 0,
                       Readings(eq10="ceil")) == (3, 1500, 0, 1300)
    # MPD_prev = N_act: floor(0) = 0, T_p = 0
    assert period_time(100, 50, 100, 1000, 8, N, CPD, 0, Readings()) == (3, 200, 0, 0)


def test_type4_eq11_to_13():
    # c = 100 < m = 1000 after the same, MPD_prev = 2: floor(8/2 - 1) = 3:
    # T_p = max{3000 - 700, 0} = 2300; T_c = max{1000 - (700 + 2300), 0} = 0; T = 200 + 2300
    assert period_time(100, 1000, 100, 1000, 2, N, CPD, 0, Readings()) == (4, 2500, 0, 2300)
    # eq13=literal: T_c = 1000 - 3000 = -2000; T = 200 + 2300 - 2000 = 500
    assert period_time(100, 1000, 100, 1000, 2, N, CPD, 0,
                       Readings(eq13="literal")) == (4, 500, -2000, 2300)
    # MPD_prev = 8: T_p = 0; T_c = 1000 - 700 = 300; T = 500
    assert period_time(100, 1000, 100, 1000, 8, N, CPD, 0, Readings()) == (4, 500, 300, 0)


def test_eq14_accuracy():
    # min{2.0, 2.5} / max{2.0, 2.5} = 0.8, either way round
    assert accuracy(2.0, 2.5) == pytest.approx(0.8) == accuracy(2.5, 2.0)
    assert accuracy(3.0, 3.0) == 1.0
    with pytest.raises(PtxcError, match="two positive times"):
        accuracy(0.0, 1.0)


def test_readings_parse():
    r = parse_readings(["eq2=printed", "cpd=min"])
    assert (r.eq2, r.cpd, r.eq10) == ("printed", "min", "floor")
    with pytest.raises(PtxcError, match="unknown reading 'eq99'"):
        parse_readings(["eq99=x"])
    with pytest.raises(PtxcError, match="reading 'eq2' is one of per_sm, printed, not 'x'"):
        parse_readings(["eq2=x"])


# ---------------------------------------------------------------- section 3.2 and 3.5

def one_block(tasks, execs=192.0, **kw) -> BlockTasks:
    return BlockTasks("k:b", execs, tasks, exit=execs * 32, entry=execs * 32, **kw)


def C(x):
    return Task(False, x)


def M(x, data=4.0, trans=4.0):
    return Task(True, x, data, trans)


def test_four_types_in_one_block():
    # One straight-line block, executed by 24 CTAs x 8 warps = 192 warps, on
    # 24 SMs with one CTA each: share 1/24, N_act = 8, weight = 192/24/8 = 1.
    #   C300 M200 | C100 M1000 | C100 M1000 | C300 M200 | C50
    # periods: #0 (300, 200) after start: type 1;  #1 (100, 1000) after #0: type 2;
    # #2 (100, 1000) after #1: type 4;  #3 (300, 200) after #2: type 3;
    # #4 (50, 0), the exit, after #3 (300 >= 200): type 1.
    # M1000 is five 16-byte accesses in 5 transactions: Warp_bwt 2.56, MPD 1 (eq. 2);
    # M200 one coalesced 4-byte load: MPD = min{8, 23} = 8.
    # P = 850 / (850 + 2400) = 0.261538; CPD1 = 0.238462 x (8 - 11) + 3 = 2.284615;
    # n = 80 x 0.238462^2 = 4.549112; CPD2 = (4.549112 / 31) sqrt(961 - 576) + 3 = 5.879356
    # -> CPD = 2.284615.  8 x 300 / CPD = 1050.505 -> 1051; 8 x 100 / CPD = 350.168 -> 351;
    # 8 x 50 / CPD = 175.084 -> 176.
    # #0: 1051.  #1: 351 + max{1000 - 700, 0} = 651.
    # #2: T_p = max{1000 x floor(8/1 - 1) - 700, 0} = 6300; T_c = max{1000 - 7000, 0} = 0:
    #     351 + 6300 = 6651.  #3: T_p = max{7000 - 7 x 300, 0} = 4900: 1051 + 4900 = 5951.
    # #4: 176.  Total 1051 + 651 + 6651 + 5951 + 176 = 14480.
    heavy = dict(data=80.0, trans=5.0)
    b = one_block([C(300), M(200), C(100), M(1000, **heavy), C(100), M(1000, **heavy),
                   C(300), M(200), C(50)])
    inp = Inputs("k", blocks=24, warps_per_block=8, occupancy_blocks=1, functions=[[b]])
    p = predict(inp, G260, P260)
    assert (p.share, p.active_warps) == (1 / 24, 8)
    assert p.proportion == pytest.approx(850 / 3250)
    assert (p.cpd1, p.cpd2, p.cpd) == (pytest.approx(2.284615, abs=1e-6),
                                       pytest.approx(5.879356, abs=1e-6),
                                       pytest.approx(2.284615, abs=1e-6))
    got = [(x.index, x.kind, x.t, x.t_c, x.t_p, x.weight) for x in p.periods]
    assert got == [(0, 1, 1051, 0, 0, pytest.approx(1)), (1, 2, 651, 300, 0, pytest.approx(1)),
                   (2, 4, 6651, 0, 6300, pytest.approx(1)),
                   (3, 3, 5951, 0, 4900, pytest.approx(1)), (4, 1, 176, 0, 0, pytest.approx(1))]
    assert [x.prev for x in p.periods] == ["start", "k:b#0", "k:b#1", "k:b#2", "k:b#3"]
    assert [x.mpd for x in p.periods] == [8, 1, 1, 8, 0]
    assert p.cycles == pytest.approx(14480)
    assert p.t_previous == pytest.approx(6300 + 4900) and p.t_current == pytest.approx(300)
    assert p.t_compute == pytest.approx(1051 + 351 + 351 + 1051 + 176)
    assert p.seconds == pytest.approx(14480 / 1242e6)


def test_eq2_readings_in_periods():
    # C100 M1000 | C100 M1000 | C50 on one block, N_act = 8; each M1000 one coalesced
    # 4-byte access: Warp_bwt 0.16, MPD 8 (per SM) or min{8, floor(2.9328)} = 2 (printed).
    # P = 250 / 2250 = 0.111111: CPD1 = 0.388889 x -3 + 3 = 1.833333 (CPD2 10.6579):
    # 8 x 100 / CPD = 436.36 -> 437; 8 x 50 / CPD = 218.18 -> 219.
    # per SM: #0 type 2: 437 + (1000 - 700) = 737; #1 type 4: T_p = 0, T_c = 300: 737;
    #   #2 type 3: 219: total 1693.
    # printed: #1: T_p = max{1000 x floor(8/2 - 1) - 700, 0} = 2300, T_c = 0: 2737;
    #   #2: T_p = max{3000 - 7 x 50, 0} = 2650: 2869: total 737 + 2737 + 2869 = 6343.
    b = one_block([C(100), M(1000), C(100), M(1000), C(50)])
    inp = Inputs("k", blocks=24, warps_per_block=8, occupancy_blocks=1, functions=[[b]])
    per_sm, printed = predict(inp, G260, P260), predict(inp, G260, P260, ["eq2=printed"])
    assert [x.t for x in per_sm.periods] == [737, 737, 219] and per_sm.cycles == 1693
    assert [x.t for x in printed.periods] == [737, 2737, 2869] and printed.cycles == 6343
    assert [x.mpd for x in printed.periods] == [2, 2, 0]


def test_loop_carries_computation():
    # A (no memory, C100) -> B [M200 C50] looping R = 4 times per warp -> X [C10], exit.
    # One warp: threads 32 along A->B, 96 along B->B, 32 along B->X.
    # Computation reaching B's load: from A 100 (once), from B's tail 50 (3 times):
    # c = (100 + 3 x 50) / 4 = 62.5 per execution. B#0 follows "start" (through A) in
    # 1 of its 4 executions and itself in 3. X ends the warp with c = 50 + 10, after B#0.
    a = BlockTasks("k:A", 1, [C(100)], succ={"k:B": 32}, entry=32)
    b = BlockTasks("k:B", 4, [M(200), C(50)], succ={"k:B": 96, "k:X": 32})
    x = BlockTasks("k:X", 1, [C(10)], exit=32)
    got = [(q.block, q.index, q.c, q.m, q.passes, q.prev) for q in function_periods([a, b, x])]
    assert got == [("k:B", 0, pytest.approx(62.5), 200, pytest.approx(1), None),
                   ("k:B", 0, pytest.approx(62.5), 200, pytest.approx(3), ("k:B", 0)),
                   ("k:X", 0, pytest.approx(60), 0, pytest.approx(1), ("k:B", 0))]
    # every computation instruction counted once: 100 + 4 x 50 + 10 = 62.5 x 4 + 60


def test_divergent_join_predecessors():
    # E [C10 M200] branches: 24 threads to T [C30] (no memory), 8 to F [M100 C5];
    # both fall into J [M200], one warp execution each. F#0 has c = 0 (E ends with
    # its memory task). J#0: c = 30 + 5 = 35; it follows E#0 (through T) for 24/32 of
    # the threads and F#0 for 8/32. J ends the warp: a last period (0, 0) after J#0.
    e = BlockTasks("k:E", 1, [C(10), M(200)], succ={"k:T": 24, "k:F": 8}, entry=32)
    t = BlockTasks("k:T", 1, [C(30)], succ={"k:J": 24})
    f = BlockTasks("k:F", 1, [M(100), C(5)], succ={"k:J": 8})
    j = BlockTasks("k:J", 1, [M(200)], exit=32)
    got = [(q.block, q.index, q.c, q.m, q.passes, q.prev) for q in function_periods([e, t, f, j])]
    assert got == [("k:E", 0, 10, 200, 1, None),
                   ("k:F", 0, 0, 100, 1, ("k:E", 0)),
                   ("k:J", 0, pytest.approx(35), 200, pytest.approx(0.75), ("k:E", 0)),
                   ("k:J", 0, pytest.approx(35), 200, pytest.approx(0.25), ("k:F", 0)),
                   ("k:J", 1, 0, 0, 1, ("k:J", 0))]


# ---------------------------------------------------------------- Table 1 costs

COSTS_PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<12>;
  .reg .f32 %f<8>;
  .reg .b64 %rd<6>;
  .reg .pred %p<3>;
  .shared .align 4 .b32 s[32];
  .local .align 4 .b32 l[4];
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  ld.global.f32 %f1, [%rd2];
  ld.shared.u32 %r1, [s];
  ld.local.u32 %r2, [l];
  add.s32 %r3, %r1, 1;
  add.f32 %f2, %f1, %f1;
  mul.wide.s32 %rd3, %r3, 4;
  fma.rn.f32 %f3, %f1, %f2, %f2;
  rem.s32 %r4, %r3, %r2;
  abs.s32 %r5, %r4;
  shl.b32 %r6, %r5, 2;
  sqrt.rn.f32 %f4, %f3;
  cvt.rzi.s32.f32 %r7, %f4;
  setp.lt.s32 %p1, %r7, %r6;
  div.rn.f32 %f5, %f4, 0f40000000;
  st.f32 [%rd2], %f5;
  atom.global.add.u32 %r8, [%rd2], 1;
  st.global.v4.f32 [%rd2], {%f1, %f2, %f3, %f4};
  @%p1 bra $L1;
  st.shared.u32 [s], %r8;
$L1:
  ret;
}
"""


def test_table1_rows_and_fallbacks():
    fn = ptxc.parse(COSTS_PTX).kernels[0]
    got = [(i.full_opcode, cost_name(i) if not is_memory_access(i) else "memory",
            instruction_cost(i, P260)) for i in fn.instructions() if not i.is_phi]
    assert got == [
        ("ld.param.u64", "cost.const", 22), ("cvta.to.global.u64", "cost.mov", 22),
        ("ld.global.f32", "memory", 200), ("ld.shared.u32", "cost.shared", 38),
        ("ld.local.u32", "memory", 200),        # local memory is device memory
        ("add.s32", "cost.add.int_const", 22), ("add.f32", "cost.add.float_reg", 65),
        ("mul.wide.s32", "cost.mul.int_const", 44), ("fma.rn.f32", "cost.mad.float_reg", 130),
        ("rem.s32", "cost.div.int_reg", 753), ("abs.s32", "cost.neg.int_reg", 22),
        ("shl.b32", "cost.shift.int_const", 64), ("sqrt.rn.f32", "cost.special", 65),
        ("cvt.rzi.s32.f32", "cost.cvt", 65), ("setp.lt.s32", "cost.setp.int_reg", 62),
        ("div.rn.f32", "cost.div.float_const", 748),
        ("st.f32", "memory", 200),              # generic: the address may be global
        ("atom.global.add.u32", "memory", 200), ("st.global.v4.f32", "memory", 200),
        ("bra", "cost.branch", 22), ("st.shared.u32", "cost.shared", 38),
        ("ret", "cost.branch", 22)]
    sizes = {i.full_opcode: access_bytes(i) for i in fn.instructions() if is_memory_access(i)}
    assert sizes == {"ld.global.f32": 4, "ld.local.u32": 4, "st.f32": 4,
                     "atom.global.add.u32": 4, "st.global.v4.f32": 16}


def test_missing_parameter_is_one_error():
    # cost.special falls back to cost.div.float_reg (params.KINDLESS); with
    # neither, the model has no value for it
    fn = ptxc.parse(COSTS_PTX).kernels[0]
    vals = gtx260_values()
    del vals["cost.special"], vals["cost.div.float_reg"]
    p = ModelParams("toy", vals, {})
    sqrt = next(i for i in fn.instructions() if i.opcode == "sqrt")
    with pytest.raises(PtxcError, match="GPU model 'toy' has no value for the model "
                                        "parameter 'cost.special'"):
        instruction_cost(sqrt, p)


# ---------------------------------------------------------------- kernels

REGS = Registers(16, "test: fixed")


@pytest.fixture(scope="module")
def ls():
    return ptxc.load(LS_PTX)


def run(module, kernel, grid, block, args, mode="hybrid"):
    return ptxc.launch(module, kernel, (grid, 1, 1), (block, 1, 1), args, mode=mode,
                       memory_counters=True).to_dict()


def test_proportion_of_ls_mix(ls):
    # ls_mix, one warp, straight line (tests/cuda/luo_suda.sm90.ptx), Table 1 costs:
    #   3 ld.param (cost.const 22)          66     cvta x 2 (cost.mov 22)     44
    #   mov %tid.x (cost.mov)               22     mul.wide.s32 r, 4 (mul int_const) 44
    #   add.s64 reg (add int_reg)           65     ld.global            memory 200
    #   add.s32 reg (add int_reg)           65     mul.lo.s32 r, 3 (mul int_const)   44
    #   xor.b32 reg (xor int_reg)           62     sub.s32 reg (sub int_reg)         65
    #   add.s64 reg (add int_reg)           65     st.global            memory 200
    #   ret (cost.branch)                   22
    # computation 564, memory 400: P = 564 / 964 = 0.585062; the same static (each
    # instruction runs once per warp).
    prof = run(ls, "ls_mix", 1, 32, [np.arange(32, dtype=np.int32),
                                      np.zeros(32, np.int32), 5])
    for reading in ("executed", "static"):
        r = analyse(ls, prof, "gtx260", REGS, params=P260, readings=[f"proportion={reading}"])
        assert r["prediction"].proportion == pytest.approx(564 / 964)
        assert r["inputs"].static_costs == (564, 400)
    # ls_mix's periods: (66+44+22+44+65 = 241, ld 200) type 1, (65+44+62+65+65 = 301,
    # st 200) type 1, (ret 22, 0) type 1. N_act = 1 (one warp), share 1,
    # P = 0.585 >= c: CPD = CPD2 = a = 3 at N_act = 1 (sqrt(0)).
    # T = ceil(241/3) + ceil(301/3) + ceil(22/3) = 81 + 101 + 8 = 190
    p = r["prediction"]
    assert [(x.c, x.m, x.kind) for x in p.periods] == [(241, 200, 1), (301, 200, 1),
                                                        (22, 0, 1)]
    assert p.cpd == 3 and p.cycles == 190


def test_static_and_executed_proportion_differ_on_a_loop(ls):
    # ls_stream (PTX): bb0 = 3 ld.param (66) + setp.lt.s32 r, 1 (setp int_const 62) +
    # bra (22) = 150. bb1 = mov x5 (110) + mul.lo.s32 reg (136) + mad.lo.s32 reg (201)
    # + cvta x2 (44) + mul.wide r, 4 x2 (88) + add.s64 r, 393216 (22) + add.s64 reg x2
    # (130) = 731. Loop: 8 ld + 8 st, one memory task, 3200; tail add.s64 reg x2 (130)
    # + add.s32 r, 1 (22) + setp reg (62) + bra (22) = 236. Exit: ret 22.
    # Static: (150 + 731 + 236 + 22) / (1139 + 3200) = 1139 / 4339.
    # Executed, one warp per SM running R = 32 rounds: (903 + 236 x 32) / (... + 3200 x 32)
    # = 8455 / 110855.
    prof = run(ls, "ls_stream", 24, 32, [np.zeros(8 * 24576, np.float32),
                                         np.zeros(8 * 24576, np.float32), 32])
    st = analyse(ls, prof, "gtx260", REGS, params=P260, readings=["proportion=static"])
    ex = analyse(ls, prof, "gtx260", REGS, params=P260)
    assert st["prediction"].proportion == pytest.approx(1139 / 4339)
    assert ex["prediction"].proportion == pytest.approx(8455 / 110855)


def test_n_trans_from_counters(ls):
    # ls_stream's loads and stores are coalesced 4-byte accesses: 4 sectors (1 line)
    # per request; its one memory task: D = 16 x 4 = 64 bytes, N_trans = 16 x 4 = 64
    # (16 x 1 = 16 with n_trans=lines): Warp_bwt = 32 x 64 / (64 x 200) = 0.16
    # (32 x 64 / (16 x 200) = 0.64).
    prof = run(ls, "ls_stream", 24, 32, [np.zeros(8 * 24576, np.float32),
                                         np.zeros(8 * 24576, np.float32), 32])
    for reading, trans, bw in (("sectors", 64, 0.16), ("lines", 16, 0.64)):
        r = analyse(ls, prof, "gtx260", REGS, params=P260, readings=[f"n_trans={reading}"])
        (loop,) = [b for fb in r["inputs"].functions for b in fb if b.key.endswith("BB1_2")]
        assert [(t.memory, t.cost, t.bytes, t.transactions) for t in loop.tasks] == [
            (True, 3200, 64, trans), (False, 236, 0, 0)]
        assert r["prediction"].warp_bwt == pytest.approx(bw)


# ---------------------------------------------------------------- section 4.2

WARPS = (1, 2, 4, 8, 16, 32)
ROUNDS = 128        # rounds of 24 x 32 threads: the same data for every W


def launch_for(w):
    """W warps per SM with the same data: 24 CTAs of 32 W threads (one per SM),
    or for W = 32, 48 CTAs of 512 threads (two per SM; 16 registers per thread:
    2 x 8192 of the 16384 registers). Every thread runs R = 128 / W rounds."""
    return (24, 32 * w) if w <= 16 else (48, 512)


def cpd_by_hand(prop, n, regime=True):
    c1 = (0.5 - prop) * (n - 11) + 3
    c2 = 80 * (prop - 0.5) ** 2 / 31 * math.sqrt(31 ** 2 - (n - 32) ** 2) + 3
    return max(1.0, c2 if regime and prop >= 0.5 else min(c1, c2))


def up(x):
    return math.ceil(x - 1e-9)


def stream_by_hand(w, lines=False):
    # ls_stream with W warps, R = 128 / W rounds each; per warp (weights = passes per
    # warp: share x passes / N_act with N_act = W): bb0 (150) and bb1 (731) carry into
    # the loop's first load; every later round starts after the tail (236):
    #   c0 = (881 + 236 (R - 1)) / R;  m = 3200 (16 accesses).
    # Period loop#0 after start (1 pass): type 2; after itself (R - 1 passes): type 4;
    # the exit (236 + 22 = 258, 0) after loop#0: type 3.
    # P = (903 + 236 R) / (903 + 236 R + 3200 R). MPD: K = 90.0966 / (24 x Warp_bwt):
    # 23.46 (sectors) or 5.866 (lines) -> min{W, 23} or min{W, 5}.
    r = ROUNDS // w
    c0 = (881 + 236 * (r - 1)) / r
    prop = (903 + 236 * r) / (903 + 3436 * r)
    k = cpd_by_hand(prop, w)
    mp = min(w, 5 if lines else 23)
    rounds = math.floor(w / mp - 1 + 1e-9)
    t2 = up(w * c0 / k) + max(3200 - (w - 1) * c0, 0)
    tp = max(3200 * rounds - (w - 1) * c0, 0)
    t4 = up(w * c0 / k) + tp + max(3200 - ((w - 1) * c0 + tp), 0)
    t3 = up(w * 258 / k) + max(3200 * rounds - (w - 1) * 258, 0)
    return t2 + (r - 1) * t4 + t3


def compute_by_hand(w, regime=True):
    # ls_compute: bb0 150, bb1 (mov x5 110, mad reg 201, mul.lo reg 136, mul.wide x2 88,
    # cvta x2 44, add.s64 reg x2 130) = 709; loop: ld (200), 32 fma.rn.f32 r, imm, imm
    # (cost.mad.float_const 44: 1408), st (200), tail 236; exit 22.
    # Periods: loop#0 (c0 = (859 + 236 (R - 1)) / R >= 236 > 200, 200), loop#1
    # (1408, 200), exit (258, 0): all type 1 (c >= m after c >= m).
    # P = (881 + 1644 R) / (881 + 2044 R).
    r = ROUNDS // w
    c0 = (859 + 236 * (r - 1)) / r
    k = cpd_by_hand((881 + 1644 * r) / (881 + 2044 * r), w, regime)
    return r * up(w * c0 / k) + r * up(w * 1408 / k) + up(w * 258 / k)


@pytest.fixture(scope="module")
def profiles(ls):
    """{(kernel, W): profile}: each launch runs once (the readings are analysis)."""
    n = 7 * 24576 + ROUNDS * 768            # 8 planes 24576 floats apart, R x T each
    out = {}
    for kernel in ("ls_stream", "ls_compute"):
        for w in WARPS:
            grid, block = launch_for(w)
            out[kernel, w] = run(ls, kernel, grid, block, [np.zeros(n, np.float32),
                                                          np.zeros(n, np.float32),
                                                          ROUNDS // w])
    return out


def sweep(ls, profiles, kernel, readings=()):
    out = []
    for w in WARPS:
        r = analyse(ls, profiles[kernel, w], "gtx260", REGS, params=P260,
                    readings=list(readings))
        assert r["prediction"].active_warps == w
        out.append(r["prediction"])
    return out


def test_shape_memory_bound(ls, profiles):
    # Hand values at the ends: W = 1 (R = 128): c0 = (881 + 236 x 127) / 128 = 241.039;
    # P = 31111 / 440711 = 0.070593: CPD1 = 0.429407 x -10 + 3 < 1 -> CPD 1;
    # T2 = T4 = ceil(241.039) + 3200 = 3442; T3 = 258: total 128 x 3442 + 258 = 440834.
    # W = 32 (R = 4): c0 = (881 + 708) / 4 = 397.25; P = 1847 / 14647 = 0.126101:
    # CPD1 = 0.373899 x 21 + 3 = 10.85188 (CPD2 = 80 x 0.373899^2 + 3 = 14.18404);
    # T2 = ceil(32 x 397.25 / 10.85188) + max{3200 - 31 x 397.25, 0} = ceil(1171.41)
    # = 1172 = T4 (MPD 23: floor(32/23 - 1) = 0, no T_p); T3 = ceil(760.79) = 761:
    # 4 x 1172 + 761 = 5449.
    assert stream_by_hand(1) == 440834 and stream_by_hand(32) == 5449
    preds = sweep(ls, profiles, "ls_stream")
    got = [p.cycles for p in preds]
    assert got == pytest.approx([stream_by_hand(w) for w in WARPS])
    # falls as warps grow: the latency is hidden by the other warps' computation
    # (T_c = m - (N_act - 1) c) until none is left; with 32-byte sectors the GTX 260's
    # MPD is 23, so its bandwidth term (eq. 10) would start at 46 warps
    assert all(a > b for a, b in zip(got, got[1:]))
    assert preds[0].t_current > 0.9 * preds[0].cycles
    assert preds[-1].t_current == preds[-1].t_previous == 0


def test_shape_memory_bound_bandwidth(ls, profiles):
    # n_trans=lines: one transaction per coalesced request, MPD = min{W, 5}: the
    # bandwidth term T_p (eq. 10, 12) takes over from W = 10 (floor(W/5 - 1) >= 1).
    # W = 16 (R = 8): c0 = (881 + 236 x 7) / 8 = 316.625; P = 2791 / 28391 = 0.098306:
    # CPD1 = 0.401694 x 5 + 3 = 5.00847 (CPD2 14.05641); 16 x 316.625 / CPD = 1011.49
    # -> 1012; floor(16/5 - 1) = 2: T2 = 1012 + max{3200 - 15 x 316.625, 0} = 1012;
    # T4 = 1012 + max{6400 - 4749.375, 0} = 2662.625 (T_c = 0);
    # T3 = ceil(16 x 258 / CPD = 824.20) + max{6400 - 15 x 258, 0} = 825 + 2530 = 3355:
    # 1012 + 7 x 2662.625 + 3355 = 23005.375.
    # W = 32 (R = 4): floor(32/5 - 1) = 5: T4 = 1172 + max{16000 - 31 x 397.25, 0}
    # = 1172 + 3685.25; T3 = 761 + max{16000 - 31 x 258, 0} = 761 + 8002:
    # 1172 + 3 x 4857.25 + 8763 = 24506.75.
    assert stream_by_hand(16, lines=True) == 23005.375
    assert stream_by_hand(32, lines=True) == 24506.75
    preds = sweep(ls, profiles, "ls_stream", ["n_trans=lines"])
    got = [p.cycles for p in preds]
    assert got == pytest.approx([stream_by_hand(w, lines=True) for w in WARPS])
    assert [p.mpd for p in preds] == [1, 2, 4, 5, 5, 5]
    assert all(a > b for a, b in zip(got[:5], got[1:5]))       # falls up to 16 warps,
    assert abs(got[5] / got[4] - 1) < 0.1                      # then flat (+6.5 %):
    assert preds[-1].t_previous > preds[-1].t_compute          # the bandwidth limit


def test_shape_compute_bound(ls, profiles):
    # W = 1 (R = 128): c0 = (859 + 236 x 127) / 128 = 240.867; P = 211313 / 262513 =
    # 0.804962 >= c: CPD = CPD2 = 3 (N = 1): 128 x ceil(80.289) + 128 x ceil(469.33)
    # + ceil(258 / 3 = 86) = 128 x 81 + 128 x 470 + 86 = 70614.
    # W = 32 (R = 4): c0 = 1567 / 4 = 391.75; P = 7457 / 9057 = 0.823341: CPD2 =
    # 80 x 0.323341^2 + 3 = 11.36396: 4 x ceil(1103.14) + 4 x ceil(3964.82)
    # + ceil(726.51) = 4416 + 15860 + 727 = 21003.
    assert compute_by_hand(1) == 70614 and compute_by_hand(32) == 21003
    preds = sweep(ls, profiles, "ls_compute")
    got = [p.cycles for p in preds]
    assert got == pytest.approx([compute_by_hand(w) for w in WARPS])
    assert all(a > b for a, b in zip(got, got[1:]))            # falls ...
    assert got[-2] / got[-1] < 1.1 < got[0] / got[1]            # ... and flattens (CPD2's arc)
    assert all(p.t_current == p.t_previous == 0 for p in preds)
    # cpd=min (eq. 3's line for every P): CPD1 = (0.5 - P)(W - 11) + 3 falls with W
    # when P > c and is below 1 from W = 17 on: the time rises again.
    low = [p.cycles for p in sweep(ls, profiles, "ls_compute", ["cpd=min"])]
    assert low == pytest.approx([compute_by_hand(w, regime=False) for w in WARPS])
    assert low[-1] > low[-2] > low[-3]


def test_hybrid_equals_full(ls):
    n = 7 * 24576 + ROUNDS * 768
    args = [np.zeros(n, np.float32), np.zeros(n, np.float32), ROUNDS // 4]
    preds = [analyse(ls, run(ls, "ls_stream", 24, 128, args, mode), "gtx260", REGS,
                     params=P260)["prediction"].cycles for mode in ("hybrid", "full")]
    assert preds[0] == preds[1] == stream_by_hand(4)


# ---------------------------------------------------------------- commands

def test_params_file(tmp_path):
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"device": "X", "params": {"a": 321.5}}))
    p = load_params("h100", str(f))
    assert p.a == 321.5 and p.sources["a"].startswith("measured")
    f.write_text(json.dumps({"params": {"zz": 1}}))
    with pytest.raises(PtxcError, match="unknown parameter 'zz'"):
        load_params("h100", str(f))
    f.write_text("{")
    with pytest.raises(PtxcError, match="not JSON"):
        load_params("h100", str(f))


STRIDED = ["--kernel", "strided", "--grid", "2", "--block", "32",
           "--arg", "0=arange:f32:2048", "--arg", "1=zeros:f32:64", "--arg", "2=32"]


def test_cli_predict_text_json_sqlite(tmp_path):
    r = CliRunner().invoke(cli, ["predict", TOPDOWN_PTX, *STRIDED, "--regs", "32",
                                 "--topdown", "--gpu", "a100"])
    assert r.exit_code == 0, r.output
    assert "predicted time (modelled)" in r.output and "divergence" in r.output
    assert "calculate periods (section 3.5)" in r.output
    db = tmp_path / "p.sqlite"
    r = CliRunner().invoke(cli, ["predict", TOPDOWN_PTX, *STRIDED, "--regs", "32",
                                 "--topdown", "--format", "json", "--report", str(db),
                                 "--reading", "eq2=printed"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["model"]["readings"]["eq2"] == "printed"
    # 2 CTAs x 1 warp: loads touch 32 lines each, stores 1: replays 2 x 31 = 62
    assert d["topdown"]["replays"]["global"] == 62
    assert d["predicted_cycles"] == pytest.approx(sum(x["cycles"] for x in d["periods"]))
    con = sqlite3.connect(db)
    rows = con.execute("SELECT node, fraction FROM topdown WHERE level = 1").fetchall()
    assert sum(f for _, f in rows) == pytest.approx(1.0)
    n = con.execute("SELECT COUNT(*) FROM predict_periods").fetchone()[0]
    assert n == len(d["periods"])


def test_cli_predict_errors():
    r = CliRunner().invoke(cli, ["predict", TOPDOWN_PTX, *STRIDED, "--gpu", "k80"])
    assert r.exit_code == 1
    assert r.output.strip().splitlines() == [
        "ptxc: error: unknown GPU model 'k80' (choose one of h100, a100, v100, t4, rtx2060, "
        "gtx260, gtx1070, quadro-rtx4000)"]
    r = CliRunner().invoke(cli, ["predict", TOPDOWN_PTX, *STRIDED, "--block", "4096"])
    assert r.exit_code == 1 and "Traceback" not in r.output
    r = CliRunner().invoke(cli, ["predict", TOPDOWN_PTX, *STRIDED, "--reading", "eq2"])
    assert r.exit_code == 1
    assert r.output.strip().splitlines() == [
        "ptxc: error: reading 'eq2' is one of per_sm, printed, not ''"]


BANK2 = ["--pass=count", "--kernel", "bank2", "--grid", "1", "--block", "32",
         "--arg", "0=zeros:f32:32", TOPDOWN_PTX]


def test_opt_topdown():
    # bank2 (tests/test_topdown.py): 2 shared bank conflicts, no other replays.
    r = CliRunner().invoke(cli, ["opt", "--topdown", "--memory-counters", "--gpu", "t4", *BANK2])
    assert r.exit_code == 0, r.output
    assert "replays (exact)  global 0  shared 2  width 0" in r.output
    r = CliRunner().invoke(cli, ["opt", "--topdown", "--memory-counters", "--format", "json",
                                 *BANK2])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert "count" in d and d["topdown"]["replays"]["shared"] == 2
    assert sum(d["topdown"]["level1"].values()) == pytest.approx(1.0)


def test_predict_pass_readings():
    r = CliRunner().invoke(cli, ["opt", "--pass=count,predict{gpu=gtx260,readings=eq2=printed;"
                                 "cpd=min}", "--memory-counters", *BANK2[1:]])
    assert r.exit_code == 0, r.output
    assert "readings  eq2=printed cpd=min cpd_floor=one" in r.output


def test_opt_topdown_needs_memory_counters():
    r = CliRunner().invoke(cli, ["opt", "--topdown", *BANK2])
    assert r.exit_code == 1
    assert r.output.strip().splitlines() == [
        "ptxc: error: kernel 'bank2': the model needs the memory counters "
        "(run the launch with --memory-counters)"]


PROFILE = ["profile", "--launch", "strided:2:32", "--arg", "strided:0=arange:f32:2048",
           "--arg", "strided:1=zeros:f32:64", "--arg", "strided:2=32",
           "--launch", "partial:1:40", "--arg", "partial:0=ones:f32:40",
           "--arg", "partial:1=zeros:f32:40", "--kernel", "strided", "--kernel", "partial"]


def test_profile_topdown(tmp_path):
    # strided: 2 CTAs x 1 warp, 32 lines per load + 1 per store: 2 x 31 = 62
    # global replays; partial (block 40): 24 - 480 / 32 = 9 branch-loss slots
    # (tests/test_topdown.py), one CTA so f = 1.
    db = tmp_path / "p.sqlite"
    r = CliRunner().invoke(cli, [*PROFILE, "--topdown", "--format", "json", "--report", str(db),
                                 TOPDOWN_PTX])
    assert r.exit_code == 0, r.output
    pred = {p["kernel"]: p for p in json.loads(r.output)["predict"]}
    assert pred["strided"]["topdown"]["replays"]["global"] == 62
    td = pred["partial"]["topdown"]
    assert td["level1"]["divergence"] * td["slots"] == pytest.approx(9)
    n = sqlite3.connect(db).execute("SELECT COUNT(*) FROM topdown").fetchone()[0]
    assert n == 2 * 13          # two launches x the 13 nodes of topdown.NODES
    r = CliRunner().invoke(cli, [*PROFILE, "--topdown", TOPDOWN_PTX])
    assert r.exit_code == 0 and "Predicted time and TopDown" in r.output


def test_profile_topdown_one_module(tmp_path):
    r = CliRunner().invoke(cli, ["profile", "--topdown", TOPDOWN_PTX, TOPDOWN_PTX])
    assert r.exit_code == 2 and "--topdown profiles one module" in r.output


def test_profile_topdown_without_buffers():
    # A hybrid row given no buffers (strided's slice reads none) is run again
    # with the memory counters on zero-filled placeholder buffers: the
    # addresses, hence the replays, are those of test_profile_topdown
    # (2 CTAs x 31 extra lines of the a[t * 32] load = 62), and the full
    # row (placeholders too) predicts the same.
    base = ["profile", "--launch", "strided:2:32", "--kernel", "strided", "--topdown",
            "--format", "json"]
    preds = []
    for mode in ("hybrid", "full"):
        r = CliRunner().invoke(cli, [*base, "--arg", "strided:2=32", "--mode", mode, TOPDOWN_PTX])
        assert r.exit_code == 0, r.output
        (pred,) = json.loads(r.output)["predict"]
        assert pred["topdown"]["replays"]["global"] == 62
        preds.append((pred["inputs"], pred["periods"], pred["topdown"]))
    assert preds[0] == preds[1]


def test_profile_topdown_row_it_cannot_run():
    # Without the stride the hybrid row runs (no branch reads it) but the
    # addresses need it: the row is listed with the reason, not predicted,
    # and the other rows are not lost.
    r = CliRunner().invoke(cli, ["profile", "--launch", "strided:2:32", "--kernel", "strided",
                                 "--launch", "partial:1:40", "--kernel", "partial",
                                 "--topdown", "--format", "json", TOPDOWN_PTX])
    assert r.exit_code == 0, r.output
    pred = {p["kernel"]: p for p in json.loads(r.output)["predict"]}
    assert "missing argument for parameter 2" in pred["strided"]["error"]
    assert pred["partial"]["topdown"]["level1"]["divergence"] * \
        pred["partial"]["topdown"]["slots"] == pytest.approx(9)
    r = CliRunner().invoke(cli, ["profile", "--launch", "strided:2:32", "--kernel", "strided",
                                 "--topdown", TOPDOWN_PTX])
    assert r.exit_code == 0 and "strided: not predicted: " in r.output


def test_group_without_a_value_is_costed_as_its_table1_cell():
    # params.KINDLESS: the special functions cost a float division (Table 1's
    # div row, float register operands: 783 in this test's Table 1)
    fn = ptxc.parse(COSTS_PTX).kernels[0]
    vals = gtx260_values()
    del vals["cost.special"]
    p = ModelParams("toy", vals, {"cost.div.float_reg": "Table 1"})
    sqrt = next(i for i in fn.instructions() if i.opcode == "sqrt")
    assert instruction_cost(sqrt, p) == 783
    assert "costed as cost.div.float_reg" in p.sources["cost.special"]
