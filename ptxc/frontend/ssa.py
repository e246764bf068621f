"""SSA construction with phi nodes, after Braun et al., "Simple and Efficient
Construction of Static Single Assignment Form" (CC 2013).

Because the whole CFG is known before renaming starts, every block is both
*filled* and *sealed* up front:

1. Local numbering: walk each block once; a read of a register defined earlier
   in the block takes that definition, any other read is a pending lookup of
   the register's value on entry to the block. A guarded definition first
   reads the register's old value (``prior``).
2. Global lookup: the entry value of a register in a block with one
   predecessor is that predecessor's exit value; with several, it is a new phi
   whose operands are looked up edge by edge (a worklist instead of recursion,
   so deep CFGs cannot overflow the stack).
3. Trivial phis (all operands the same value, or the phi itself) are removed
   until none is left (Braun's tryRemoveTrivialPhi, run to a fixpoint), which
   gives minimal SSA for reducible CFGs. Phis are created only where a value
   is looked up, so the form is pruned.

Registers read before any write get a distinct Undef value (one per register)
and a warning; ``.reg`` parameters of a .func enter as Argument values.
"""
from __future__ import annotations

from ptxc import ir
from ptxc.frontend.scopes import Var


class Pending(ir.Value):
    """A read whose value is the register's value on entry to ``block``."""
    __slots__ = ("var", "block")

    def __init__(self, var: Var, block: ir.Block):
        super().__init__(var.type, var.name, var.name)
        self.var, self.block = var, block


class Phi(ir.Result):
    __slots__ = ("var", "replaced")

    def __init__(self, var: Var, instr: ir.Instr):
        super().__init__(var.type, var.name, var.name, instr, 0)
        self.var, self.replaced = var, None


CC = "%cc"   # the carry flag of add.cc/addc..., an implicit register


