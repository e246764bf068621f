"""The injection variant of the code generator (``ptxc inject``; SASSI
section 8, NVBitFI): after every executed instruction that writes a general
register (target ``register``) or a predicate (``predicate``), and at every
``st`` (``memory``: the stored bytes), each executing lane (guard true, lane
active) counts one eligible dynamic instance in its thread's counter
(inject_ctl.py); when (warp, lane, instance) is the site's, one bit of the
destination is flipped: bit ``site_rand mod D`` of the concatenated
destination registers (D = their bits, operand order; a register's bits are
those of its declaration), or of the stored value (D = bytes stored x 8, the
vector elements in order). The flip happens after the instruction wrote its
result (register, predicate) or on the value as it is stored (memory; the
source register keeps its value). A variant of its own, like memcheck
(jit.compile_kernel(inject=True)): the default code is unchanged.

Not eligible: phi moves (not PTX instructions), ``.cc`` carry flags, calls
(their callee's instructions are), barriers. A stored immediate is flipped
like a register value (the flip is applied to the value as the store reads
it).
"""
from __future__ import annotations

from ptxc import ir

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.codegen import KernelCodegen
from ptxc.backends.llvm.instruments.inject_ctl import (OFF_COUNTS, OFF_HIT, OFF_INSTANCE, OFF_LANE,
                                                       OFF_RAND, OFF_TARGET, OFF_WARP, SYMBOL,
                                                       TARGETS)
from ptxc.backends.llvm.plan import CC_REG
from ptxc.backends.llvm.reg_writes import destinations
from ptxc.backends.llvm.irtext import LANE_IDS, splat, vt
from ptxc.backends.llvm.values import ity

T_REGISTER, T_MEMORY, T_PREDICATE = (TARGETS.index(t) for t in TARGETS)


def register_dsts(cg, ins, want_pred: bool) -> list:
    """[(slot, bits)] of the destination registers of ``ins`` of one kind
    (predicates or not), in operand order (reg_writes.destinations)."""
    out = []
    for d in destinations(ins):
        if d.type == "cc" or d.reg == CC_REG:
            continue
        slot = cg.plan.slot(cg.inst, d)
        if slot is None or (slot.bits == 1) != want_pred:
            continue
        out.append((slot, slot.bits))
    return out


