"""Warp-aggregated integer ``atom.add`` / ``red.add`` on global memory: one
locked add for a warp whose executing lanes all add to one address.

``atomicAdd(&counter, 1)`` and ``ticket = atomicAdd(&next, n)`` make every
executing lane of a warp add to the same word. atomics.lane_atomics runs
such an instruction lane by lane, in lane order (the set bits of the mask,
lowest first), with one locked ``atomicrmw`` each: 32 locked instructions
for a full warp. When the lanes' pointers are all equal (tested at run time:
the first executing lane's pointer against every executing lane's), the
same result comes from one ``atomicrmw add`` of the lanes' sum, each lane
receiving the old value plus the sum of the lanes before it (an exclusive
prefix sum in lane order): exactly the values the lane loop returns when no
other thread adds between two of the warp's lanes, which is one of the
orders the lane loop allows (PTX ISA, "atom": the operations of the lanes
are performed in an unspecified order) and the only one when the CTAs run
on one worker (a launch whose atomics return values runs its CTAs in
order: atomic_order.py). Integer addition wraps, so the sum is the same
modulo 2^n in any grouping; floating-point adds are not regrouped (their
rounding depends on the order). Any other warp (lanes at different
addresses, no executing lane) takes the lane loop.

``PTXC_AGG_ATOMICS=0`` keeps the lane loop for every warp (the code
before, for tests and before/after runs).
"""
from __future__ import annotations

import os

from ptxc.backends.llvm.irtext import vt
from ptxc.backends.llvm.ops.common import intr
from ptxc.backends.llvm.ops.fast_access import cache_restorer
from ptxc.backends.llvm.values import vname

STEPS = (1, 2, 4, 8, 16)        # the log-step (Hillis-Steele) scan of 32 lanes


def applies(rmw: str, lt: str, plain: bool) -> bool:
    """An integer add on memory other threads may touch (not ``plain``)."""
    return (rmw == "add" and lt in ("i32", "i64") and not plain
            and os.environ.get("PTXC_AGG_ATOMICS") != "0")


def aggregated_add(cg, lt: str, ptrs: str, b: str, mask: str, want_old: bool, lane_loop) -> str:
    """The old values (<32 x lt>, 0 in the lanes of no ``mask`` bit) of an
    add of ``b`` at ``ptrs`` by the lanes of ``mask`` (i32): one locked add
    when every such lane has one pointer, else ``lane_loop()``."""
    f = cg.f
    V = vt(lt)
    lanes = f.cast("bitcast", "i32", mask, "<32 x i1>")
    cg.decls.add("declare i32 @llvm.cttz.i32(i32, i1)")
    first = f.call("i32", "llvm.cttz.i32", [("i32", mask), ("i1", "false")])
    p0 = f.val(f"extractelement <32 x ptr> {ptrs}, i32 {f.val(f'and i32 {first}, 31')}")
    same = f.cast("bitcast", "<32 x i1>", f.val(f"icmp eq <32 x ptr> {ptrs}, {cg.bcast(p0, 'ptr')}"), "i32")
    one = f.val(f"and i1 {f.icmp('ne', 'i32', mask, '0')}, "
                f"{f.icmp('eq', 'i32', f.val(f'and i32 {same}, {mask}'), mask)}")
    fast, slow, done = (f.fresh_label(x) for x in ("aggone", "aggeach", "aggdone"))
    restore = cache_restorer(cg)        # values of one arm do not dominate the other or the merge
    f.cbr(one, fast, slow)
    f.label(fast, dominated=True)
    mine = f.select("<32 x i1>", lanes, V, b, "zeroinitializer")
    total = intr(cg, f"llvm.vector.reduce.add.{vname(lt)}", lt, [(V, mine)])
    old = f.val(f"atomicrmw add ptr {p0}, {lt} {total} monotonic, align {int(lt[1:]) // 8}")
    got = "zeroinitializer"
    if want_old:
        before = f.val(f"sub {V} {inclusive_scan(cg, lt, mine)}, {mine}")
        got = f.select("<32 x i1>", lanes, V, f.val(f"add {V} {cg.bcast(old, lt)}, {before}"),
                       "zeroinitializer")
    fast_end = f.cur_label
    f.br(done)
    f.label(slow, dominated=True)
    restore()
    each = lane_loop()
    slow_end = f.cur_label
    f.br(done)
    f.label(done, dominated=True)
    restore()
    return f.val(f"phi {V} [ {got}, %{fast_end} ], [ {each}, %{slow_end} ]")


def inclusive_scan(cg, lt: str, v: str) -> str:
    """Lane i: the sum of lanes 0..i of ``v`` (five shift-and-add steps)."""
    f = cg.f
    V = vt(lt)
    for s in STEPS:
        idx = ", ".join(f"i32 {i - s if i >= s else 32}" for i in range(32))  # 32: a zero lane
        shifted = f.val(f"shufflevector {V} {v}, {V} zeroinitializer, <32 x i32> <{idx}>")
        v = f.val(f"add {V} {v}, {shifted}")
    return v
