"""Closed forms of the memory counters for the common warp shapes (issue 25):
the helpers of memcount_ir.py with a cheap answer first where the lanes'
addresses allow one, computing exactly the same numbers (docs/metrics.md,
"Memory access counters"; tests/test_memcount_fast.py compares both ways).

* ``ptxc_bank_tx`` (shared-memory transactions of one phase = the largest
  number of distinct words in one bank): 1 when every executing lane is in a
  different bank (as before), and 1 when every executing lane's word lies
  within 32 words of the smallest: distinct words less than 32 apart are in
  distinct banks (``word % 32``), so this covers contiguous, uniform and
  half-uniform warps (a 16 x 16 tile row per half: matrixMul), broadcasts
  and any mix of them inside one 32-word window. Otherwise the first
  occurrences of the words (``ptxc_firsts``) are counted per bank without a
  loop: 8-bit counters packed 8 banks to an i64 (lane k adds
  ``1 << 8 * (bank % 8)`` to the i64 of group ``bank / 8``: at most 32 per
  bank, no carry), one vector add per group, then the largest byte. The
  general helper loops once per bank present (16 rounds for a half warp
  repeated in the other half: matrixMul's ``tileB[k][tx]``).
* ``ptxc_mem_global_s`` / ``ptxc_mem_shared_S_W_s``: the counters of a
  full warp whose half warps the generated code has found contiguous (lane
  i at lo + i * S, S <= 32) or uniform, from four scalars: the first and
  last lane's address of each half (mem_count_shape.py, from the memory
  fast path's lane shapes, backends/llvm/ops/fast_access.py). Steps of at
  most 32 bytes skip no 32-byte sector and no 128-byte line, so a half
  touches every sector of ``[lo >> 5, hi >> 5]`` and every line of
  ``[lo >> 7, hi >> 7]``; the warp touches the union of the halves'
  intervals (sizes added, overlap taken off), which gives requests,
  sectors, lines, requested bytes (32 x S) and the histogram bin. Shared,
  one phase (S <= bank width): words from ``min(lo) >> w`` to
  ``max(hi) >> w`` less than 32 apart -> 1 transaction. Anything else
  calls the general helper with the lane addresses.

``PTXC_FAST_COUNT=0`` turns them off (the general helpers of memcount_ir.py
only) and keeps a launch with memory counters at level 0 throughout (no
tier-up inside the launch, backends/llvm/tier_up.py): the code before
issue 25's memory-counter work, for tests and before/after measurements
(bench/app_rates.py --clocks host,model:PTXC_FAST_COUNT=0,model).
"""
from __future__ import annotations

import os

from ptxc.backends.llvm.instruments.memcount_ir import (BANKS, bank_tx_head, global_tally,
                                                      shared_tally, spread)

DECLS = ("declare i64 @llvm.vector.reduce.umin.v32i64(<32 x i64>)",
         "declare i64 @llvm.vector.reduce.umax.v32i64(<32 x i64>)",
         "declare i32 @llvm.vector.reduce.or.v32i32(<32 x i32>)",
         "declare i64 @llvm.vector.reduce.add.v32i64(<32 x i64>)",
         "declare i8 @llvm.vector.reduce.umax.v32i8(<32 x i8>)",
         "declare i64 @llvm.umin.i64(i64, i64)", "declare i64 @llvm.umax.i64(i64, i64)")


def enabled() -> bool:
    """Whether the closed forms are on (PTXC_FAST_COUNT, default 1)."""
    return os.environ.get("PTXC_FAST_COUNT", "1") != "0"


def _bank_counts() -> str:
    """%mx (i8) = the largest number of lanes of %fv (<32 x i1>: one lane
    per distinct word) that share a bank of %b (<32 x i32>)."""
    lines = ["  %grp = lshr <32 x i32> %b, splat (i32 3)",
             "  %low = and <32 x i32> %b, splat (i32 7)",
             "  %sh32 = shl <32 x i32> %low, splat (i32 3)",
             "  %sh = zext <32 x i32> %sh32 to <32 x i64>",
             "  %inc = shl <32 x i64> splat (i64 1), %sh"]
    acc = "poison"
    for j in range(4):
        lines += [f"  %g{j} = icmp eq <32 x i32> %grp, splat (i32 {j})",
                  f"  %s{j} = and <32 x i1> %g{j}, %fv",
                  f"  %v{j} = select <32 x i1> %s{j}, <32 x i64> %inc, <32 x i64> zeroinitializer",
                  f"  %c{j} = call i64 @llvm.vector.reduce.add.v32i64(<32 x i64> %v{j})",
                  f"  %cv{j} = insertelement <4 x i64> {acc}, i64 %c{j}, i32 {j}"]
        acc = f"%cv{j}"
    lines += [f"  %cb = bitcast <4 x i64> {acc} to <32 x i8>",
              "  %mx = call i8 @llvm.vector.reduce.umax.v32i8(<32 x i8> %cb)"]
    return "\n".join(lines)


