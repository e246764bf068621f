"""The warp state as ``run_warp`` uses it (mixin of KernelCodegen): the
uniform values the entry block loads once per call, the register slots'
place in the warp state (the frame) and their zeroing on a warp's first
call.

Every PTX register is a slot of 32 lanes in the warp state (values.py reads
and writes them), laid out after the reconvergence stack from ``frame_base``
on, each aligned to its size (up to 64 bytes) and placed when first used;
the generated code sees them through pointers computed in the entry block.
A slot that may be read before any write (an Undef phi operand, a guarded
write over an Undef value, a shfl/match source) is zeroed when the warp
starts, so such reads give 0.
"""
from __future__ import annotations

from ptxc import ir

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.irtext import vt
from ptxc.backends.llvm.values import ity


class WarpFrame:
    """The entry block's loads and the register slots' frame; expects the
    KernelCodegen attributes."""

    def prologue_scalars(self) -> None:
        """Uniform values loaded once per call (placed in the entry block)."""
        f = self.f
        self.pro: list[str] = []
        lines, f.lines = f.lines, self.pro
        self.max_steps = f.field("i64", "%L", Lo.L_MAX_STEPS, 8)
        self.tid = [f.load("<32 x i32>", f.gep("%ws", Lo.WS_TID + 128 * k), 64) for k in range(3)]
        self.ntid = [f.field("i32", "%L", Lo.L_NTID + 4 * k) for k in range(3)]
        self.nctaid = [f.field("i32", "%L", Lo.L_NCTAID + 4 * k) for k in range(3)]
        self.ctaid = [f.field("i32", "%cta", Lo.CTA_ID + 4 * k) for k in range(3)]
        self.warp_id = f.field("i32", "%ws", Lo.WS_WARP)
        self.nwarps = f.field("i32", "%L", Lo.L_NWARPS)
        self.nsegs = f.field("i32", "%L", Lo.L_NSEGS)
        self.shared_total = f.field("i32", "%L", Lo.L_SHARED)
        self.dyn_shared = f.field("i32", "%L", Lo.L_DYN_SHARED)
        self.params = f.field("ptr", "%L", Lo.L_PARAMS, 8)
        if self.plan.recursive:
            self.stack_limit = f.field("i32", "%L", Lo.L_STACK)
        self.seg_base, self.seg_size = {}, {}
        for name, seg in (("shared", Lo.SEG_SHARED), ("local", Lo.SEG_LOCAL),
                          ("param", Lo.SEG_PARAM), ("const", Lo.SEG_CONST),
                          ("globals", Lo.SEG_GLOBALS)):
            e = Lo.SEG_ENTRY_BYTES * seg
            self.seg_base[name] = f.field("ptr", "%segs", e, 8)
            self.seg_size[name] = f.field("i64", "%segs", e + 8, 8)
        f.store("i32", f.field("i32", "%ws", Lo.WS_SP), self.sp_a, 4)
        f.store("i32", f.field("i32", "%ws", Lo.WS_EXITED), self.ex_a, 4)
        f.store("i64", f.field("i64", "%ws", Lo.WS_STEPS, 8), self.steps_a, 8)
        f.lines = lines

    def frame_offset(self, index: int) -> int:
        """Byte offset in the warp state of register slot ``index`` (assigned
        on first use; slots live in memory, see the module docstring)."""
        off = self.slot_offsets.get(index)
        if off is None:
            s = self.plan.slot_list[index]
            size = max(8, s.bits * 4)
            a = min(64, size)
            off = (self.frame_end + a - 1) // a * a
            self.frame_end = off + size
            off = self.slot_offsets[index] = self.frame_base + off
        return off

    def undefined_slots(self) -> list:
        """Slots that may be read before any write (a phi with an Undef
        operand, a guarded write over an Undef old value, a shfl/match
        source): zeroed when the warp starts, so such reads give 0."""
        out = {}
        for inst in self.plan.instances:
            for blk in inst.fn.blocks:
                for ins in blk.instrs:
                    self.inst = inst
                    if ins.is_phi and any(isinstance(v, ir.Undef) for v in ins.srcs):
                        slot = self.plan.slot(inst, ins.results[0])
                    elif any(isinstance(v, ir.Undef) for v in ins.prior):
                        for r, v in zip(ins.results, ins.prior):
                            if isinstance(v, ir.Undef):
                                s2 = self.plan.slot(inst, r)
                                if s2 is not None:
                                    out[s2.index] = s2
                        continue
                    elif ins.opcode in ("shfl", "match") and ins.srcs and isinstance(ins.srcs[0], ir.Value):
                        slot = self.plan.slot(inst, ins.srcs[0])
                    else:
                        continue
                    if slot is not None:
                        out[slot.index] = slot
        self.inst = self.plan.root
        return list(out.values())

    def slot_init_lines(self) -> list[str]:
        """Entry code: on a warp's first call, zero the maybe-undefined slots."""
        f = self.f
        out_lines, f.lines = f.lines, []
        started = f.field("i32", "%ws", Lo.WS_STARTED)
        c = f.icmp("ne", "i32", started, "0")
        f.cbr(c, "dispatch", "frame.zero")
        f.label("frame.zero")
        for s in self.zero_slots:
            f.store(vt(ity(s.bits)), "zeroinitializer", self.slot_ptr(s), 8)
        f.set_field("i32", "1", "%ws", Lo.WS_STARTED)
        f.br("dispatch")
        lines, f.lines = f.lines, out_lines
        return lines