class SSABuilder:
    def __init__(self, fn: ir.Function, builder, args: dict | None = None):
        self.fn, self.builder = fn, builder
        self.args = args or {}                   # .reg parameter Var -> Argument
        self.undefs: dict[Var, ir.Undef] = {}
        self.last: dict[int, dict[Var, ir.Value]] = {}
        self.entry: dict[tuple[int, Var], ir.Value] = {}
        self.phis: dict[int, list[ir.Instr]] = {}
        self.worklist: list[tuple[Phi, ir.Block]] = []
        self.cc = Var(CC, "pred")
        self.users: list[ir.Instr] = []          # instructions holding Pending reads

    # ---------------------------------------------------------- phase 1
    def number_block(self, blk: ir.Block) -> None:
        cur: dict[Var, ir.Value] = {}
        pending = [False]

        def read(v):
            if v.__class__ is not Var:
                return v
            got = cur.get(v)
            if got is None:
                got = cur[v] = Pending(v, blk)
            if got.__class__ is Pending:
                pending[0] = True
            return got

        composite = ir.COMPOSITE
        for ins in blk.instrs:
            pending[0] = False
            srcs = ins.srcs              # ins.replace_values(read): no priors or implicit reads yet
            for i, op in enumerate(srcs):
                cls = op.__class__
                if cls is Var:
                    srcs[i] = read(op)
                elif cls in composite:
                    srcs[i] = ir.map_values(op, read)
            if ins.guard is not None:
                ins.guard = read(ins.guard)
            if ins.info.uses_cc:
                ins.implicit = [read(self.cc)]
            dsts = ins.dsts
            if len(dsts) == 1 and dsts[0].__class__ is Var:     # the common case
                defs = [(dsts[0], None)]
            else:
                defs = list(self.defined_vars(ins))
            if ins.guard is not None:
                ins.prior = [read(var) for var, _ in defs]
            for var, setter in defs:
                res = ir.Result(var.type, var.name, var.name, ins, len(ins.results))
                ins.results.append(res)
                if setter is None:
                    dsts[0] = res
                else:
                    setter(res)
                cur[var] = res
            if ins.info.sets_cc and "cc" in ins.mods:
                if ins.guard is not None:
                    ins.prior.append(read(self.cc))
                res = ir.Result("pred", CC, CC, ins, len(ins.results))
                ins.results.append(res)
                cur[self.cc] = res
            if pending[0]:
                self.users.append(ins)
        self.last[id(blk)] = {k: v for k, v in cur.items() if not isinstance(v, Pending)}

    def defined_vars(self, ins: ir.Instr):
        """(Var, setter) for each register the instruction writes, in operand order."""
        for i, d in enumerate(ins.dsts):
            yield from self._defs_in(d, lambda r, i=i: ins.dsts.__setitem__(i, r))

    def _defs_in(self, d, setter):
        if isinstance(d, Var):
            yield d, setter
        elif isinstance(d, ir.Vec) or isinstance(d, ir.ParenList):
            for j, item in enumerate(d.items):
                yield from self._defs_in(item, lambda r, j=j, d=d: d.items.__setitem__(j, r))
        elif isinstance(d, ir.Pair):
            yield from self._defs_in(d.first, lambda r, d=d: setattr(d, "first", r))
            yield from self._defs_in(d.second, lambda r, d=d: setattr(d, "second", r))

    # ---------------------------------------------------------- phase 2
    def read_exit(self, var: Var, blk: ir.Block) -> ir.Value:
        v = self.last[id(blk)].get(var)
        return v if v is not None else self.read_entry(var, blk)

    def read_entry(self, var: Var, blk: ir.Block) -> ir.Value:
        chain, seen = [], set()
        while True:
            key = (id(blk), var)
            got = self.entry.get(key)
            if got is not None:
                break
            if not blk.preds or key in seen:
                got = self.args.get(var) if not blk.preds else None
                got = got or self.undef(var)
                break
            seen.add(key)
            if len(blk.preds) > 1:
                got = self.new_phi(var, blk)
                break
            chain.append(key)
            pred = blk.preds[0]
            got = self.last[id(pred)].get(var)
            if got is not None:
                break
            blk = pred
        self.entry[key] = got
        for k in chain:
            self.entry[k] = got
        return got

    def new_phi(self, var: Var, blk: ir.Block) -> Phi:
        ins = ir.Instr("phi", (var.type,), info=PHI_INFO, loc=blk.instrs[0].loc if blk.instrs else None)
        ins.block = blk
        phi = Phi(var, ins)
        ins.results = [phi]
        ins.dsts = [phi]
        self.phis.setdefault(id(blk), []).append(ins)
        self.entry[(id(blk), var)] = phi
        self.worklist.append((phi, blk))
        return phi

    def fill_phis(self) -> None:
        while self.worklist:
            phi, blk = self.worklist.pop()
            phi.instr.srcs = [self.read_exit(phi.var, p) for p in blk.preds]
            phi.instr.phi_blocks = list(blk.preds)

    def undef(self, var: Var) -> ir.Undef:
        """One Undef per register declaration (shadowing registers get their own)."""
        u = self.undefs.get(var)
        if u is None:
            key = var.name if var.name not in self.fn.undefs else f"{var.name}#{len(self.undefs)}"
            u = self.undefs[var] = self.fn.undefs[key] = ir.Undef(var.type, f"{var.name}.undef",
                                                                   var.name)
        return u

    # ---------------------------------------------------------- phase 3
    def remove_trivial_phis(self) -> int:
        """Replace trivial phis until none is left; returns how many were removed."""
        all_phis = [p for lst in self.phis.values() for p in lst]
        removed = 0
        changed = True
        while changed:
            changed = False
            for ins in all_phis:
                phi = ins.results[0]
                if phi.replaced is not None:
                    continue
                ops = {id(v): v for v in map(resolve, ins.srcs) if v is not phi}
                if len(ops) <= 1:
                    phi.replaced = next(iter(ops.values())) if ops else self.undef(phi.var)
                    changed = True
                    removed += 1
        return removed

    def run(self) -> None:
        fn = self.fn
        add_preentry(fn)
        for blk in fn.blocks:
            self.number_block(blk)
        for ins in self.users:
            ins.replace_values(lambda v: self.read_entry(v.var, v.block) if isinstance(v, Pending) else v)
        self.fill_phis()
        removed = self.remove_trivial_phis()
        for blk in fn.blocks:
            live = [p for p in self.phis.get(id(blk), []) if p.results[0].replaced is None]
            blk.instrs[:0] = live
        if removed:
            for ins in fn.instructions():
                ins.replace_values(resolve)
        name_values(fn)
        ir.collect_uses(fn)                  # every value here is new: no reset needed
        if fn.undefs:
            self.warn_undefined()

    def warn_undefined(self) -> None:
        warned = set()
        reachable = reachable_blocks(self.fn)
        for ins in self.fn.instructions():
            if ins.is_phi or id(ins.block) not in reachable:
                continue
            reads = [v for op in ins.srcs for v in ir.values_in(op)]
            if ins.guard is not None:
                reads.append(ins.guard)
            for v in reads:
                if isinstance(v, ir.Undef) and id(v) not in warned and v.reg != CC:
                    warned.add(id(v))
                    self.fn.module.warnings.append(
                        f"{ins.loc}: warning: register {v.reg} may be read before it is "
                        f"written (in {self.fn.name})")


def reachable_blocks(fn: ir.Function) -> set[int]:
    """ids of the blocks reachable from the entry."""
    seen, stack = {id(fn.blocks[0])}, [fn.blocks[0]]
    while stack:
        for s in stack.pop().succs:
            if id(s) not in seen:
                seen.add(id(s))
                stack.append(s)
    return seen


def resolve(v):
    while isinstance(v, Phi) and v.replaced is not None:
        v = v.replaced
    return v


def add_preentry(fn: ir.Function) -> None:
    """If the entry block has predecessors, give the function an empty entry block
    ('preentry'), so that phis at the old entry have one incoming edge per predecessor."""
    if not fn.blocks or not fn.blocks[0].preds:
        return
    old = fn.blocks[0]
    entry = ir.Block("preentry")
    entry.function = fn
    entry.succs, entry.fallthrough = [old], old
    old.preds.insert(0, entry)
    fn.blocks.insert(0, entry)
    for i, b in enumerate(fn.blocks):
        b.index = i


def name_values(fn: ir.Function) -> None:
    """SSA names derived from register names: %f9, %f9.1, %f9.2 in layout order."""
    counts: dict[str, int] = {}
    for ins in fn.instructions():
        for r in ins.results:
            k = counts.get(r.reg, 0)
            counts[r.reg] = k + 1
            r.name = r.reg if k == 0 else f"{r.reg}.{k}"


from ptxc.ir.opcodes import OpInfo  # noqa: E402

PHI_INFO = OpInfo("phi", "move")


def build_ssa(fn: ir.Function, builder, args: dict | None = None) -> None:
    SSABuilder(fn, builder, args).run()
