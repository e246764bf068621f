"""Special registers and symbol addresses in the generated ``run_warp``
(mixin of KernelCodegen; PTX ISA chapter 10, "Special Registers").

``%tid``, ``%laneid`` and the lane masks are per-lane constants or loaded
from the warp state; ``%ntid``, ``%nctaid``, ``%ctaid``, ``%warpid``,
``%nwarpid`` and the shared-memory sizes are uniform values of the launch
(loaded once in the entry block: frame.py) broadcast to 32 lanes;
``%clock``/``%clock64``/``%globaltimer`` count the warp instructions the CTA
executed before this one (docs/launch.md, "Clock"); ``%envreg1``/``%envreg2``
hold the grid-sync workspace of a cooperative launch (coop.py). A symbol
operand reads as the address of its variable in its own state space.
"""
from __future__ import annotations

from ptxc import ir

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.irtext import LANE_IDS, lane_consts, splat
from ptxc.backends.llvm.plan import DYNAMIC


class SpecialRegs:
    """Special-register reads; expects the KernelCodegen attributes."""

    def special(self, name: str) -> tuple[str, str]:
        """(vector, PTX type) of a special register."""
        f = self.f
        comp = {"x": 0, "y": 1, "z": 2}
        base, _, c = name.partition(".")
        if base == "%tid" and c in comp:
            return self.tid[comp[c]], "u32"
        uniform = {"%ntid": self.ntid, "%nctaid": self.nctaid, "%ctaid": self.ctaid}
        if base in uniform and c in comp:
            return self.bcast(uniform[base][comp[c]], "i32"), "u32"
        if name == "%laneid":
            return LANE_IDS, "u32"
        if name == "%warpid":
            return self.bcast(self.warp_id, "i32"), "u32"
        if name == "%nwarpid":
            return self.bcast(self.nwarps, "i32"), "u32"
        if name.startswith("%lanemask_"):
            return self.lanemask(name[len("%lanemask_"):]), "u32"
        if name in ("%clock64", "%globaltimer"):
            return self.bcast(self.clock(), "i64"), "u64"
        if name in ("%clock", "%clock_hi", "%globaltimer_lo", "%globaltimer_hi"):
            c = self.clock()
            if name.endswith("_hi"):
                c = f.val(f"lshr i64 {c}, 32")
            return self.bcast(f.cast("trunc", "i64", c, "i32"), "i32"), "u32"
        if name in ("%envreg1", "%envreg2"):         # the grid-sync workspace (coop.py)
            ws = f.field("i64", "%L", Lo.L_GRID_WS, 8)
            if name == "%envreg1":
                ws = f.val(f"lshr i64 {ws}, 32")
            return self.bcast(f.cast("trunc", "i64", ws, "i32"), "i32"), "u32"
        if name == "%dynamic_smem_size":
            return self.bcast(self.dyn_shared, "i32"), "u32"
        if name in ("%total_smem_size", "%aggr_smem_size"):
            return self.bcast(self.shared_total, "i32"), "u32"
        if name == "%nsmid":
            return splat("i32", 1), "u32"
        return "zeroinitializer", "u64" if name in ("%gridid",) else "u32"

    def clock(self) -> str:
        """The clock (i64): warp instructions the CTA executed before the
        current one (docs/launch.md, "Clock"). ptxc_enter added the whole
        block on entry, so subtract the instructions of the node from the
        current one on."""
        f = self.f
        instrs = self.node.instrs
        before = next(i for i, ins in enumerate(instrs) if ins is self.cur)
        done = f.field("i64", "%cta", Lo.CTA_INST, 8)
        return f.val(f"sub i64 {done}, {len(instrs) - before}")

    def lanemask(self, kind: str) -> str:
        fn = {"eq": lambda l: 1 << l, "lt": lambda l: (1 << l) - 1, "le": lambda l: (2 << l) - 1,
              "gt": lambda l: (0xFFFFFFFF << (l + 1)) & 0xFFFFFFFF,
              "ge": lambda l: (0xFFFFFFFF << l) & 0xFFFFFFFF}[kind]
        return lane_consts("i32", [(fn(l) ^ 0x80000000) - 0x80000000 for l in range(32)])

    def framed_sym(self, sym: ir.Sym):
        """The lane addresses of a framed instance's .local variable (its
        frame differs per activation: ops/call_frames.py), else None."""
        if sym.name == "WARP_SZ":
            return None
        p = self.plan.resolve(self.inst, self.cur, sym.name)
        if getattr(p, "frame", None) is None:
            return None
        from ptxc.backends.llvm.ops.access import frame_address
        return frame_address(self, p, sym.offset)

    def sym_address(self, sym: ir.Sym) -> int:
        """The address a symbol names (its own state space's address)."""
        if sym.name == "WARP_SZ":
            return 32
        p = self.plan.resolve(self.inst, self.cur, sym.name)
        if p.space == "func":           # a function's address (ptxc/ir/call_targets.py)
            from ptxc.ir.call_targets import function_address
            return function_address(self.plan.module, sym.name, self.plan.shift) or 0
        off = self.plan.dyn_shared_base if p.offset == DYNAMIC else p.offset
        off += sym.offset
        if p.space == "global":
            return (p.seg << self.plan.shift) | off
        return off
