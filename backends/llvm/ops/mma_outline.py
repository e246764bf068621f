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

import hashlib
import re

from ptxc import ir

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
    """The LLVM IR of ``@name(ptr %base, ptr %offs)``: register r of the
    fragments A, B, C, D in that order is at ``base + offs[r]`` (i32
    offsets); load A, B, C, compute, store D (after every load: D may be C)."""
    h = _Body(f"define internal void @{name}(ptr %base, ptr %offs) noinline nounwind", decls)
    f = h.f
    k = 0

    def at(fr: Frag) -> str:
        nonlocal k
        off = f.load("i32", f.gep("%offs", 4 * k), 4)
        k += 1
        return f.gep("%base", f.cast("sext", "i32", off, "i64"))
    regs = [[f.load(reg_type(fr), at(fr), 8) for _ in range(fr.nregs)] for fr in (a, b, c)]
    out = multiply_regs(h, *regs, a, b, c, d, sat)
    for v in out:
        f.store(reg_type(d), v, at(d), 8)
    f.emit("ret void")
    return f.text()


def offsets_table(cg, offs: list[int]) -> str:
    """A constant i32 array of ``offs`` (named after its content, so that
    kernels compiled together share it)."""
    body = ", ".join(f"i32 {o}" for o in offs)
    name = "@ptxc_mmaoff_" + "_".join(str(o) for o in offs) if len(offs) <= 8 else \
        "@ptxc_mmaoff_" + hashlib.sha256(body.encode()).hexdigest()[:16]
    cg.decls.add(f"{name} = private unnamed_addr constant [{len(offs)} x i32] [{body}]")
    return name


def direct_slots(cg, groups) -> list | None:
    """The slots of every fragment register, or None unless each is a register
    with a slot of the fragment's register width."""
    out = []
    for items, fr in groups:
        for item in items:
            slot = cg.plan.slot(cg.inst, item) if isinstance(item, ir.Value) else None
            if slot is None or slot.bits != fr.reg_bits:
                return None
            out.append(slot)
    return out


def scratch(cg, frags) -> tuple[str, list[int]]:
    """A buffer for the registers of ``frags`` (one per kernel, the largest
    asked for) and their offsets in it."""
    offs, n = [], 0
    for fr in frags:
        for _ in range(fr.nregs):
            offs.append(n)
            n += reg_bytes(fr)
    if getattr(cg, "mma_scratch", None) is None or cg.mma_scratch[1] < n:
        cg.mma_scratch = (cg.f.alloca(f"[{max(n, 4096)} x i8]", "mmabuf", 64), max(n, 4096))
    return cg.mma_scratch[0], offs


def write_uncached(cg, item, v: str, t: str) -> None:
    """Write a fragment register and drop it from the code generator's cache
    of register values: the next instruction reloads it from its slot instead
    of keeping this value alive across the blocks in between, which at level
    0 costs a stack slot per value (docs/performance.md)."""
    cg.write(item, v, t)
    slot = cg.plan.slot(cg.inst, item)
    if slot is not None:
        cg.vcache.pop(slot.index, None)


def call_helper(cg, ins, items: list, a: Frag, b: Frag, c: Frag, d: Frag, sat: bool) -> None:
    """D = A*B + C by a call of the form's helper; ``items``: the registers of
    A, B, C and D. Where every register has a slot of its width the helper
    reads and writes the slots in the warp state (the instruction is .aligned:
    codegen's whole-warp check has made sure all 32 lanes execute it, so a
    plain store is the masked write); otherwise through a scratch buffer."""
    f = cg.f
    name = form_name(ins, a, b, c, d, sat)
    if name not in cg.helpers:
        cg.helpers[name] = helper_text(name, a, b, c, d, sat, cg.decls)
    frags = (a, b, c, d)
    slots = direct_slots(cg, list(zip(items, frags)))
    if slots is not None:
        table = offsets_table(cg, [cg.frame_offset(s.index) for s in slots])
        f.call("void", name, [("ptr", "%ws"), ("ptr", table)])
        for s in slots[-d.nregs:]:
            cg.vcache.pop(s.index, None)
        return
    buf, offs = scratch(cg, frags)
    k = 0
    for its, fr in zip(items[:3], frags[:3]):
        for item in its:
            f.store(reg_type(fr), cg.read(item, f"b{fr.reg_bits}"), f.gep(buf, offs[k]), 8)
            k += 1
    f.call("void", name, [("ptr", buf), ("ptr", offsets_table(cg, offs))])
    for r, item in enumerate(items[3]):
        write_uncached(cg, item, f.load(reg_type(d), f.gep(buf, offs[k + r]), 8), f"b{d.reg_bits}")
