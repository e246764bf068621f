"""Build one function body: scopes and declarations, instructions, basic blocks.

Blocks are split at labels that are branch targets (bra, brx.idx tables) and
after terminators (bra, brx, ret, exit, trap). A block that does not end in an
unconditional terminator falls through to the next block in layout order;
falling off the end of the function returns. SSA construction follows
(ptxc.frontend.ssa).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ptxc import ir
from ptxc.errors import SrcLoc
from ptxc.frontend.debug_directives import check_loc
from ptxc.frontend.decl_rules import check_range
from ptxc.frontend.opcode_words import check_arity, check_guard, check_isa, known_opcode
from ptxc.frontend.scopes import SPECIAL_REGS, Scope, Var
from ptxc.frontend.syntax import Name

if TYPE_CHECKING:
    from ptxc.frontend.builder import Builder

BRANCHES = ("bra", "brx")


class FunctionBuilder:
    def __init__(self, builder: Builder, fn: ir.Function):
        self.b = builder
        self.fn = fn
        self.instrs: list[ir.Instr] = []
        # Labels are lexically scoped: a label is known by (defining scope, name).
        self.defined: set[tuple] = set()
        self.pending_labels: list[str] = []
        self.pending_keys: list[tuple] = []
        self.instr_keys: dict[int, list[tuple]] = {}   # id(instr) -> its label keys
        self.ref_keys: dict[int, tuple] = {}           # id(LabelRef) -> key
        self.pending_pragmas: list[str] = []
        self.btargets: dict[str, list[Name]] = {}
        self.dbg = None                     # the .loc run in effect (tuple of texts)
        self.pending_dbg: list[str] = []    # .loc lines since the last instruction
        self.where = (1, 1)                 # (line, col) of the instruction being built
        self.vector_range_regs = builder.vector_range_regs   # `.reg .v2 .b16 x<4>`: not type checked

    # ------------------------------------------------------------- walk
    def build(self, body) -> None:
        root = Scope(self.b.module_scope)
        self.args = {}
        for p in self.fn.params + self.fn.rets:
            if p.space == "reg":             # old-style .reg parameters (maybe vectors)
                self.reg_param(p, root, is_input=p in self.fn.params)
        self.walk(body, root)
        self.fn.scope = root
        if self.vector_range_regs:
            self.fn.attrs["vector_range_regs"] = self.vector_range_regs
        self.fn.attrs["btargets"] = {k: [n.text for n in v[0]] for k, v in self.btargets.items()}
        self.trailing_keys = list(self.pending_keys)
        self.fn.attrs["trailing_labels"] = list(self.pending_labels)
        self.fn.attrs["trailing_dbg"] = tuple(self.pending_dbg)   # .loc lines after the last instruction
        self.make_blocks()
        from ptxc.frontend.ssa import build_ssa
        build_ssa(self.fn, self.b, self.args)

    def reg_param(self, p: ir.Variable, root: Scope, is_input: bool) -> None:
        """Declare a .reg parameter; an input enters the function as Argument values."""
        if p.vec:
            comps = [Var(f"{p.name}.{c}", p.type) for c in "xyzw"[:p.vec]]
            root.vectors[p.name] = comps
        else:
            comps = [Var(p.name, p.type)]
        for var in comps:
            root.singles[var.name] = var
            if is_input:
                self.args[var] = ir.Argument(p.type, var.name, var.name)

    def walk(self, body, scope: Scope) -> None:
        stmts = body[1]
        for st in stmts:                      # declarations are visible in the whole scope
            if st[0] == "decl":
                self.declare(st, scope)
        for st in stmts:
            kind = st[0]
            if kind == "instr":
                self.instruction(st, scope)
            elif kind == "label":
                self.define_label(st[1], scope)
            elif kind == "loc":
                self.b.check_directive(check_loc, st[1], st[2])
                self.pending_dbg.append(st[1])
            elif kind == "pragma":
                self.pending_pragmas.append(", ".join(st[1]))
            elif kind == "body":
                self.walk(st, Scope(scope))
            elif kind in ("proto", "btargets"):
                self.named_directive(st, scope)

    def declare(self, st, scope: Scope) -> None:
        declare(self.b, st, scope, self.vector_range_regs)

    def define_label(self, name: Name, scope: Scope) -> None:
        key = (scope, name.text)
        if key in self.defined:
            raise self.b.error(f"label '{name.text}' defined twice in the same scope",
                               name.line, name.col)
        self.defined.add(key)
        self.pending_labels.append(name.text)
        self.pending_keys.append(key)

    def resolve_label(self, name: str, scope) -> tuple | None:
        """The key of the label ``name`` visible from ``scope`` (innermost first)."""
        while scope is not None:
            if (scope, name) in self.defined:
                return (scope, name)
            scope = scope.parent
        return None

    def named_directive(self, st, scope: Scope) -> None:
        """`.callprototype` and `.branchtargets`, named by the label before them."""
        label = self.pending_labels.pop() if self.pending_labels else None
        if self.pending_keys:
            self.pending_keys.pop()
        if st[0] == "btargets":
            if label is None:
                raise self.b.error(".branchtargets without a label", st[1][0].line)
            self.btargets[label] = (st[1], scope)
            scope.decl_order.append(("btargets", label, [n.text for n in st[1]]))
        else:
            _, rets, name, params = st
            scope.decl_order.append(("proto", label,
                                     None if rets is None else [self.b.param(p) for p in rets],
                                     [self.b.param(p) for p in params]))

    # ------------------------------------------------------ instructions
    def instruction(self, st, scope: Scope) -> None:
        _, guard, text, line, col, operands = st
        opcode, mods, info, ndst, arity = known_opcode(self.b, text, line, col)
        if arity is not None and len(operands) not in arity:
            check_arity(self.b, opcode, mods, len(operands), line, col, arity)
        if opcode == "call" and operands and isinstance(operands[0], tuple) \
                and operands[0][0] == "paren" and len(operands) > 1:
            ndst = 1                          # call (ret, ...), func, (args ...)
        if len(operands) < ndst:
            raise self.b.error(f"'{text}' needs {ndst} destination operand(s)", line, col)
        ins = ir.Instr(opcode, mods, info=info, loc=SrcLoc(self.b.filename, line, col))
        srcs = operands[ndst:]
        self.where = (line, col)
        ins.dsts = self.dsts(operands[:ndst], scope)
        if opcode in BRANCHES:    # the last operand of bra / brx.idx names a label (or a branch table)
            ins.srcs = [self.src(o, scope, i == len(srcs) - 1) for i, o in enumerate(srcs)]
            if opcode == "bra" and not (ins.srcs and isinstance(ins.srcs[-1], ir.LabelRef)):
                raise self.b.error(f"'{text}' needs a label as its target (PTX ISA bra: "
                                   "an indirect branch is brx.idx)", line, col)
        else:
            ins.srcs = self.srcs(srcs, scope)
        check_isa(self.b, ins, text, operands, self.vector_range_regs, line, col)
        if guard is not None:
            ins.guard = self.reg(guard[0], scope)
            ins.guard_neg = guard[1]
            check_guard(self.b, guard[0], ins.guard, self.vector_range_regs)
        ins.scope = scope
        if self.pending_dbg:                  # every .loc line, in order (inlined_at chains)
            self.dbg = tuple(self.pending_dbg)
            self.pending_dbg = []
            ins.dbg_new = True
        ins.dbg = self.dbg
        ins.labels, self.pending_labels = self.pending_labels, []
        self.instr_keys[id(ins)], self.pending_keys = self.pending_keys, []
        ins.pragmas, self.pending_pragmas = self.pending_pragmas, []
        self.instrs.append(ins)

    def dsts(self, ops: list, scope: Scope) -> list:
        """self.dst of each operand; a declared register (the common case) is
        looked up directly."""
        find, out = scope.find, []
        for o in ops:
            v = find(o.text) if o.__class__ is Name and o.text != "_" else None
            out.append(v if v is not None else self.dst(o, scope))
        return out

    def srcs(self, ops: list, scope: Scope) -> list:
        """self.src of each operand; declared registers and immediates directly."""
        find, out = scope.find, []
        for o in ops:
            cls = o.__class__
            if cls is Name:
                v = find(o.text)
                out.append(v if v is not None else self.name(o, scope, False))
            elif cls is ir.Imm:
                out.append(o)
            else:
                out.append(self.src(o, scope))
        return out

    def reg(self, name: Name, scope: Scope):
        var = scope.find(name.text)
        if var is not None:
            return var
        vec = scope.find_vector(name.text)
        if vec is not None:
            return ir.Vec(list(vec), name.text)
        if name.text in SPECIAL_REGS:
            sp = self.fn.special.get(name.text)
            if sp is None:
                sp = self.fn.special[name.text] = ir.SpecialReg(name.text, SPECIAL_REGS[name.text])
            return sp
        raise self.b.error(f"undeclared register '{name.text}'", name.line, name.col)

    def name(self, name: Name, scope: Scope, label: bool):
        """A name operand: a register if declared, else a special register, else a symbol/label."""
        var = scope.find(name.text)
        if var is not None:
            return var
        if name.text.startswith("%") and not self.is_symbol(name.text, scope):
            return self.reg(name, scope)
        if scope.find_vector(name.text) is not None:
            return self.reg(name, scope)
        if name.text == "_":
            return ir.SINK
        return ir.LabelRef(name.text) if label else ir.Sym(name.text)

    def is_symbol(self, name: str, scope) -> bool:
        """A declared variable (module or function scope) whose name starts with %."""
        s = scope
        while s is not None:
            if any(v.name == name for v in s.vars):
                return True
            s = s.parent
        return any(v.name == name for v in self.b.module.globals)

    def dst(self, op, scope: Scope):
        if isinstance(op, ir.Imm):
            raise self.b.error(f"the constant {op.text[:40]} cannot be a destination operand",
                               *self.where)
        if isinstance(op, Name):
            if op.text == "_":
                return ir.SINK
            v = self.reg(op, scope)
            if isinstance(v, ir.SpecialReg):
                raise self.b.error(f"cannot write special register '{op.text}'", op.line, op.col)
            return v
        kind = op[0]
        if kind == "pair":
            return ir.Pair(self.dst(op[1], scope), self.dst(op[2], scope))
        if kind == "vec":
            return ir.Vec([self.dst(o, scope) for o in op[1]])
        if kind == "paren":                   # call return list
            return ir.ParenList([self.src(o, scope) for o in op[1]])
        if kind == "mem":                     # e.g. st writes through an address operand
            return self.src(op, scope)
        raise self.b.error("invalid destination operand", *self.where)

    def src(self, op, scope: Scope, label: bool = False):
        if isinstance(op, Name):
            return self.name(op, scope, label)
        if isinstance(op, ir.Imm):
            return op
        kind = op[0]
        if kind == "not":
            return ir.Not(self.reg(op[1], scope))
        if kind == "symoff":
            target = self.name(op[1], scope, False)
            if isinstance(target, ir.Value):      # `%r + 1`: a register plus a constant
                return ir.RegOffset(target, op[2])
            return ir.Sym(op[1].text, op[2])
        if kind == "pair":
            return ir.Pair(self.name(op[1], scope, False), self.name(op[2], scope, False))
        if kind == "vec":
            return ir.Vec([self.src(o, scope) for o in op[1]])
        if kind == "paren":
            return ir.ParenList([self.src(o, scope) for o in op[1]])
        if kind == "mem":
            addr = op[1]
            if addr[0] == "list":
                return ir.Addr(ir.Bracket([self.src(o, scope) for o in addr[1]]), 0)
            base, off = addr
            return ir.Addr(None if base is None else self.name(base, scope, False), off)
        raise self.b.error(f"invalid operand {op!r:.60}", *self.where)

    # ------------------------------------------------------------ blocks
    def branch_targets(self) -> set[tuple]:
        """Keys of every label some branch or branch table can reach."""
        targets = set()
        for ins in self.instrs:
            if ins.opcode == "bra":
                for op in ins.srcs:
                    if isinstance(op, ir.LabelRef):
                        targets.add(self.target_key(op.name, ins.scope, ins))
                        self.ref_keys[id(op)] = self.target_key(op.name, ins.scope, ins)
            elif ins.opcode == "brx":
                targets.update(self.table_keys(ins))
        return targets

    def target_key(self, name: str, scope, ins: ir.Instr) -> tuple:
        key = self.resolve_label(name, scope)
        if key is None:
            raise self.b.error(f"undefined label '{name}'", ins.loc.line, ins.loc.col)
        return key

    def table_keys(self, ins: ir.Instr) -> list[tuple]:
        table = self.btargets.get(getattr(ins.srcs[-1], "name", None))
        if table is None:
            raise self.b.error("brx.idx needs a .branchtargets label list", ins.loc.line,
                               ins.loc.col)
        names, scope = table
        return [self.target_key(n.text, scope, ins) for n in names]

    def make_blocks(self) -> None:
        fn, targets = self.fn, self.branch_targets()
        blocks: list[ir.Block] = []
        by_key: dict[tuple, ir.Block] = {}
        cur = None
        for ins in self.instrs:
            keys = self.instr_keys[id(ins)]
            key = next((k for k in keys if k in targets), None)
            if cur is None or key is not None or (cur.instrs and cur.instrs[-1].info.terminator):
                cur = self.new_block(blocks, key[1] if key else None)
                cur.scope = key[0] if key else None
            by_key.update((k, cur) for k in keys if k in targets)
            if key is not None:
                ins.labels = [n for n, k in zip(ins.labels, keys) if k != key]
                if keys.index(key):           # labels written before the block's label
                    ins.attrs["labels_before_block"] = keys.index(key)
            ins.block = cur
            cur.instrs.append(ins)
        trailing = [k for k in self.trailing_keys if k in targets]
        if trailing or not blocks:
            end = self.new_block(blocks, trailing[0][1] if trailing else None)
            end.scope = trailing[0][0] if trailing else None
            by_key.update((k, end) for k in trailing)
            fn.attrs["trailing_labels"] = [n for n, k in zip(fn.attrs["trailing_labels"],
                                                             self.trailing_keys) if k not in targets]
        fn.blocks = blocks
        self.link(blocks, by_key)

    def new_block(self, blocks: list, label: str | None) -> ir.Block:
        name = label or f"bb{len(blocks)}"
        if label is not None and any(b.name == name for b in blocks):
            name = f"{label}.{sum(b.label == label for b in blocks)}"   # same label, other scope
        blk = ir.Block(name, label)
        blk.function = self.fn
        blk.index = len(blocks)
        blocks.append(blk)
        return blk

    def link(self, blocks: list[ir.Block], by_key: dict) -> None:
        for i, blk in enumerate(blocks):
            blk.fallthrough = blocks[i + 1] if i + 1 < len(blocks) else None
            last = blk.instrs[-1] if blk.instrs else None
            succs: list[ir.Block] = []
            if last is not None and last.opcode == "bra":
                target = next(op for op in last.srcs if isinstance(op, ir.LabelRef))
                target.block = by_key[self.ref_keys[id(target)]]
                succs.append(target.block)
                if last.guard is not None and blk.fallthrough is not None:
                    succs.append(blk.fallthrough)
            elif last is not None and last.opcode == "brx":
                succs.extend(by_key[k] for k in self.table_keys(last))
            elif last is not None and last.info.terminator:    # ret / exit / trap
                if last.guard is not None and blk.fallthrough is not None:
                    succs.append(blk.fallthrough)
            elif blk.fallthrough is not None:
                succs.append(blk.fallthrough)
            for s in succs:
                if s not in blk.succs:
                    blk.succs.append(s)
        for blk in blocks:
            for s in blk.succs:
                s.preds.append(blk)


def declare(b: Builder, st, scope: Scope, vector_range_regs: set | None = None) -> None:
    """Add a body declaration (.reg, .local, .shared, .param ...) to ``scope``
    (``vector_range_regs`` collects the registers of vector ranges: ptxc
    types them as their element, so the ISA rules do not check them)."""
    _, attrs, decls, line = st
    space, type_, align, vec, linkage, other = b.split_attrs(attrs, line)
    if space == "reg":
        names = []
        for d in decls:
            if d[0] != "range" and vec:          # .reg .v4 .f32 v: components v.x ... v.w
                comps = [Var(f"{d[1].text}.{c}", type_ or "b32") for c in "xyzw"[:vec]]
                scope.vectors[d[1].text] = comps
                scope.singles.update((c.name, c) for c in comps)
                names.append(d[1].text)
            elif d[0] == "range":
                prefix, count = d[1].text, d[2]
                check_range(b, d)
                scope.ranges[prefix] = (count, type_ or "b32", vector_range_regs if vec else None)
                names.append((prefix, count))
            else:
                scope.singles[d[1].text] = Var(d[1].text, type_ or "b32")
                names.append(d[1].text)
        decl = ir.RegDecl(type_ or "b32", names, vec, align)
        scope.regs.append(decl)
        scope.decl_order.append(decl)
        return
    for var in b.variables(st):
        scope.vars.append(var)
        scope.decl_order.append(var)
