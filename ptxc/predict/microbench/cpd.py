"""The CPD micro-benchmark (Luo & Suda 2011, section 3.4, eqs. 3-5) and the
bandwidth kernel of eq. (2).

The paper obtains a, b, c (eq. 3) and d (eq. 5) from "a micro benchmark"
without describing it; ptxc's is this. A kernel ``cpd_l<L>_k<K>`` walks a
fixed number of items with a grid-stride loop; per item a thread

  * computes one address (``and``, ``mul.wide``, ``add``: the item number
    masked into a small window that stays in the L1 cache),
  * issues L global loads (``ld.global.f32``, 128 bytes apart),
  * runs K dependent float instructions on its accumulator x: the first L
    add a loaded value (``add.rn.f32``), the rest alternate
    ``mul.rn.f32 x, x, s`` and ``add.rn.f32 x, x, v0``,
  * steps the loop (``add``, ``setp``, ``bra``).

Its computation instruction proportion P (section 3.4: the Table 1 time cost
of the computation instructions over that of all instructions) follows from
the body and the measured costs (:func:`proportion`); L and K are chosen for a
spread of P (:func:`choose`). Launched with N warps on every SM over the
same items (section 4.2: the same data for every warp count), thread 0 of
each block records ``%smid`` and the ``%clock64`` at the block's start and,
after a barrier, at its end: the SM's time T in GPU clocks. Because the
window is cache-resident the loads never make the computation wait (every
calculate period is of type 1), so eq. (6), T = N_act c / CPD, gives the
measured CPD = N_act c / T, with c the computation cost of the busiest warp
(ptxc/predict/calibrate.py).

``copy_v4`` copies 16-byte vectors with a grid-stride loop; bytes moved /
time is GPU_bwt of eq. (2).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .kernel import Kernel, entry

TARGETS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
LOAD_COUNTS = (1, 2, 4, 8, 16)
MAX_K = 4096
WINDOW = 4096                   # floats of the cache-resident window (16 KiB)
LOAD_STRIDE = 32                # floats between a body's loads (128 bytes)


@dataclass(frozen=True)
class Instr:
    text: str
    row: str            # the Table 1 row (or opcode) that costs it
    kind: str | None    # its operand kind; None for a memory access
    memory: bool = False


def body(loads: int, k: int) -> list:
    """The loop body of ``cpd_l<loads>_k<k>``, one Instr per PTX instruction."""
    if not 1 <= loads <= k:
        raise ValueError("a CPD kernel needs 1 <= loads <= k")
    out = [Instr("and.b32 %r7, %r5, %r4;", "and", "int_reg"),
           Instr("mul.wide.u32 %rd5, %r7, 4;", "mul", "int_const"),
           Instr("add.s64 %rd6, %rd2, %rd5;", "add", "int_reg")]
    out += [Instr(f"ld.global.f32 %f{10 + q}, [%rd6+{4 * LOAD_STRIDE * q}];", "ld_st", None,
                  True) for q in range(loads)]
    out += [Instr(f"add.rn.f32 %f1, %f1, %f{10 + q};", "add", "float_reg")
            for q in range(loads)]
    for r in range(k - loads):
        out.append(Instr("mul.rn.f32 %f1, %f1, %f2;", "mul", "float_reg") if r % 2 == 0
                   else Instr("add.rn.f32 %f1, %f1, %f10;", "add", "float_reg"))
    out += [Instr("add.u32 %r5, %r5, %r6;", "add", "int_reg"),
            Instr("setp.lt.u32 %p1, %r5, %r3;", "setp", "int_reg"),
            Instr("@%p1 bra $L_item;", "bra", "int_const")]
    return out


def costs(instrs, params) -> tuple:
    """(computation cost, memory cost) of a body with ``params``' Table 1
    costs (ModelParams: ``cost.<row>.<kind>``, ``cost.ld_st``)."""
    comp = sum(params.values[f"cost.{i.row}.{i.kind}"] for i in instrs if not i.memory)
    mem = sum(params.values["cost.ld_st"] for i in instrs if i.memory)
    return comp, mem


def proportion(instrs, params) -> float:
    """P of section 3.4 for a loop body."""
    comp, mem = costs(instrs, params)
    return comp / (comp + mem)


def choose(params, targets=TARGETS, tolerance: float = 0.01) -> list:
    """(loads, k) pairs whose P is nearest each target (the fewest loads
    within ``tolerance`` of it), distinct, in increasing P."""
    step = params.values["cost.mul.float_reg"] / 2 + params.values["cost.add.float_reg"] / 2
    picks = {}
    for t in targets:
        best = None
        for loads in LOAD_COUNTS:
            # P(k) = (C0 + k step) / (C0 + k step + loads ld): solve for k, then round.
            base, _ = costs(body(loads, loads), params)
            mem = loads * params.values["cost.ld_st"]
            want = (t / (1 - t) * mem - (base - loads * step)) / step
            for k in sorted({loads, min(MAX_K, max(loads, math.floor(want))),
                             min(MAX_K, max(loads, math.ceil(want)))}):
                p = proportion(body(loads, k), params)
                if best is None or abs(p - t) < abs(best[0] - t):
                    best = (p, loads, k)
            if abs(best[0] - t) <= tolerance:
                break
        picks[(best[1], best[2])] = best[0]
    return sorted(picks, key=picks.get)


PARAMS = (("out", ".u64"), ("times", ".u64"), ("in", ".u64"), ("items", ".u32"),
          ("mask", ".u32"), ("s", ".f32"))


def kernel(loads: int, k: int) -> Kernel:
    """``cpd_l<loads>_k<k>``: out[tid] = x, times[3 block + 0..2] = smid, start, end."""
    name = f"cpd_l{loads}_k{k}"
    instrs = body(loads, k)
    regs = ("    .reg .pred %p<3>;\n    .reg .b32 %r<12>;\n"
            f"    .reg .f32 %f<{10 + loads}>;\n    .reg .b64 %rd<14>;")
    lines = [
        "mov.u64 %rd9, %clock64;",
        "ld.param.u64 %rd1, [out];",
        "ld.param.u64 %rd3, [times];",
        "ld.param.u64 %rd2, [in];",
        "cvta.to.global.u64 %rd2, %rd2;",
        "ld.param.u32 %r3, [items];",
        "ld.param.u32 %r4, [mask];",
        "ld.param.f32 %f2, [s];",
        "mov.u32 %r1, %ctaid.x;",
        "mov.u32 %r2, %ntid.x;",
        "mov.u32 %r8, %tid.x;",
        "mad.lo.u32 %r5, %r1, %r2, %r8;",
        "mov.u32 %r10, %r5;",
        "mov.u32 %r9, %nctaid.x;",
        "mul.lo.u32 %r6, %r9, %r2;",
        "mov.f32 %f1, 0f00000000;",
        "setp.ge.u32 %p1, %r5, %r3;",
        "@%p1 bra $L_done;",
        "$L_item:",
        '.pragma "nounroll";',
        *(i.text for i in instrs),
        "$L_done:",
        "cvta.to.global.u64 %rd1, %rd1;",
        "mul.wide.u32 %rd7, %r10, 4;",
        "add.s64 %rd8, %rd1, %rd7;",
        "st.global.f32 [%rd8], %f1;",
        "bar.sync 0;",
        "setp.ne.u32 %p2, %r8, 0;",
        "@%p2 bra $L_end;",
        "mov.u64 %rd10, %clock64;",
        "mov.u32 %r11, %smid;",
        "cvt.u64.u32 %rd11, %r11;",
        "cvta.to.global.u64 %rd3, %rd3;",
        "mul.wide.u32 %rd12, %r1, 24;",
        "add.s64 %rd13, %rd3, %rd12;",
        "st.global.u64 [%rd13], %rd11;",
        "st.global.u64 [%rd13+8], %rd9;",
        "st.global.u64 [%rd13+16], %rd10;",
        "$L_end:",
        "ret;",
    ]
    return Kernel(name, entry(name, PARAMS, regs, lines), PARAMS,
                  {"loads": loads, "k": k, "body": instrs})


COPY_PARAMS = (("dst", ".u64"), ("src", ".u64"), ("n16", ".u64"))


def copy_kernel() -> Kernel:
    """``copy_v4``: dst[i] = src[i] for n16 16-byte vectors, grid-stride."""
    lines = [
        "ld.param.u64 %rd1, [dst];",
        "ld.param.u64 %rd2, [src];",
        "ld.param.u64 %rd3, [n16];",
        "cvta.to.global.u64 %rd1, %rd1;",
        "cvta.to.global.u64 %rd2, %rd2;",
        "mov.u32 %r1, %ctaid.x;",
        "mov.u32 %r2, %ntid.x;",
        "mov.u32 %r3, %tid.x;",
        "mov.u32 %r4, %nctaid.x;",
        "mul.wide.u32 %rd4, %r1, %r2;",
        "cvt.u64.u32 %rd5, %r3;",
        "add.s64 %rd4, %rd4, %rd5;",
        "mul.wide.u32 %rd6, %r4, %r2;",
        "setp.ge.u64 %p1, %rd4, %rd3;",
        "@%p1 bra $L_end;",
        "$L_copy:",
        "shl.b64 %rd7, %rd4, 4;",
        "add.s64 %rd8, %rd2, %rd7;",
        "ld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd8];",
        "add.s64 %rd9, %rd1, %rd7;",
        "st.global.v4.u32 [%rd9], {%r5, %r6, %r7, %r8};",
        "add.s64 %rd4, %rd4, %rd6;",
        "setp.lt.u64 %p1, %rd4, %rd3;",
        "@%p1 bra $L_copy;",
        "$L_end:",
        "ret;",
    ]
    regs = "    .reg .pred %p<2>;\n    .reg .b32 %r<9>;\n    .reg .b64 %rd<10>;"
    return Kernel("copy_v4", entry("copy_v4", COPY_PARAMS, regs, lines), COPY_PARAMS)
