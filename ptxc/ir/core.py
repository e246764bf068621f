"""The ptxc IR: Module > Function > Block > Instr, in SSA form with phi nodes.

The values an instruction reads and writes and its other operands are in
values.py (this module imports them, so ``core.Value`` ... still read). An
instruction may define several values (``setp
p|q``, vector loads, ``mov.b64 {lo,hi}``); a guarded instruction reads, for
each value it defines, the value the register held before (``prior``), so a
guarded definition is "new value where the guard holds, old value elsewhere".

Every value remembers the PTX register it came from (``reg``), so the PTX
emitter can leave SSA by naming each value after its register: our passes only
analyse and mark, they never move code, so the SSA form stays conventional
(phi-related values never interfere) and dropping phis is a correct
out-of-SSA translation (Sreedhar et al., "Translating out of SSA", 1999).
"""
from __future__ import annotations

from typing import Iterator

from ptxc.errors import SrcLoc
# the values and operands, read by users of this module as core.Value ...
from ptxc.ir.values import (COMPOSITE, SINK, Addr, Argument, Bracket, Imm, LabelRef, Not,  # noqa: F401
                             Pair, ParenList, RegOffset, Result, Sink, SpecialReg, Sym, Undef,
                             Value, Vec, _COMPOSITE, map_values, values_in)


# ---------------------------------------------------------- instructions

class Instr:
    """One PTX instruction (or a phi, opcode 'phi').

    opcode   base opcode, e.g. 'ld'
    mods     modifiers in written order, e.g. ('global', 'nc', 'f32')
    dsts     destination operands as written: Result, Vec of Results/Sink, Pair, Sink
    srcs     source operands as written (Values, Imm, Sym, Addr, Vec, Not, LabelRef, ParenList)
    guard    predicate Value or None; guard_neg True for ``@!p``
    results  flat list of the Results this instruction defines (incl. implicit ones)
    prior    for a guarded instruction: the old value of each result's register
             (parallel to results); empty when unguarded
    implicit implicit Values read (e.g. the carry flag read by addc)
    info     the OpInfo of ``opcode`` from ptxc.ir.opcodes
    loc      SrcLoc of the instruction in the PTX file
    dbg      the ``.loc`` debug directives in effect (tuple of their texts, in source
             order: the last run of ``.loc`` lines before it) or None
    dbg_new  True when that run stands directly before this instruction in the
             source (re-emitted there even if unchanged), False when inherited
    labels   non-target labels written just before it (kept for emission)
    pragmas  ``.pragma`` strings written just before it
    scope    the Scope (``{ }`` block) the instruction sits in
    block    the Block it belongs to
    phi_blocks  for phis: incoming blocks, parallel to srcs
    """
    __slots__ = ("opcode", "mods", "dsts", "srcs", "guard", "guard_neg", "results",
                 "prior", "implicit", "info", "loc", "dbg", "dbg_new", "labels", "pragmas",
                 "scope", "block", "phi_blocks", "attrs", "__weakref__")

    def __init__(self, opcode: str, mods: tuple = (), dsts: list | None = None,
                 srcs: list | None = None, guard: Value | None = None,
                 guard_neg: bool = False, info=None, loc: SrcLoc | None = None):
        self.opcode = opcode
        self.mods = tuple(mods)
        self.dsts = dsts if dsts is not None else []
        self.srcs = srcs if srcs is not None else []
        self.guard = guard
        self.guard_neg = guard_neg
        self.results: list[Result] = []
        self.prior: list[Value] = []
        self.implicit: list[Value] = []
        self.info = info
        self.loc = loc
        self.dbg = None
        self.dbg_new = False
        self.labels: list[str] = []
        self.pragmas: list[str] = []
        self.scope = None
        self.block: Block | None = None
        self.phi_blocks: list[Block] = []
        self.attrs: dict = {}    # pass annotations, e.g. attrs['slice'] = True

    @property
    def full_opcode(self) -> str:
        return ".".join((self.opcode,) + self.mods)

    @property
    def is_phi(self) -> bool:
        return self.opcode == "phi"

    def operand_values(self) -> Iterator[Value]:
        """Every Value this instruction reads, with repetition, in a fixed order:
        sources, guard, priors, implicit reads."""
        for op in self.srcs:
            yield from values_in(op)
        if self.guard is not None:
            yield self.guard
        yield from self.prior
        yield from self.implicit

    def replace_values(self, fn) -> None:
        """Rewrite every Value read through fn, in place (use lists are NOT updated)."""
        srcs = self.srcs
        for i, op in enumerate(srcs):
            if isinstance(op, Value):
                srcs[i] = fn(op)
            elif op.__class__ in _COMPOSITE:
                srcs[i] = map_values(op, fn)
        if self.guard is not None:
            self.guard = fn(self.guard)
        if self.prior:
            self.prior = [fn(v) for v in self.prior]
        if self.implicit:
            self.implicit = [fn(v) for v in self.implicit]

    def source_line(self):
        """Where this instruction came from in the CUDA source: a
        ``ptxc.ir.source_lines.SourceLine`` (``file``, ``line``, ``col``,
        ``function``, ``inlined_at``), or None (no ``.loc``: build with
        ``-lineinfo`` or ``-G``; line 0; a phi). docs/ir.md."""
        from ptxc.ir.source_lines import source_line
        return source_line(self)

    def __repr__(self) -> str:
        return f"<Instr {self.full_opcode} at {self.loc}>"


