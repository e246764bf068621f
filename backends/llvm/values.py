"""Operand reads and masked register writes for the code generator.

Every PTX register is a slot holding 32 lanes of its declared width as an
integer vector (``<32 x i32>`` for ``.b32``/``.f32``, ``<32 x i1>`` for
``.pred``); an instruction type decides how the bits are read (PTX's relaxed
type rules: a wider register is truncated, a narrower one extended by the
signedness of the instruction type). Writes are masked by the executing
lanes: ``slot = select(mask, new, old)``, except an unguarded write of a
local register (local_regs.py: no lane outside the mask is ever read), which
stores ``new`` as it is.
"""
from __future__ import annotations

import struct

import numpy as np

from ptxc import ir
from ptxc.errors import PtxcError
from ptxc.ir.printer import operand_text
from ptxc.ir.types import TYPE_SIZES

from ptxc.backends.llvm.irtext import splat, vt

FLOAT_LLVM = {"f32": "float", "f64": "double"}


def bits_of(t: str) -> int:
    """Width in bits of a PTX type as held in a register (pred: 1)."""
    if t in ("pred", "cc"):
        return 1
    return TYPE_SIZES[t] * 8


def ity(bits: int) -> str:
    return f"i{bits}"


def lty(t: str) -> str:
    """LLVM scalar type for values of PTX type ``t`` (f16/bf16 kept as bits)."""
    return FLOAT_LLVM.get(t) or ity(bits_of(t))


def is_signed(t: str) -> bool:
    return t.startswith("s")


def vname(t: str) -> str:
    """Intrinsic mangling suffix of a 32-lane vector of LLVM type t."""
    return {"float": "v32f32", "double": "v32f64", "ptr": "v32p0"}.get(t, f"v32{t}")


def const_bits(imm: ir.Imm, t: str) -> int:
    """The bit pattern an immediate has as an operand of type ``t``."""
    bits = bits_of(t)
    v, k = imm.value, imm.kind
    if t in ("f32", "f64", "f16", "bf16"):
        if k == "f32":
            x = struct.unpack("<f", struct.pack("<I", v & 0xFFFFFFFF))[0]
            if t == "f32":
                return v & 0xFFFFFFFF
        elif k == "f64":
            x = struct.unpack("<d", struct.pack("<Q", v & (2 ** 64 - 1)))[0]
            if t == "f64":
                return v & (2 ** 64 - 1)
        else:
            x = float(v)
        if t == "f64":
            return struct.unpack("<Q", struct.pack("<d", x))[0]
        if t == "f32":
            return int(np.array(x, dtype=np.float64).astype(np.float32).view(np.uint32))
        if t == "f16":
            return int(np.array(x, dtype=np.float64).astype(np.float16).view(np.uint16))
        return _bf16_bits(x)
    if t == "pred":
        return 1 if v else 0
    if k in ("f32", "f64", "int"):
        return int(v) & ((1 << bits) - 1)
    return int(v) & ((1 << bits) - 1)


def _bf16_bits(x: float) -> int:
    b = int(np.array(x, dtype=np.float64).astype(np.float32).view(np.uint32))
    if (b & 0x7F800000) == 0x7F800000 and b & 0x7FFFFF:
        return (b >> 16) | 0x40
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF


