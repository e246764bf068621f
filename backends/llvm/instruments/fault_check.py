"""Check-only accesses: a hybrid run's bounds checks of accesses it skips.

In a hybrid run with the slice option ``faults=checked`` (the default;
docs/slice.md, passes/memory/checked.py lists the accesses), an access the slice
does not keep still runs its checks: its lane addresses (kept exact by the
slice), the segment bounds, the allocation the address started from and the
natural alignment, exactly as the lowering of the access checks them in a
full run (ops/access.py, ops/resolve.py: same instruction id, same first
failing lane, same address, same error code), but no memory is read or
written. A failure stops the launch with the full run's message. With
memory counters on, the access is also counted (mem_count.count_access), as
``count_only`` does.

Forms whose full-run lowering is a 'not supported yet' error are that error
here too, so hybrid and full runs stop alike.
"""
from __future__ import annotations

from ptxc import ir

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.instruments.mem_count import count_access
from ptxc.backends.llvm.instruments.memcheck import KIND_ATOMIC, KIND_LOAD, KIND_STORE
from ptxc.backends.llvm.ops.access import (address, atomic_form, cp_src_size, mem_type, space_of,
                                           static_address, vec_width)
from ptxc.backends.llvm.ops.resolve import resolve_masked
from ptxc.backends.llvm.values import bits_of


def check_only(cg, ins) -> None:
    """Emit the checks (and memory counting) of ``ins`` without the access."""
    if ins.opcode == "cp":
        return check_cp(cg, ins)
    shape = access_shape(cg, ins)
    if shape is None:
        return None
    space, addr, static, nbytes, kind = shape
    count_access(cg, ins, space, addr, static, nbytes)
    resolve_masked(cg, space, addr, static, nbytes, nbytes, kind)
    return None


def access_shape(cg, ins):
    """(space, lane addresses, static symbol, bytes per lane, memcheck kind)
    of a ld/ldu/st/atom/red as its full-run lowering sees it, or None when
    that lowering checks nothing at run time; unsupported forms become the
    full run's 'not supported yet' error."""
    t = mem_type(ins)
    if t == "b128":
        cg.unsupported(ins, f"{ins.opcode}.b128")
        return None
    if ins.opcode in ("atom", "red"):
        if atomic_form(ins) is None:
            cg.unsupported(ins)
            return None
        n, kind = 1, KIND_ATOMIC
    else:
        n, kind = vec_width(ins), KIND_STORE if ins.opcode == "st" else KIND_LOAD
    space = space_of(ins)
    if ins.opcode == "st":
        op = ins.dsts[0] if ins.dsts and isinstance(ins.dsts[0], ir.Addr) else ins.srcs[0]
    else:
        op = ins.srcs[0]
    addr, static = address(cg, op, space)
    nbytes = bits_of(t) // 8 * n
    if static is not None and static[0].space == "param" and static[0].seg == Lo.SEG_PARAM:
        kernel_param(cg, ins, static, nbytes)
        return None
    return space, addr, static, nbytes, kind


def kernel_param(cg, ins, static, nbytes: int) -> None:
    """A kernel parameter access is checked when compiled (memory.py
    load_kernel_param; a store is not supported): the same outcome here."""
    if ins.opcode != "ld" and ins.opcode != "ldu":
        cg.unsupported(ins, "st to a kernel parameter")
    elif static_address(cg, *static) + nbytes > cg.plan.param_size:
        cg.unsupported(ins, f"{ins.full_opcode} (reads beyond the kernel parameters "
                            f"('{static[0].var.name}'))")


def check_cp(cg, ins) -> None:
    """cp.async: the destination and source checks of memory.op_cp."""
    if len(ins.srcs) < 3 or not isinstance(ins.srcs[2], ir.Imm):
        cg.unsupported(ins)
        return
    n = int(ins.srcs[2].value)
    daddr, dstatic = address(cg, ins.srcs[0], "shared")
    saddr, sstatic = address(cg, ins.srcs[1], "global")
    src_size = cp_src_size(cg, ins, n)
    resolve_masked(cg, "shared", daddr, dstatic, n, n, KIND_STORE)
    em, emi = cg.em, cg.emi
    if src_size is not None:
        cg.em = cg.f.val(f"and <32 x i1> {em}, "
                         f"{cg.f.val(f'icmp ne <32 x i32> {src_size}, zeroinitializer')}")
        cg.emi = cg.f.cast("bitcast", "<32 x i1>", cg.em, "i32")
    try:
        resolve_masked(cg, "global", saddr, sstatic, n, n, KIND_LOAD)
    finally:
        cg.em, cg.emi = em, emi
