"""Warp-level matrix instructions: mma.sync and wmma.load/store/mma (PTX ISA
9.7.14, "Warp Level Matrix Multiply-Accumulate Instructions"); ldmatrix and
stmatrix are in ldmatrix.py.

Lowering (docs/executor.md, "Tensor cores"; docs/performance.md,
"Tensor-core kernels"): the fragment registers of all 32 lanes are handed to
one out-of-line helper per form (mma_outline.py) whose body is the
straight-line vector arithmetic of mma_arith.py; wmma.load/store are in
mma_memory.py.
"""
from __future__ import annotations

import os

from ptxc.errors import PtxcError

from ptxc.backends.llvm.ops import mma_memory
from ptxc.backends.llvm.ops.common import types_of
from ptxc.backends.llvm.ops.mma_arith import CT, check_regs, mods_shape, multiply_regs
from ptxc.backends.llvm.ops.mma_frags import Frag, mma_frags, wmma_frag
from ptxc.backends.llvm.ops.mma_outline import call_helper, write_uncached

# .aligned matrix instructions: every lane of the warp must execute them (PTX
# ISA 9.7.14); codegen stops a launch where some lane does not (ERR_PARTIAL_WARP)
# instead of reading the idle lanes' registers.
WHOLE_WARP_OPS = frozenset({"mma", "wmma", "ldmatrix", "stmatrix"})


# ------------------------------------------------------------ multiply
def multiply(cg, ins, a: Frag, b: Frag, c: Frag, d: Frag, srcs, sat: bool) -> None:
    """D = A*B + C on the fragments; writes the registers of ins.dsts[0]:
    a call of the shape's out-of-line helper (mma_outline.py), or the
    arithmetic inline with PTXC_MMA_INLINE=1 (the lowering before the
    helpers, for before/after measurements)."""
    dst_items = check_regs(ins.dsts[0], d, "D")
    if CT[c.etype] != CT[a.etype]:
        raise PtxcError(f"accumulator .{c.etype} with .{a.etype} inputs")
    items = [check_regs(vec, fr, what) for vec, fr, what in zip(srcs, (a, b, c), "ABC")]
    if not inline_wanted():
        return call_helper(cg, ins, [*items, dst_items], a, b, c, d, sat)
    regs = [[cg.read(item, f"b{fr.reg_bits}") for item in its] for its, fr in zip(items, (a, b, c))]
    out = multiply_regs(cg, *regs, a, b, c, d, sat)
    for item, v in zip(dst_items, out):
        write_uncached(cg, item, v, f"b{d.reg_bits}")


def inline_wanted() -> bool:
    return os.environ.get("PTXC_MMA_INLINE", "") not in ("", "0")


def op_mma(cg, ins):
    """mma.sync.aligned.<shape>.row.col{.satfinite}.dtype.atype.btype.ctype."""
    if "sync" not in ins.mods or any(m in ins.mods for m in ("sp", "block_scale")):
        raise PtxcError("only mma.sync without sparsity or block scaling")
    shape = mods_shape(ins)
    lay = [m for m in ins.mods if m in ("row", "col")]
    ts = types_of(ins)
    if len(ts) != 4 or lay != ["row", "col"]:
        raise PtxcError("this shape/layout/type combination")
    dt, at, bt, ctp = ts
    frags = mma_frags(shape, at, bt, ctp, dt)
    if frags is None:
        raise PtxcError(f"shape .{shape} with .{at}/.{bt} inputs")
    sat = "satfinite" in ins.mods
    if sat and dt != "s32":
        raise PtxcError(".satfinite on a float result")
    multiply(cg, ins, *frags, ins.srcs[:3], sat)


def wmma_mma(cg, ins):
    """wmma.mma.sync.aligned.alayout.blayout.shape.dtype{.atype.btype}.ctype{.satfinite}."""
    shape = mods_shape(ins)
    ts = types_of(ins)
    if len(ts) == 2:                      # f16 inputs: .dtype.ctype
        dt, ctp = ts
        at = bt = "f16"
    elif len(ts) == 4:
        dt, at, bt, ctp = ts
    else:
        raise PtxcError("type list")
    sat = "satfinite" in ins.mods
    if sat and dt != "s32":
        raise PtxcError(".satfinite on a float result")
    frags = [wmma_frag(shape, "a", at), wmma_frag(shape, "b", bt), wmma_frag(shape, "c", ctp),
             wmma_frag(shape, "c", dt)]
    if None in frags or at != bt:
        raise PtxcError(f"shape .{shape} with .{at}/.{bt}/.{ctp}/.{dt}")
    multiply(cg, ins, *frags, ins.srcs[:3], sat)


def op_wmma(cg, ins):
    if "load" in ins.mods:
        return mma_memory.wmma_load(cg, ins)
    if "store" in ins.mods:
        return mma_memory.wmma_store(cg, ins)
    if "mma" in ins.mods:
        return wmma_mma(cg, ins)
    raise PtxcError("this wmma form")


OPS = {"mma": op_mma, "wmma": op_wmma}
