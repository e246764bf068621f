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
``PTXC_FAST_COUNT=0`` turns them off (the general helpers of memcount_ir.py
only) and keeps a launch with memory counters at level 0 throughout (no
tier-up inside the launch, backends/llvm/tier_up.py): the code before
issue 25's memory-counter work, for tests and before/after measurements
(bench/app_rates.py --clocks host,model:PTXC_FAST_COUNT=0,model).
"""
from __future__ import annotations

import os

from ptxc.backends.llvm.instruments.memcount_ir import BANKS, _splat_of

DECLS = ("declare i64 @llvm.vector.reduce.umin.v32i64(<32 x i64>)",
         "declare i64 @llvm.vector.reduce.umax.v32i64(<32 x i64>)",
         "declare i32 @llvm.vector.reduce.or.v32i32(<32 x i32>)",
         "declare i64 @llvm.vector.reduce.add.v32i64(<32 x i64>)",
         "declare i8 @llvm.vector.reduce.umax.v32i8(<32 x i8>)")


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


BANK_TX = f"""define internal i32 @ptxc_bank_tx(<32 x i64> %w, i32 %m) {{
entry:
  %none = icmp eq i32 %m, 0
  br i1 %none, label %zero, label %banks
zero:
  ret i32 0
banks:
  %mv = bitcast i32 %m to <32 x i1>
  %b64 = and <32 x i64> %w, splat (i64 {BANKS - 1})
  %b = trunc <32 x i64> %b64 to <32 x i32>
  %bits0 = shl <32 x i32> splat (i32 1), %b
  %bits = select <32 x i1> %mv, <32 x i32> %bits0, <32 x i32> zeroinitializer
  %u = call i32 @llvm.vector.reduce.or.v32i32(<32 x i32> %bits)
  %nb = call i32 @llvm.ctpop.i32(i32 %u)
  %nl = call i32 @llvm.ctpop.i32(i32 %m)
  %spread = icmp eq i32 %nb, %nl
  br i1 %spread, label %one, label %window
window:
  %wm = select <32 x i1> %mv, <32 x i64> %w, <32 x i64> splat (i64 -1)
  %lo = call i64 @llvm.vector.reduce.umin.v32i64(<32 x i64> %wm)
{_splat_of("lov", "%lo", "i64")}
  %d0 = sub <32 x i64> %w, %lov
  %d = select <32 x i1> %mv, <32 x i64> %d0, <32 x i64> zeroinitializer
  %hi = call i64 @llvm.vector.reduce.umax.v32i64(<32 x i64> %d)
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

HELPERS = {"ptxc_bank_tx": BANK_TX}