class InjectCodegen(KernelCodegen):
    """KernelCodegen plus the counting and flipping of inject_ir."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.store_flip = None          # (items, element bits, hit mask, bit) while lowering a st
        self.decls.add(f"@{SYMBOL} = external global [128 x i8]")

    def instr(self, ins) -> None:
        self.cur = ins
        if ins.is_phi or ins.opcode in ("bar", "barrier") or not self.keep(ins) \
                or self.ops.get(ins.opcode) is None:
            return super().instr(ins)
        if ins.opcode == "st":
            return self.store_instr(ins)
        emi = self.exec_mask(ins)       # before the instruction may overwrite its guard
        super().instr(ins)
        for target, pred in ((T_REGISTER, False), (T_PREDICATE, True)):
            dsts = register_dsts(self, ins, pred)
            if dsts:
                self.inject_registers(target, dsts, emi)

    # ------------------------------------------------------- matching
    def exec_mask(self, ins) -> str:
        """The lanes that execute ``ins`` (i32), re-evaluating its guard
        without counting it again."""
        if ins.guard is None:
            return self.m
        g = self.read(ins.guard, "pred")
        if ins.guard_neg:
            g = self.f.val(f"xor <32 x i1> {g}, {splat('i1', 'true')}")
        eff = self.f.val(f"and <32 x i1> {g}, {self.mv}")
        return self.f.cast("bitcast", "<32 x i1>", eff, "i32")

    def ctl(self, t: str, off: int) -> str:
        return self.f.field(t, self.f.gep(f"@{SYMBOL}", off) if off else f"@{SYMBOL}", 0,
                            8 if t in ("i64", "ptr") else 4)

    def count_and_match(self, target: int, emi: str) -> str:
        """Count the executing lanes ``emi`` in their threads' counters of
        ``target``; the <32 x i1> lanes that hit the site."""
        f = self.f
        cnt = self.ctl("ptr", OFF_COUNTS + 8 * target)
        lin = f.field("i32", "%cta", Lo.CTA_LINEAR)
        lin64 = f.cast("zext", "i32", lin, "i64")
        nw64 = f.cast("zext", "i32", self.nwarps, "i64")
        w64 = f.cast("zext", "i32", self.warp_id, "i64")
        gw = f.val(f"add i64 {f.val(f'mul i64 {lin64}, {nw64}')}, {w64}")
        base = f.val(f"getelementptr inbounds i64, ptr {cnt}, i64 {f.val(f'mul i64 {gw}, 32')}")
        old = f.load("<32 x i64>", base, 8)
        em = f.cast("bitcast", "i32", emi, "<32 x i1>")
        f.store("<32 x i64>", f.val(f"add <32 x i64> {old}, {f.cast('zext', '<32 x i1>', em, '<32 x i64>')}"),
                base, 8)
        same_w = f.icmp("eq", "i64", gw, self.ctl("i64", OFF_WARP))
        same_t = f.icmp("eq", "i32", self.ctl("i32", OFF_TARGET), str(target))
        ok = f.val(f"and i1 {same_w}, {same_t}")
        lane = self.bcast(self.ctl("i32", OFF_LANE), "i32")
        inst = self.bcast(self.ctl("i64", OFF_INSTANCE), "i64")
        at = f.val(f"and <32 x i1> {f.icmp('eq', '<32 x i32>', LANE_IDS, lane)}, "
                   f"{f.icmp('eq', '<32 x i64>', old, inst)}")
        at = f.val(f"and <32 x i1> {at}, {em}")
        return f.val(f"select i1 {ok}, <32 x i1> {at}, <32 x i1> zeroinitializer")

    def chosen_bit(self, total: int) -> str:
        """The flipped bit (i64) among ``total`` destination bits."""
        return self.f.val(f"urem i64 {self.ctl('i64', OFF_RAND)}, {total}")

    def record_hit(self, bit: str, total: int) -> None:
        f = self.f
        f.set_field("i32", "1", f"@{SYMBOL}", OFF_HIT)
        f.set_field("i32", str(self.iid()), f"@{SYMBOL}", OFF_HIT + 4)
        f.set_field("i32", f.cast("trunc", "i64", bit, "i32"), f"@{SYMBOL}", OFF_HIT + 8)
        f.set_field("i32", str(total), f"@{SYMBOL}", OFF_HIT + 12)

    # ------------------------------------------------- register targets
    def inject_registers(self, target: int, dsts: list, emi: str) -> None:
        f = self.f
        hit = self.count_and_match(target, emi)
        anyhit = f.icmp("ne", "i32", f.cast("bitcast", "<32 x i1>", hit, "i32"), "0")
        go, done = f.fresh_label("inj"), f.fresh_label("injdone")
        f.cbr(anyhit, go, done)
        f.label(go, dominated=True)
        total = sum(b for _, b in dsts)
        bit = self.chosen_bit(total)
        self.record_hit(bit, total)
        off = 0
        for slot, bits in dsts:
            ty = ity(bits)
            inside = f.val(f"and i1 {f.icmp('uge', 'i64', bit, str(off))}, "
                           f"{f.icmp('ult', 'i64', bit, str(off + bits))}")
            sh = f.cast("trunc", "i64", f.val(f"sub i64 {bit}, {off}"), ty) if bits > 1 else "0"
            one = f.val(f"shl {ty} 1, {sh}") if bits > 1 else "true"
            flip = f.val(f"select i1 {inside}, {ty} {one}, {ty} 0" if bits > 1 else
                         f"select i1 {inside}, i1 true, i1 false")
            flipv = f.val(f"select <32 x i1> {hit}, {vt(ty)} {self.bcast(flip, ty)}, "
                          f"{vt(ty)} zeroinitializer")
            ptr = self.slot_ptr(slot)
            v = f.load(vt(ty), ptr, 8)
            f.store(vt(ty), f.val(f"xor {vt(ty)} {v}, {flipv}"), ptr, 8)
            off += bits
        f.br(done)
        f.label(done)               # not dominated: cached register values are dropped

    # --------------------------------------------------- memory target
    def store_instr(self, ins) -> None:
        from ptxc.backends.llvm.ops.access import mem_type, vec_width
        from ptxc.backends.llvm.values import bits_of
        t = mem_type(ins)
        n, eb = vec_width(ins), bits_of(t)
        val_op = ins.srcs[-1]
        items = val_op.items if isinstance(val_op, ir.Vec) else [val_op]
        hit = self.count_and_match(T_MEMORY, self.exec_mask(ins))
        total = n * eb
        bit = self.chosen_bit(total)
        anyhit = self.f.icmp("ne", "i32", self.f.cast("bitcast", "<32 x i1>", hit, "i32"), "0")
        go, done = self.f.fresh_label("injst"), self.f.fresh_label("injstdone")
        self.f.cbr(anyhit, go, done)
        self.f.label(go, dominated=True)
        self.record_hit(bit, total)
        self.f.br(done)
        self.f.label(done)
        self.store_flip = ({id(x): i for i, x in enumerate(items[:n])}, eb, hit, bit)
        try:
            super().instr(ins)
        finally:
            self.store_flip = None

    def read(self, op, t: str) -> str:
        v = super().read(op, t)
        sf = self.store_flip
        if sf is None or id(op) not in sf[0]:
            return v
        index, eb, hit, bit = sf[0][id(op)], sf[1], sf[2], sf[3]
        f = self.f
        ty = ity(eb)
        iv = self.adjust(v, t, "b%d" % eb)
        inside = f.val(f"and i1 {f.icmp('uge', 'i64', bit, str(index * eb))}, "
                       f"{f.icmp('ult', 'i64', bit, str(index * eb + eb))}")
        sh = f.cast("trunc", "i64", f.val(f"sub i64 {bit}, {index * eb}"), ty)
        flip = f.val(f"select i1 {inside}, {ty} {f.val(f'shl {ty} 1, {sh}')}, {ty} 0")
        flipv = f.val(f"select <32 x i1> {hit}, {vt(ty)} {self.bcast(flip, ty)}, "
                      f"{vt(ty)} zeroinitializer")
        return self.adjust(f.val(f"xor {vt(ty)} {iv}, {flipv}"), "b%d" % eb, t)
