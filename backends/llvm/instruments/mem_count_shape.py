"""The scalars of the memory counters' closed forms (memcount_fast.py) for
an ld/st of .global or .shared whose address the memory fast path tests
(backends/llvm/ops/fast_access.py: lane stride 0 or the access size, by
passes/memory/lane_stride.py): the first and last lane's address of each
half warp, and

    ok = the warp is full (all 32 lanes execute) and each half is uniform
         or contiguous (lane i at lo + i * S: hi - lo = 15 * S)

The lane shapes are the fast path's own (``cached_shapes``: computed once
per base register and mask and shared with its test), found on the address
register without its constant offset; lo and hi are read from the lane
addresses the counters see, so a 32-bit address that wraps inside a half
fails ``hi - lo = 15 * S`` and takes the general helper.

A variable's address (``ld.shared.f32 [tile+8]``: every lane the same
constant) is uniform in both halves: lo = hi = that address, ok = a full
warp (sgemm's 256 such reads per tile).
"""
from __future__ import annotations

from ptxc.backends.llvm.instruments import memcount_fast

MAX_BYTES = 32          # steps of at most one sector: no sector or line skipped


def static_scalars(cg, static, nbytes: int):
    """The scalars of an access to a variable's address (the same key
    lane_parts gives its lanes), or None."""
    from ptxc.backends.llvm.ops.access import static_address
    placed, off = static
    if nbytes > MAX_BYTES or not memcount_fast.enabled() or placed.space not in ("shared", "global"):
        return None
    a = static_address(cg, placed, off)
    if placed.space == "global":
        a = (placed.seg << cg.plan.shift) | a
    return [("i1", cg.f.icmp("eq", "i32", cg.emi, "-1"))] + [("i64", str(a))] * 4


def scalars(cg, ins, space: str, addr: str, addr_op, nbytes: int):
    """[(type, value)] of ``ok, lo0, hi0, lo1, hi1``, or None where the
    closed form is not tried (the general helper alone is called)."""
    from ptxc.backends.llvm.ops import fast_access as FA
    if (addr_op is None or space not in ("global", "shared") or nbytes > MAX_BYTES
            or not memcount_fast.enabled()
            or not FA.enabled(cg, space, None, ins, addr_op, nbytes)):
        return None
    base, _ = FA.base_offset(cg, addr_op)
    f = cg.f
    ok = f.icmp("eq", "i32", cg.emi, "-1")
    out = []
    for h, sh in enumerate(FA.cached_shapes(cg, base, nbytes)):
        lo = f.val(f"extractelement <32 x i64> {addr}, i32 {16 * h}")
        hi = f.val(f"extractelement <32 x i64> {addr}, i32 {16 * h + 15}")
        span = f.icmp("eq", "i64", f.val(f"sub i64 {hi}, {lo}"), str(15 * nbytes))
        shape = f.val(f"or i1 {f.val(f'and i1 {sh.contig}, {span}')}, {sh.uniform}")
        ok = f.val(f"and i1 {ok}, {shape}")
        out += [("i64", lo), ("i64", hi)]
    return [("i1", ok)] + out