class Values:
    """Mixin of the code generator: reading operands, writing results."""

    # ------------------------------------------------------------- reads
    def read(self, op, t: str) -> str:
        """Operand ``op`` as a 32-lane vector of PTX type ``t``."""
        f = self.f
        if isinstance(op, ir.Not):
            v = self.read(op.value, "pred")
            return f.val(f"xor <32 x i1> {v}, {splat('i1', 1)}")
        if isinstance(op, ir.Imm):
            return self.const_vec(const_bits(op, t), t)
        if isinstance(op, ir.SpecialReg):
            v, vt_ = self.special(op.name)
            return self.adjust(v, vt_, t)
        if isinstance(op, ir.Undef) and self.plan.slot(self.inst, op) is None:
            return self.const_vec(0, t)
        if isinstance(op, ir.Sym):
            framed = self.framed_sym(op) if self.plan.recursive else None
            if framed is not None:
                return self.adjust(framed, "u64", t)
            return self.adjust(self.const_vec(self.sym_address(op), "u64"), "u64", t)
        if isinstance(op, ir.Vec):
            return self.read_packed(op, t)
        if isinstance(op, ir.RegOffset):       # `%r + 1`: integer add of a constant
            bits = bits_of(t)
            v = self.read(op.value, "b%d" % bits)
            k = splat(ity(bits), op.offset % (1 << bits))
            return self.adjust(f.val(f"add {vt(ity(bits))} {v}, {k}"), "b%d" % bits, t)
        if isinstance(op, ir.Value):
            slot = self.plan.slot(self.inst, op)
            if slot is None:
                return self.const_vec(0, t)
            return self.adjust(self.load_slot(slot), "b%d" % slot.bits if slot.bits > 1 else "pred", t)
        raise PtxcError(f"operand {operand_text(op, lambda v: v.reg or v.name)[:40]} of this kind",
                        self.cur.loc)

    def adjust(self, v: str, have: str, want: str) -> str:
        """Reinterpret/resize a vector of PTX type ``have`` as type ``want``."""
        f = self.f
        hb, wb = bits_of(have), bits_of(want)
        hl, wl = lty(have), lty(want)
        if hl == wl:
            return v
        if hl in ("float", "double"):
            v = f.cast("bitcast", vt(hl), v, vt(ity(hb)))
            hl = ity(hb)
        if hb > wb:
            if wb == 1:
                v = f.val(f"icmp ne {vt(hl)} {v}, zeroinitializer")
            else:
                v = f.cast("trunc", vt(hl), v, vt(ity(wb)))
        elif hb < wb:
            op = "sext" if is_signed(want) and hb > 1 else "zext"
            v = f.cast(op, vt(hl), v, vt(ity(wb)))
        if wl in ("float", "double"):
            v = f.cast("bitcast", vt(ity(wb)), v, vt(wl))
        return v

    def const_vec(self, bits: int, t: str) -> str:
        lt = lty(t)
        if lt in ("float", "double"):
            ib = bits_of(t)
            return self.f.cast("bitcast", vt(ity(ib)), splat(ity(ib), bits), vt(lt))
        if bits == 0:
            return "zeroinitializer"
        if lt == "i1":
            return splat("i1", "true" if bits & 1 else "false")
        b = bits_of(t)
        if bits >= 1 << (b - 1):
            bits -= 1 << b          # LLVM prints signed literals fine either way
        return splat(lt, bits)

    def read_packed(self, vec: ir.Vec, t: str) -> str:
        """``{a, b}`` as one wider value (mov.b64 {lo, hi} source)."""
        n = len(vec.items)
        tb = bits_of(t)
        eb = tb // n
        et = "b%d" % eb
        acc = "zeroinitializer"
        for i, item in enumerate(vec.items):
            part = self.read(item, et) if not isinstance(item, ir.Sink) else "zeroinitializer"
            wide = self.f.cast("zext", vt(ity(eb)), part, vt(ity(tb)))
            if i:
                wide = self.f.val(f"shl {vt(ity(tb))} {wide}, {splat(ity(tb), i * eb)}")
            acc = self.f.val(f"or {vt(ity(tb))} {acc}, {wide}")
        return self.adjust(acc, "b%d" % tb, t) if lty(t) != ity(tb) else acc

    # ------------------------------------------------------------ writes
    def write(self, dst, v: str, t: str, mask: str | None = None) -> None:
        """Masked write of vector ``v`` (PTX type ``t``) into register ``dst``."""
        if dst is None or isinstance(dst, ir.Sink):
            return
        if isinstance(dst, ir.Vec):
            return self.write_unpacked(dst, v, t, mask)
        slot = self.plan.slot(self.inst, dst)
        if slot is None:
            return
        self._masked_store(slot, v, t, mask)

    def _masked_store(self, slot, v: str, t: str, mask) -> None:
        f = self.f
        st = "b%d" % slot.bits if slot.bits > 1 else "pred"
        if slot.bits > 1 and bits_of(t) < slot.bits and is_signed(t):
            st = "s%d" % slot.bits
        new = self.adjust(v, t, st)
        vty = vt(ity(slot.bits))
        if slot.local and mask is None and self.em is self.mv:
            v = new         # no lane reads the inactive lanes (local_regs.py)
        else:
            v = f.select("<32 x i1>", mask or self.em, vty, new, self.load_slot(slot))
        f.store(vty, v, self.slot_ptr(slot), 8)
        self.vcache[slot.index] = v

    def write_unpacked(self, vec: ir.Vec, v: str, t: str, mask) -> None:
        """``mov.b64 {lo, hi}, x``: split a wide value into its parts."""
        n = len(vec.items)
        tb = bits_of(t)
        eb = tb // n
        iv = self.adjust(v, t, "b%d" % tb)
        for i, item in enumerate(vec.items):
            if isinstance(item, ir.Sink):
                continue
            part = iv
            if i:
                part = self.f.val(f"lshr {vt(ity(tb))} {iv}, {splat(ity(tb), i * eb)}")
            part = self.f.cast("trunc", vt(ity(tb)), part, vt(ity(eb)))
            self.write(item, part, "b%d" % eb, mask)

    def load_slot(self, slot) -> str:
        """The slot's current 32 lanes (cached while the block lasts: values
        defined earlier in code that dominates this point)."""
        v = self.vcache.get(slot.index)
        if v is None:
            v = self.vcache[slot.index] = self.f.load(vt(ity(slot.bits)), self.slot_ptr(slot), 8)
        return v

    def read_var(self, var, t: str) -> str:
        slot = self.plan.var_slot(self.inst, var)
        return self.adjust(self.load_slot(slot), "b%d" % slot.bits if slot.bits > 1 else "pred", t)

    def write_var(self, var, v: str, t: str) -> None:
        slot = self.plan.var_slot(self.inst, var)
        self._masked_store(slot, v, t, None)

    def slot_ptr(self, slot) -> str:
        """Pointer to the slot's 32 lanes (computed once, in the entry block,
        so it dominates every use): in the warp state, or, for optimised
        code, an alloca where ``in_registers`` allows, zeroed so that LLVM
        sees no undefined value to exploit. Its warp-state bytes are
        reserved either way, so level-0 and O2 code of a kernel share one
        warp-state layout (tier_up.py)."""
        name = self.slot_names.get(slot.index)
        if name is None:
            name = self.slot_names[slot.index] = f"%slot{slot.index}"
            offset = self.frame_offset(slot.index)
            if self.in_registers(slot):
                t = vt(ity(slot.bits))
                self.f.entry.append(f"  {name} = alloca {t}, align 64")
                self.f.entry.append(f"  store {t} zeroinitializer, ptr {name}, align 64")
            else:
                self.f.entry.append(f"  {name} = getelementptr inbounds i8, ptr %ws, i64 {offset}")
        return name

    def in_registers(self, slot) -> bool:
        """May the slot live in the function's own memory (an alloca, that
        LLVM's SROA turns into SSA values: jit.py) instead of the warp state?
        Yes for a local register (local_regs.py) and, in optimised code of a
        kernel whose registers need not stay in the warp state (no barrier,
        mbarrier wait or tensor-core instruction:
        plan.registers_in_warp_state), for every register that is not zeroed
        when the warp starts (frame.py). (At level 0, whose code keeps every
        value in memory between blocks anyway, only local registers gain.)"""
        if slot.local:
            return True
        return (self.level > 0 and slot.register and self.plan.local_regs
                and not self.plan.registers_in_warp_state
                and self.zeroed is not None and slot.index not in self.zeroed)

    # ---------------------------------------------------------- results
    def dst_list(self, ins: ir.Instr) -> list:
        """The destination registers in operand order (None for a sink)."""
        out = []
        for d in ins.dsts:
            if isinstance(d, ir.Pair):
                out.extend([_reg(d.first), _reg(d.second)])
            elif isinstance(d, (ir.Vec, ir.ParenList)):
                out.extend(_reg(x) for x in d.items)
            else:
                out.append(_reg(d))
        return out


def _reg(d):
    return None if isinstance(d, ir.Sink) or not isinstance(d, ir.Value) else d