# ---------------------------------------------------------------- blocks

class Block:
    """A basic block. ``succs``/``preds`` are explicit, fall-through included.

    ``label`` is the PTX label that starts it, or None for a block that starts
    after a branch or at function entry (its printed name is then ``name``).
    The last instruction is the only one that may be a terminator; a block
    whose last instruction is not an unconditional terminator falls through to
    ``fallthrough`` (the next block in layout order, None at function end).
    """
    __slots__ = ("name", "label", "instrs", "succs", "preds", "function",
                 "fallthrough", "index", "scope", "__weakref__")

    def __init__(self, name: str, label: str | None = None):
        self.name = name
        self.label = label
        self.instrs: list[Instr] = []
        self.succs: list[Block] = []
        self.preds: list[Block] = []
        self.function: Function | None = None
        self.fallthrough: Block | None = None
        self.index = -1          # position in function.blocks
        self.scope = None        # the { } scope its label is declared in

    @property
    def phis(self) -> list[Instr]:
        out = []
        for ins in self.instrs:
            if not ins.is_phi:
                break
            out.append(ins)
        return out

    @property
    def body(self) -> list[Instr]:
        """The non-phi instructions (the PTX instructions of the block)."""
        return [i for i in self.instrs if not i.is_phi]

    @property
    def terminator(self) -> Instr | None:
        if self.instrs and self.instrs[-1].info is not None and self.instrs[-1].info.terminator:
            return self.instrs[-1]
        return None

    def __repr__(self) -> str:
        return f"<Block {self.name}>"


# ------------------------------------------------------ declarations

class RegDecl:
    """A ``.reg`` declaration as written: type, optional vector width,
    and names, each either 'name' or ('prefix', count) for ``%r<count>``."""
    __slots__ = ("type", "vec", "names", "align")

    def __init__(self, type: str, names: list, vec: int = 0, align: int | None = None):
        self.type, self.names, self.vec, self.align = type, names, vec, align


class Variable:
    """A variable in a state space: .global .shared .const .local .param .tex ...

    dims: list of array sizes (None for ``[]``); init: nested list of
    initializer items (Imm, Sym, or ('generic', Sym)) or None; linkage: tuple of
    '.visible' '.extern' '.weak' '.common'; attrs: other words kept verbatim
    (e.g. '.ptr', '.global', '.align 16' for params).
    """
    __slots__ = ("space", "name", "type", "align", "dims", "init", "linkage",
                 "vec", "attrs", "loc")

    def __init__(self, space: str, name: str, type: str, align: int | None = None,
                 dims: list | None = None, init=None, linkage: tuple = (),
                 vec: int = 0, attrs: tuple = (), loc: SrcLoc | None = None):
        self.space, self.name, self.type, self.align = space, name, type, align
        self.dims = dims or []
        self.init, self.linkage, self.vec, self.attrs, self.loc = init, linkage, vec, attrs, loc

    @property
    def size(self) -> int:
        """Size in bytes (0 for an unsized ``[]`` array)."""
        from ptxc.ir.types import type_size
        n = type_size(self.type) * max(self.vec, 1)
        for d in self.dims:
            if d is None:
                return 0
            n *= d
        return n


class Scope:
    """A ``{ }`` body or nested block: its declarations, and its parent."""
    __slots__ = ("parent", "regs", "vars", "decl_order", "depth")

    def __init__(self, parent: "Scope | None" = None):
        self.parent = parent
        self.regs: list[RegDecl] = []
        self.vars: list[Variable] = []
        self.decl_order: list = []   # RegDecl / Variable / ('pragma', text) in written order
        self.depth = 0 if parent is None else parent.depth + 1


