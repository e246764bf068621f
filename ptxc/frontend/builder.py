"""Build the IR from the parser's tuples: directives, declarations, functions.

Names are resolved lexically (``{ }`` scopes shadow outer registers); every
register reference becomes a :class:`ptxc.frontend.scopes.Var` (one per
declaration), which ptxc.frontend.ssa then replaces by SSA values. Each
function body is built by ptxc.frontend.function_builder: basic blocks are
split at labels that are branch targets and after terminators; fall-through
edges are explicit.
"""
from __future__ import annotations

from ptxc import ir
from ptxc.errors import PtxcError, SrcLoc, nth_line
from ptxc.frontend import debug_directives as dbg
from ptxc.frontend.decl_rules import SizeTotals, check_size, check_variable
from ptxc.frontend.function_builder import FunctionBuilder, declare
from ptxc.frontend.scopes import Scope

SPACES = (".reg", ".global", ".shared", ".const", ".local", ".param", ".tex",
          ".sreg", ".surfref", ".texref", ".samplerref")
LINKAGE = (".visible", ".extern", ".weak", ".common")


DIM_DIRECTIVES = (".reqntid", ".maxntid", ".reqnctapercluster")


def dims3(nums: tuple) -> tuple:
    """``.reqntid 256`` -> (256, 1, 1): missing dimensions are 1."""
    return (tuple(nums) + (1, 1))[:3]


class Builder:
    """Turns the parser's tuples for one file into an ir.Module."""

    def __init__(self, filename: str, text: str):
        self.filename = filename
        self.text = text
        self.module = ir.Module(filename)
        self.module.source = text
        self.module_scope = Scope(None)     # module-level .reg (PTX 1.x) live here
        self.vector_range_regs: set = set()  # registers of vector ranges (`.reg .v2 .b16 x<4>`)
        self.sizes = SizeTotals()           # bytes of .const and .global so far (decl_rules)
        self.local_total = 0                # bytes of .local in the function being built
        self.file_lines: dict = {}          # .file index -> its line

    # ------------------------------------------------------------ errors
    def error(self, msg: str, line: int, col: int = 1) -> PtxcError:
        return PtxcError(msg, SrcLoc(self.filename, line, col), nth_line(self.text, line))

    def loc(self, line: int, col: int = 1) -> SrcLoc:
        return SrcLoc(self.filename, line, col)

    def check_directive(self, check, text: str, line: int) -> None:
        """Raise the located error of a debugging directive that ``check``
        (ptxc.frontend.debug_directives) finds malformed."""
        found = check(text)
        if found is None:
            return
        message, dline, col = found
        if dline == 0:                      # the directive's column on its first line
            src = nth_line(self.text, line) or ""
            col += max(src.find(text.split("\n", 1)[0]), 0)
        raise self.error(message, line + dline, col)

    def file_directive(self, text: str, line: int) -> None:
        """A ``.file`` line: well formed, and its index not used before."""
        self.check_directive(dbg.check_file, text, line)
        index = dbg.file_index(text)
        if index in self.file_lines:
            raise self.error(f"duplicate .file index {index} (first on line "
                             f"{self.file_lines[index]}; PTX ISA 11.5: .file)", line,
                             max((nth_line(self.text, line) or "").find(".file"), 0) + 1)
        self.file_lines[index] = line

    # ------------------------------------------------------------ module
    def build(self, items: list) -> ir.Module:
        m = self.module
        for item in items:
            kind = item[0]
            if kind == "version":
                m.version = item[1]
            elif kind == "target":
                m.target = item[1]
            elif kind == "address_size":
                m.address_size = item[1]
            elif kind == "file":
                self.file_directive(item[1], item[2])
                m.files.append(item[1])
                m.items.append(("file", item[1]))
            elif kind == "pragma":
                m.items.append(("pragma", item[1]))
            elif kind == "loc":
                self.check_directive(dbg.check_loc, item[1], item[2])
                continue
            elif kind == "section":             # DWARF data: kept verbatim, not interpreted
                self.check_directive(dbg.check_section, item[1], item[2])
                m.items.append(("section", item[1]))
            elif kind == "decl" and self.split_attrs(item[1], item[3])[0] == "reg":
                declare(self, item, self.module_scope, self.vector_range_regs)
                m.items.append(("reg", self.module_scope.regs[-1]))
            elif kind == "decl":
                for var in self.variables(item):
                    m.globals.append(var)
                    m.items.append(var)
            elif kind == "function":
                fn = self.function(item)
                m.functions.append(fn)
                m.items.append(fn)
        if not m.version:
            raise self.error("missing .version directive: not a PTX module", 1)
        if not m.target:
            raise self.error("missing .target directive (ptxas requires one after .version)", 1)
        return m

    # ------------------------------------------------------- declarations
    def split_attrs(self, attrs: list, line: int):
        """Dotted attributes -> (space, type, align, vec, linkage, other words)."""
        from ptxc.ir.types import TYPE_SIZES
        space = type_ = align = None
        vec, linkage, other = 0, [], []
        for word, num, *_ in attrs:
            bare = word[1:]
            if word in SPACES:
                if space is not None:           # '.param .ptr .global' style attribute
                    other.append(word)
                else:
                    space = word[1:]
            elif word in LINKAGE:
                linkage.append(word)
            elif word == ".align":
                align = num
            elif word in (".v2", ".v4", ".v8"):
                vec = int(word[2:])
            elif bare in TYPE_SIZES:
                type_ = bare
            else:
                other.append(word if num is None else f"{word} {num}")
        return space, type_, align, vec, tuple(linkage), tuple(other)

    def variables(self, item) -> list[ir.Variable]:
        _, attrs, decls, line = item
        space, type_, align, vec, linkage, other = self.split_attrs(attrs, line)
        if space is None:
            col = next((a[3] for a in attrs if a[2] == line and a[3]), 1)
            raise self.error("declaration without a state space (.reg, .global, .shared ...)", line, col)
        out = []
        for d in decls:
            if d[0] == "range":
                raise self.error("register range outside a function body", d[1].line, d[1].col)
            _, name, dims, init = d
            var = ir.Variable(space, name.text, type_ or "b8", align, dims,
                              init[1] if init else None, linkage, vec, other,
                              self.loc(name.line, name.col))
            check_variable(self, var)
            if space == "local":
                self.local_total += var.size
                check_size(self, var, self.local_total)
            else:
                self.sizes.add(self, var)
            out.append(var)
        return out

    # ---------------------------------------------------------- functions
    def function(self, item) -> ir.Function:
        _, attrs, kind, rets, name, params, perfs, body = item
        fn = ir.Function(name.text, kind == ".entry")
        fn.module = self.module
        fn.loc = self.loc(name.line, name.col)
        fn.linkage = tuple(a[0] for a in attrs)
        fn.params = [self.param(p) for p in params]
        fn.rets = [self.param(p) for p in rets] if rets is not None else []
        fn.attrs["has_rets"] = rets is not None
        fn.directives = [(kw, dims3(nums) if kw in DIM_DIRECTIVES else nums) for kw, nums in perfs]
        self.local_total = 0
        if body is None:
            fn.is_decl = True
            return fn
        FunctionBuilder(self, fn).build(body)
        return fn

    def param(self, p) -> ir.Variable:
        attrs, name, dims = p
        space, type_, align, vec, linkage, other = self.split_attrs(attrs, name.line)
        return ir.Variable(space or "param", name.text, type_ or "b8", align, dims, None,
                           linkage, vec, other, self.loc(name.line, name.col))


__all__ = ["Builder"]
