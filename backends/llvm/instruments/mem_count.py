"""Code generation of the memory counters (docs/metrics.md, "Memory access
counters"): for every measured memory instruction (ptxc.passes.memory.measured) a warp
executes, pass its lanes' addresses and executing mask to the native helpers
of memcount_ir.py, which count requests, sectors, lines, bank transactions
and atomic addresses into counter blocks of this instruction.

The lanes of one access are split by the space their address lies in:
``.global`` instructions count as global, ``.shared`` ones as shared, and a
generic access counts its lanes in the shared window (segment 1) as a shared
access and its lanes in ``.global`` variables or buffers (segments >= 5) as a
global access (layout.py has the address map). Global keys are whole generic
addresses: a buffer's base is a multiple of 2**shift (4 GiB), so a sector or
line of an address is that of its offset within the buffer, as with the
>= 256-byte alignment of cudaMalloc. Shared keys are offsets in the CTA's
shared memory.

In a hybrid run a measured instruction outside the slice is not executed,
but its addresses are still computed (``count_only``): the slice option
``addresses=true`` keeps every register they depend on.
"""
from __future__ import annotations

from ptxc.passes.memory.measured import access_kind, address_operand

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.irtext import splat
from ptxc.backends.llvm.instruments import mem_count_shape, memcount_fast
from ptxc.backends.llvm.instruments.memcount_ir import (ATOMIC_SLOTS, COMMON, DECLS, GLOBAL_SLOTS,
                                                        SHARED_SLOTS, shared_helper, shared_phases)
from ptxc.backends.llvm.ops.access import (K64, address, atomic_form, mem_type, space_of,
                                           static_address, vec_width)
from ptxc.backends.llvm.values import bits_of

ATOMIC_KINDS = ("atomic", "reduction")


def count_access(cg, ins, space: str, addr, static, nbytes: int, addr_op=None) -> None:
    """Counter code for one memory instruction about to access memory
    (``addr_op``: its address operand, for the closed forms of
    mem_count_shape.py; None: the general helpers only)."""
    if not cg.memory_counters:
        return
    kind = access_kind(ins)
    if kind is None:
        return
    closed = None
    if kind not in ATOMIC_KINDS:
        closed = (mem_count_shape.scalars(cg, ins, space, addr, addr_op, nbytes) if static is None
                  else mem_count_shape.static_scalars(cg, static, nbytes))
    for part, vec, mask in lane_parts(cg, space, addr, static):
        base = counter_block(cg, ins, kind, part)
        tmp = vector_tmp(cg)
        cg.f.store("<32 x i64>", vec, tmp, 64)
        args = [("ptr", "%cnt"), ("i64", str(base)), ("ptr", tmp), ("i32", mask)]
        if kind in ATOMIC_KINDS:
            fname = use_helper(cg, "ptxc_mem_atomic")
        elif part == "global":
            fname = use_helper(cg, "ptxc_mem_global")
            args.append(("i64", str(nbytes)))
            if closed is not None:
                fname = use_fast_helper(cg, "ptxc_mem_global_s", memcount_fast.MEM_GLOBAL_S)
                args += closed
        else:
            fname, text = shared_helper(nbytes, cg.memory_counters)
            use_helper(cg, "ptxc_bank_tx")
            cg.helpers[fname] = text
            if closed is not None and shared_phases(nbytes, cg.memory_counters) == 1:
                fname = use_fast_helper(cg, *memcount_fast.shared_helper_s(fname, nbytes,
                                                                          cg.memory_counters))
                args += closed
        cg.f.call("void", fname, args)


def count_only(cg, ins) -> None:
    """Hybrid mode, a measured instruction outside the slice: count it
    without performing the access (no bounds checks either: a hybrid run may
    bind empty buffers to parameters the slice does not read)."""
    shape = access_shape(cg, ins)
    if shape is not None:
        count_access(cg, ins, *shape)


def access_shape(cg, ins):
    """(space, lane addresses, static symbol, bytes per lane) of a measured
    instruction, or None where its lowering would not access memory (a form
    that is a 'not supported yet' error when executed)."""
    kind = access_kind(ins)
    t = mem_type(ins)
    if kind is None or t == "b128":
        return None
    if kind in ATOMIC_KINDS:
        if atomic_form(ins) is None:
            return None
        n = 1
    else:
        n = vec_width(ins)
    space = space_of(ins)
    addr, static = address(cg, address_operand(ins), space)
    if static is not None and static[0].space == "param":
        return None
    return space, addr, static, bits_of(t) // 8 * n


