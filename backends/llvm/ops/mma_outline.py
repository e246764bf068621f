"""The arithmetic of a warp-level matrix multiply (mma.sync, wmma.mma) as one
out-of-line LLVM function per form, called from ``run_warp``.

Why (docs/performance.md, "Tensor-core kernels"): the arithmetic of one
m16n16k16 wmma.mma is about 440 lines of 32-lane vector IR (128 fused
multiply-adds of <32 x float>, 256 cross-lane shuffles); inlined at every
instruction, a fully unrolled GEMM of 2,000 of them made ``run_warp`` about
a million lines, which LLVM's level-0 code generator compiled in minutes
and gave a native stack frame of ~48 KiB per instruction (level-0 register
allocation gives every spilled value its own stack slot and never shares
them): hundreds of MiB for cudaTensorCoreGemm, far beyond an 8 MiB thread
stack. As a call, each instruction costs a few stores and loads of its
registers; the helper is compiled once per module and its frame is that of
one instruction.

The helper ``@ptxc_mma_<form>(ptr %a, ptr %b, ptr %c, ptr %d)`` reads the
A, B and C registers of all 32 lanes (register r of a fragment is the
``<32 x iRB>`` at byte 32 * RB/8 * r) and writes D's the same way; its body
is mma.multiply_regs, the same code as the inline lowering, so results are
bit for bit the same. The call site stores the registers into buffers
allocated once per form in the entry block. The instruction is .aligned
(every lane executes it: codegen's whole-warp check stops the launch
before the call otherwise), so no lane mask is passed.
"""
from __future__ import annotations

import re

from ptxc.backends.llvm.irtext import Fn
from ptxc.backends.llvm.ops.mma_arith import multiply_regs
from ptxc.backends.llvm.ops.mma_frags import Frag

PREFIX = "ptxc_mma_"


class _Body:
    """What mma.multiply_regs needs of a code generator: ``f`` and ``decls``."""

    def __init__(self, header: str, decls: set):
        self.f = Fn(header)
        self.decls = decls


def form_name(ins, a: Frag, b: Frag, c: Frag, d: Frag, sat: bool) -> str:
    """One helper name per (instruction, shape, A/B/C/D types, .satfinite)."""
    shape = next(m for m in ins.mods if re.fullmatch(r"m\d+n\d+k\d+", m))
    parts = [ins.opcode, shape, a.etype, b.etype, c.etype, d.etype] + (["sat"] if sat else [])
    return PREFIX + "_".join(parts)


def reg_type(fr: Frag) -> str:
    return f"<32 x i{fr.reg_bits}>"


def reg_bytes(fr: Frag) -> int:
    return 32 * fr.reg_bits // 8


def helper_text(name: str, a: Frag, b: Frag, c: Frag, d: Frag, sat: bool, decls: set) -> str:
    """The LLVM IR of ``@name``: load A, B, C, compute, store D."""
    h = _Body(f"define internal void @{name}(ptr noalias %a, ptr noalias %b, ptr noalias %c, "
              "ptr noalias %d) noinline nounwind", decls)
    f = h.f
    regs = []
    for arg, fr in (("%a", a), ("%b", b), ("%c", c)):
        regs.append([f.load(reg_type(fr), f.gep(arg, r * reg_bytes(fr)), 64) for r in range(fr.nregs)])
    out = multiply_regs(h, *regs, a, b, c, d, sat)
    for r, v in enumerate(out):
        f.store(reg_type(d), v, f.gep("%d", r * reg_bytes(d)), 64)
    f.emit("ret void")
    return f.text()


def buffers(cg, name: str, frags) -> list[str]:
    """The four register buffers of form ``name`` (allocated once per kernel)."""
    bufs = getattr(cg, "mma_buffers", None)
    if bufs is None:
        bufs = cg.mma_buffers = {}
    if name not in bufs:
        bufs[name] = [cg.f.alloca(f"[{fr.nregs} x {reg_type(fr)}]", "mmabuf", 64) for fr in frags]
    return bufs[name]


def write_uncached(cg, item, v: str, t: str) -> None:
    """Write a fragment register and drop it from the code generator's cache
    of register values: the next instruction reloads it from its slot instead
    of keeping this value alive across the blocks in between, which at level
    0 costs a stack slot per value (docs/performance.md)."""
    cg.write(item, v, t)
    slot = cg.plan.slot(cg.inst, item)
    if slot is not None:
        cg.vcache.pop(slot.index, None)


def call_helper(cg, ins, ra: list, rb: list, rc: list, a: Frag, b: Frag, c: Frag, d: Frag,
                sat: bool) -> list[str]:
    """D's register values of D = A*B + C computed by a call of the form's helper."""
    f = cg.f
    name = form_name(ins, a, b, c, d, sat)
    if name not in cg.helpers:
        cg.helpers[name] = helper_text(name, a, b, c, d, sat, cg.decls)
    bufs = buffers(cg, name, (a, b, c, d))
    for buf, fr, regs in zip(bufs, (a, b, c), (ra, rb, rc)):
        for r, v in enumerate(regs):
            f.store(reg_type(fr), v, f.gep(buf, r * reg_bytes(fr)), 64)
    f.call("void", name, [("ptr", p) for p in bufs])
    return [f.load(reg_type(d), f.gep(bufs[3], r * reg_bytes(d)), 64) for r in range(d.nregs)]