class Function:
    """A .entry (kernel) or .func: signature, directives and SSA body."""
    __slots__ = ("name", "is_kernel", "linkage", "params", "rets", "directives",
                 "scope", "blocks", "special", "undefs", "loc", "is_decl",
                 "module", "attrs", "__weakref__")

    def __init__(self, name: str, is_kernel: bool):
        self.name = name
        self.is_kernel = is_kernel
        self.linkage: tuple = ()
        self.params: list[Variable] = []
        self.rets: list[Variable] = []
        self.directives: list[tuple] = []   # ('.reqntid', (256,1,1)), ('.noreturn',), ('.pragma', '"x"')
        self.scope: Scope | None = None     # body scope (None for a declaration)
        self.blocks: list[Block] = []
        self.special: dict[str, SpecialReg] = {}
        self.undefs: dict[str, Undef] = {}
        self.loc: SrcLoc | None = None
        self.is_decl = False                # prototype only (no body)
        self.module: Module | None = None
        self.attrs: dict = {}

    @property
    def entry(self) -> Block | None:
        return self.blocks[0] if self.blocks else None

    def _dim_directive(self, name: str):
        for d in self.directives:
            if d[0] == name:
                return d[1]
        return None

    @property
    def reqntid(self):
        """(x, y, z) from .reqntid, or None."""
        return self._dim_directive(".reqntid")

    @property
    def maxntid(self):
        return self._dim_directive(".maxntid")

    def instructions(self) -> Iterator[Instr]:
        """Every instruction of the IR, phis included, in layout order."""
        for b in self.blocks:
            yield from b.instrs

    def ptx_instructions(self) -> Iterator[Instr]:
        """The PTX instructions (phis left out, which are not PTX), in text
        order: what the reports count (``static_inst``) and number
        (``per_memory_instr``'s 1-based ``index``). docs/ir.md."""
        for b in self.blocks:
            for ins in b.instrs:
                if not ins.is_phi:
                    yield ins

    def __repr__(self) -> str:
        return f"<Function {self.name}>"


class Module:
    """A PTX module: header directives, module-scope variables, functions."""
    __slots__ = ("filename", "version", "target", "address_size", "files",
                 "globals", "functions", "items", "warnings", "source", "attrs")

    def __init__(self, filename: str = "<string>"):
        self.filename = filename
        self.version: str = ""
        self.target: list[str] = []         # e.g. ['sm_90', 'debug']
        self.address_size: int | None = None
        self.files: list[tuple] = []        # .file directives: (index, text-after-index)
        self.globals: list[Variable] = []
        self.functions: list[Function] = []
        self.items: list = []               # Variables / Functions / ('callprototype'|'branchtargets'...)
                                            # in written order, for emission
        self.warnings: list[str] = []
        self.source: str = ""
        self.attrs: dict = {}

    @property
    def kernels(self) -> list[Function]:
        return [f for f in self.functions if f.is_kernel and not f.is_decl]

    def function(self, name: str) -> Function | None:
        for f in self.functions:
            if f.name == name and not f.is_decl:
                return f
        for f in self.functions:
            if f.name == name:
                return f
        return None

    def to_ptx(self) -> str:
        from ptxc.backends.ptx.emitter import emit_module
        return emit_module(self)

    def print_ir(self) -> str:
        from ptxc.ir.printer import print_module
        return print_module(self)

    def __str__(self) -> str:
        return self.print_ir()


def rebuild_uses(fn: Function) -> None:
    """Recompute every value's use list of ``fn`` from its instructions."""
    seen = set()
    for ins in fn.instructions():
        for v in ins.results:
            v.uses = []
        for v in ins.operand_values():
            if id(v) not in seen:
                seen.add(id(v))
                v.uses = []
    collect_uses(fn)


def collect_uses(fn: Function) -> None:
    """Append every read to its value's use list (use lists start empty)."""
    for ins in fn.instructions():                 # ins.operand_values(), unrolled
        for op in ins.srcs:
            if isinstance(op, Value):
                op.uses.append(ins)
            elif op.__class__ in _COMPOSITE:
                for v in values_in(op):
                    v.uses.append(ins)
        if ins.guard is not None:
            ins.guard.uses.append(ins)
        for v in ins.prior:
            v.uses.append(ins)
        for v in ins.implicit:
            v.uses.append(ins)