BANK_TX = bank_tx_head("window") + f"""window:
{spread("%w", "wm")}
  %near = icmp ult i64 %hi, {BANKS}
  br i1 %near, label %one, label %words
one:
  ret i32 1
words:
  %firsts = call i32 @ptxc_firsts(<32 x i64> %w, i32 %m)
  %fv = bitcast i32 %firsts to <32 x i1>
{_bank_counts()}
  %worst = zext i8 %mx to i32
  ret i32 %worst
}}"""

def _interval(n: str, shift: int) -> str:
    """%n (i64) = how many of the units ``addr >> shift`` the union of the
    halves' intervals [lo0, hi0] and [lo1, hi1] holds."""
    lines = [f"  %{n}.{v} = lshr i64 %{v}, {shift}" for v in ("lo0", "hi0", "lo1", "hi1")]
    lines += [f"  %{n}.s0 = sub i64 %{n}.hi0, %{n}.lo0",
              f"  %{n}.s1 = sub i64 %{n}.hi1, %{n}.lo1",
              f"  %{n}.s = add i64 %{n}.s0, %{n}.s1",
              f"  %{n}.both = add i64 %{n}.s, 2",
              f"  %{n}.mn = call i64 @llvm.umin.i64(i64 %{n}.hi0, i64 %{n}.hi1)",
              f"  %{n}.mx = call i64 @llvm.umax.i64(i64 %{n}.lo0, i64 %{n}.lo1)",
              f"  %{n}.apart = icmp ult i64 %{n}.mn, %{n}.mx",
              f"  %{n}.ov0 = sub i64 %{n}.mn, %{n}.mx",
              f"  %{n}.ov1 = add i64 %{n}.ov0, 1",
              f"  %{n}.ov = select i1 %{n}.apart, i64 0, i64 %{n}.ov1",
              f"  %{n} = sub i64 %{n}.both, %{n}.ov"]
    return "\n".join(lines)


SCALARS = "i1 %ok, i64 %lo0, i64 %hi0, i64 %lo1, i64 %hi1"

MEM_GLOBAL_S = f"""define internal void @ptxc_mem_global_s(ptr %cnt, i64 %base, ptr %addrs, i32 %m, i64 %nbytes, {SCALARS}) {{
entry:
  br i1 %ok, label %closed, label %general
general:
  call void @ptxc_mem_global(ptr %cnt, i64 %base, ptr %addrs, i32 %m, i64 %nbytes)
  ret void
closed:
{_interval("sec", 5)}
{_interval("lin", 7)}
  %bytes = mul i64 32, %nbytes
{global_tally("%sec", "%lin", "%bytes")}
  ret void
}}"""


def shared_helper_s(general: str, nbytes: int, bank_bytes: int) -> tuple[str, str]:
    """(name, IR text) of the closed form in front of the general shared
    counter ``general`` (one phase: ``nbytes`` <= ``bank_bytes``)."""
    name = f"{general}_s"
    shift = bank_bytes.bit_length() - 1
    return name, f"""define internal void @{name}(ptr %cnt, i64 %base, ptr %addrs, i32 %m, {SCALARS}) {{
entry:
  %lo = call i64 @llvm.umin.i64(i64 %lo0, i64 %lo1)
  %hi = call i64 @llvm.umax.i64(i64 %hi0, i64 %hi1)
  %wlo = lshr i64 %lo, {shift}
  %whi = lshr i64 %hi, {shift}
  %span = sub i64 %whi, %wlo
  %near = icmp ult i64 %span, {BANKS}
  %one = and i1 %ok, %near
  br i1 %one, label %closed, label %general
general:
  call void @{general}(ptr %cnt, i64 %base, ptr %addrs, i32 %m)
  ret void
closed:
{shared_tally("1", "1", str(32 * nbytes))}
  ret void
}}"""


HELPERS = {"ptxc_bank_tx": BANK_TX}
