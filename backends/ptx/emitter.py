"""PTX emitter: ir.Module -> PTX text that ptxas accepts and that parses back
to the same IR.

Leaving SSA: every value is written as the register it came from and phis are
dropped. This is correct because ptxc's passes analyse and mark but never move
or copy code, so the SSA form stays conventional (no two values of one
register are live at once; Sreedhar et al. 1999). Declarations are emitted as
written (their text comes from ptxc/ir/decl_text.py, shared with the IR
printer), ``{ }`` scopes are re-opened around the instructions that sit in
them, and every ``.loc`` line is kept (backends/ptx/loc_writer.py). DWARF ``.section``
blocks are copied verbatim (ptxas needs them for ``.target ..., debug``).
"""
from __future__ import annotations

from ptxc import ir
from ptxc.ir.decl_text import function_header, param_decl, reg_decl, variable_decl
from ptxc.ir.printer import instr_text

from .loc_writer import LocWriter

INDENT = "\t"


def reg_name(v: ir.Value) -> str:
    return v.reg or v.name



# ------------------------------------------------------------ declarations

def scope_decl(item) -> str:
    if isinstance(item, ir.RegDecl):
        return reg_decl(item)
    if isinstance(item, ir.Variable):
        return variable_decl(item)
    if item[0] == "btargets":
        return f"{item[1]}: .branchtargets {', '.join(item[2])};"
    _, label, rets, params = item          # .callprototype
    ret = "(" + ", ".join(param_decl(p) for p in rets) + ") " if rets is not None else ""
    return f"{label}: .callprototype {ret}_ (" + ", ".join(param_decl(p) for p in params) + ");"


# ------------------------------------------------------------------ bodies

def scope_path(scope, root) -> list:
    """The scopes from the function's root scope down to ``scope``."""
    path = []
    while scope is not None and scope is not root:
        path.append(scope)
        scope = scope.parent
    path.append(root)
    return path[::-1]


class BodyWriter:
    """Writes instructions in layout order, opening and closing { } scopes."""

    def __init__(self, root, locs: LocWriter):
        self.lines: list[str] = []
        self.open = [root]
        self.locs = locs

    def decls(self, scope) -> None:
        pad = INDENT * (len(self.open))
        self.lines += [pad + scope_decl(d) for d in scope.decl_order]

    def enter(self, scope) -> None:
        path = scope_path(scope, self.open[0])
        while self.open[-1] not in path:
            self.open.pop()
            self.lines.append(INDENT * len(self.open) + "}")
        for s in path[len(self.open):]:
            self.lines.append(INDENT * len(self.open) + "{")
            self.open.append(s)
            self.decls(s)

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")

    def instr(self, ins: ir.Instr) -> None:
        self.enter(ins.scope)
        for l in ins.labels[ins.attrs.get("labels_before_block", 0):]:
            self.label(l)
        pad = INDENT * len(self.open)
        for p in ins.pragmas:
            self.lines.append(f"{pad}.pragma {p};")
        self.lines += [pad + text for text in self.locs.before(ins)]
        self.lines.append(pad + instr_text(ins, reg_name, whole_vectors=True))

    def close(self) -> None:
        while len(self.open) > 1:
            self.open.pop()
            self.lines.append(INDENT * len(self.open) + "}")


def labels_before_block(blk: ir.Block) -> list[str]:
    """Non-target labels written before the block's own label, kept in that order:
    ptxas can place a label written before a branch target's label at a different
    address (before the code it adds at the target), which shows in -G DWARF ranges."""
    first = next((i for i in blk.instrs if not i.is_phi), None)
    return first.labels[:first.attrs.get("labels_before_block", 0)] if first else []


def function_text(fn: ir.Function, keep=None) -> str:
    """A function as PTX. ``keep(instr)`` (optional) drops instructions it rejects."""
    head = function_header(fn)
    if fn.is_decl:
        return head + ";\n"
    w = BodyWriter(fn.scope, LocWriter(fn))
    w.decls(fn.scope)
    for blk in fn.blocks:
        if blk.label is not None:
            w.enter(blk.scope or fn.scope)    # a label is visible only in its { } scope
            for l in labels_before_block(blk):
                w.label(l)
            w.label(blk.label)
        for ins in blk.instrs:
            if ins.is_phi or (keep is not None and not keep(ins)):
                continue
            w.instr(ins)
    w.close()
    w.lines += [f"{l}:" for l in fn.attrs.get("trailing_labels", [])]
    w.lines += [INDENT + text for text in w.locs.run(fn.attrs.get("trailing_dbg", ()))]
    return head + "\n{\n" + "\n".join(w.lines) + "\n}\n"


def emit_module(m: ir.Module, keep=None) -> str:
    out = [f".version {m.version}", ".target " + ", ".join(m.target)]
    if m.address_size is not None:
        out.append(f".address_size {m.address_size}")
    out.append("")
    for item in m.items:
        if isinstance(item, ir.Variable):
            out.append(variable_decl(item))
        elif isinstance(item, ir.Function):
            out.append(function_text(item, keep))
        elif item[0] == "section":
            out.append(item[1])
        elif item[0] == "reg":
            out.append(reg_decl(item[1]))
        elif item[0] == "file":
            out.append(item[1])
        elif item[0] == "pragma":
            out.append(f".pragma {', '.join(item[1])};")
    return "\n".join(out) + "\n"
