"""One fast-path test for a group of shared/const accesses (fast_access.py).

A tile loop reads shared memory through one base register at many constant
offsets (matrixMul's ``[%r8]``, ``[%r8+64]``, ... ``[%r8+960]``: 16 reads of
one 16 x 16 tile). Each access's fast-path test computes its range, bounds
and alignment for both half warps (about 24 scalar operations); the lane
shapes are already shared (fast_access.cached_shapes). A *group* is the
unguarded ld/st of one node, with no barrier-family instruction between
them, that use the same base value, space (.shared or .const), access size
and alignment class (offsets equal modulo the size). The first access of a
group tests the union of their ranges once, per half:

    a0 + min_off < size,  a0 + max_off + span + nbytes <= size,
    a0 + min_off aligned, lanes contiguous or uniform (or the half empty)

which implies each member's own test (fast_access.half_range: every offset
lies between min_off and max_off and is congruent to min_off, and the base,
its shapes and the mask are the same values in the whole group). Each
member then branches on the group's result and computes its own test only
when the group's failed, so a fault is still found by the member that
makes it, with the per-lane path's lane, address and kind.
"""
from __future__ import annotations

import os

from ptxc import ir
from ptxc.passes.memory.measured import address_operand

from ptxc.backends.llvm.ops.access import bits_of_reg, mem_type, space_of, vec_width
from ptxc.backends.llvm.values import bits_of

GROUP_SPACES = ("shared", "const")
STOPS = ("bar", "barrier", "mbarrier")       # may return from run_warp: values do not carry over


def base_and_offset(addr_op):
    """(the ir.Value an address operand adds to, its offset: for a 32-bit
    register modulo 2^32, as a signed number), or None when it has no
    register base. fast_access.base_offset reads the register from it."""
    reg, off = (addr_op.base, addr_op.offset) if isinstance(addr_op, ir.Addr) else (addr_op, 0)
    if not isinstance(reg, ir.Value):
        return None
    if not (reg.type and bits_of_reg(reg) == 64):
        off = (off + (1 << 31)) % (1 << 32) - (1 << 31)
    return reg, off


def node_groups(cg, fast) -> dict:
    """{id(instr): (group key, {id(member): offset})} for the current node's
    accesses that fall in a group of two or more: one scan per node (a
    scan per access would be quadratic in a long unrolled node).
    ``fast(ins, addr_op, space, nbytes)``: does that access take the fast
    path (fast_access.enabled)."""
    cache = cg.__dict__.setdefault("fast_groups", {})
    if cg.node.id in cache:
        return cache[cg.node.id]
    found: dict[tuple, dict] = {}
    epoch = 0
    for ins in cg.node.instrs:
        if ins.opcode in STOPS:
            epoch += 1
        if ins.opcode not in ("ld", "st") or ins.guard is not None or not cg.keep(ins):
            continue
        space, nbytes = space_of(ins), bits_of(mem_type(ins)) // 8 * vec_width(ins)
        addr_op = address_operand(ins)
        got = base_and_offset(addr_op)
        if space not in GROUP_SPACES or got is None or not fast(ins, addr_op, space, nbytes):
            continue
        key = (epoch, id(got[0]), space, nbytes, got[1] % nbytes)
        found.setdefault(key, {})[id(ins)] = got[1]
    out = cache[cg.node.id] = {i: (key, offs) for key, offs in found.items() if len(offs) > 1
                               for i in offs}
    return out


def group_ok(cg, space: str, addr_op, shapes, nbytes: int, fast) -> str | None:
    """The group test's i1 for the current access (emitting it at the
    first access of the group that asks), or None when the access is in no
    group of two or more (``fast``: see node_groups)."""
    if space not in GROUP_SPACES or cg.em is not cg.mv or os.environ.get("PTXC_FAST_GROUPS") == "0":
        return None
    mine = node_groups(cg, fast).get(id(cg.cur))
    if mine is None:
        return None
    key, offs = mine
    tests = cg.__dict__.setdefault("fast_group_tests", {})
    if (cg.node.id, key) not in tests:
        tests[(cg.node.id, key)] = union_test(cg, space, shapes, min(offs.values()),
                                              max(offs.values()), nbytes)
    return tests[(cg.node.id, key)]


def union_test(cg, space: str, shapes, lo: int, hi: int, nbytes: int) -> str:
    f = cg.f
    size = cg.seg_size[space]
    ok = "true"
    for sh in shapes:
        a_lo = f.val(f"add i64 {sh.a0}, {lo}") if lo else sh.a0
        a_end = f.val(f"add i64 {f.val(f'add i64 {sh.a0}, {hi + nbytes}')}, {sh.span}")
        inb = f.val(f"and i1 {f.icmp('ult', 'i64', a_lo, size)}, {f.icmp('ule', 'i64', a_end, size)}")
        aligned = f.icmp("eq", "i64", f.val(f"and i64 {a_lo}, {nbytes - 1}"), "0")
        half = f.val(f"and i1 {f.val(f'and i1 {inb}, {aligned}')}, {sh.shape}")
        ok = f.val(f"and i1 {ok}, {f.val(f'or i1 {half}, {sh.empty}')}")
    return ok