def lane_parts(cg, space: str, addr, static) -> list:
    """[(space, <32 x i64> keys, i32 mask)] of the executing lanes: global
    parts hold generic addresses, shared parts offsets in shared memory."""
    f, m = cg.f, cg.emi
    if static is not None:
        placed, off = static
        a = static_address(cg, placed, off)
        if placed.space == "shared":
            return [("shared", K64(a), m)]
        if placed.space == "global":
            return [("global", K64((placed.seg << cg.plan.shift) | a), m)]
        return []
    if space in ("shared", "global"):
        return [(space, addr, m)]
    shift = cg.plan.shift
    seg = f.val(f"lshr <32 x i64> {addr}, {K64(shift)}")
    in_global = f.cast("bitcast", "<32 x i1>",
                       f.val(f"icmp uge <32 x i64> {seg}, {K64(Lo.SEG_GLOBALS)}"), "i32")
    in_shared = f.cast("bitcast", "<32 x i1>",
                       f.val(f"icmp eq <32 x i64> {seg}, {K64(Lo.SEG_SHARED)}"), "i32")
    offset = f.val(f"and <32 x i64> {addr}, {splat('i64', (1 << shift) - 1)}")
    return [("global", addr, f.val(f"and i32 {m}, {in_global}")),
            ("shared", offset, f.val(f"and i32 {m}, {in_shared}"))]


def counter_block(cg, ins, kind: str, part: str) -> int:
    """The first counter of this instruction's block for ``part`` (allocated
    on first use; ``cg.mem_ctr[instr id][part]``)."""
    blocks = cg.mem_ctr.setdefault(cg.iid(ins), {})
    if part not in blocks:
        slots = ATOMIC_SLOTS if kind in ATOMIC_KINDS else (
            GLOBAL_SLOTS if part == "global" else SHARED_SLOTS)
        blocks[part] = cg.new_counters(slots)
    return blocks[part]


def vector_tmp(cg) -> str:
    """A <32 x i64> stack slot that passes lane addresses to the helpers."""
    if getattr(cg, "memcount_tmp", None) is None:
        cg.memcount_tmp = cg.f.alloca("<32 x i64>", "maddr", 64)
    return cg.memcount_tmp


def use_fast_helper(cg, name: str, text: str) -> str:
    """Add a closed-form helper (memcount_fast.py) to the kernel's module."""
    cg.helpers[name] = text
    cg.decls.update(memcount_fast.DECLS)
    return name


def use_helper(cg, name: str) -> str:
    """Add the helpers (``name`` and those it calls) to the kernel's module."""
    fast = memcount_fast.enabled()
    for helper, text in COMMON.items():
        cg.helpers.setdefault(helper, memcount_fast.HELPERS.get(helper, text) if fast else text)
    cg.decls.update(DECLS)
    if fast:
        cg.decls.update(memcount_fast.DECLS)
    return name


class HelperSet:
    """The two fields of a code generator that the helpers above fill."""

    def __init__(self):
        self.helpers: dict[str, str] = {}
        self.decls: set[str] = set()


def common_helpers(bank_bytes: int) -> tuple[HelperSet, list[str]]:
    """The helpers that the most common counted accesses call, as
    count_access adds them (a global access of any size, a 4-byte shared
    one, with their closed forms), and the names those accesses call: for
    compiling them before any kernel needs them (warm_up.py)."""
    h = HelperSet()
    names = [use_helper(h, "ptxc_mem_global")]       # global first: nearly every kernel's
    if memcount_fast.enabled():
        names.append(use_fast_helper(h, "ptxc_mem_global_s", memcount_fast.MEM_GLOBAL_S))
    shared, text = shared_helper(4, bank_bytes)
    use_helper(h, "ptxc_bank_tx")
    h.helpers[shared] = text
    names.append(shared)
    if memcount_fast.enabled() and shared_phases(4, bank_bytes) == 1:
        names.append(use_fast_helper(h, *memcount_fast.shared_helper_s(shared, 4, bank_bytes)))
    return h, names

