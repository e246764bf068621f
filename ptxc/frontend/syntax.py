"""Lark transformer: grammar rules -> small tuples, built during the LALR parse.

No parse tree is ever built (the transformer is given to the Lark constructor).
The tuples are consumed by ptxc.frontend.builder, which resolves names, forms basic
blocks and builds the SSA IR.
"""
from __future__ import annotations

import re

from lark import Token, Transformer, v_args

from ptxc import ir
from ptxc.errors import PtxcSyntax
from ptxc.frontend.ptx_numbers import parse_int, parse_number, shown

_ADDR_RE = re.compile(r"\[\s*([%$A-Za-z_][\w$.]*|-?[0-9][\w]*)?\s*((?:\+\s*-?|-)\s*[0-9][\w]*)?\s*\]$")


def _int(tok, line: int | None = None, col: int | None = None) -> int:
    return parse_int(tok, line, col)


class Name:
    """A name operand before resolution (register, symbol or label), with position."""
    __slots__ = ("text", "line", "col")

    def __init__(self, tok):
        self.text, self.line, self.col = str(tok), tok.line, tok.column

    @classmethod
    def at(cls, text: str, line: int, col: int) -> "Name":
        n = cls.__new__(cls)
        n.text, n.line, n.col = text, line, col
        return n


_REGDECL_PARTS = re.compile(r"\.reg[ \t]+(\.[a-z0-9]+)[ \t]+")
_REGDECL_NAME = re.compile(r"([%$A-Za-z_][\w$]*)(?:<(\d+)>)?")
_INSTR_PARTS = re.compile(r"(?:@(!?)([^ \t]+)[ \t]+)?([^ \t;]+)[ \t]*")
_OPERAND_SPLIT = re.compile(r"[ \t]*(\{[^}]*\}|[^,;]+?)[ \t]*[,;]")
_VECTOR_SPLIT = re.compile(r"[ \t]*([^,}]+?)[ \t]*[,}]")


def guard_of(tok):
    """A GUARD token ``@p`` / ``@!p`` -> (Name, negated)."""
    neg = tok[1] == "!"
    return (Name.at(str(tok)[2 if neg else 1:], tok.line, tok.column + (2 if neg else 1)), neg)


def address(text: str, line: int, col: int):
    """``[base]``, ``[base+off]``, ``[base+-off]``, ``[base-off]`` or ``[imm]``."""
    m = _ADDR_RE.match(text)
    if m is None:
        raise PtxcSyntax(f"malformed address {text}", line, col)
    base, off = m.group(1), m.group(2)
    offset = _int(off.replace(" ", "").replace("\t", "").replace("+", ""), line,
                  col + m.start(2)) if off else 0
    if base is None:
        return ("mem", (None, offset))
    if base[0].isdigit() or base[0] == "-":
        return ("mem", (None, _int(base, line, col + m.start(1))))
    return ("mem", (Name.at(base, line, col + 1), offset))


def simple_operand(text: str, line: int, col: int):
    c = text[0]
    if c == "[":
        return address(text, line, col)
    if c == "{":              # a vector of names and numbers (rule op_vec)
        return ("vec", [simple_operand(e.group(1), line, col + e.start(1))
                        for e in _VECTOR_SPLIT.finditer(text, 1)])
    if c == "!":
        return ("not", Name.at(text[1:], line, col + 1))
    if c.isdigit() or c == "-":
        return parse_number(text, line, col)
    return Name.at(text, line, col)


def operand_token(tok):
    kind = tok.type
    if kind == "NAME":
        return Name(tok)
    if kind == "NUMBER":
        return parse_number(tok)
    return address(str(tok), tok.line, tok.column)


def operands(items) -> list:
    return [operand_token(o) if o.__class__ is Token else o for o in items]


def instr_tuple(text: str, line: int, col: int) -> tuple:
    """A whole simple instruction (INSTR) -> the same tuple as rule ``instr``."""
    m = _INSTR_PARTS.match(text)
    guard = None
    if m.group(2) is not None:
        neg = m.group(1) == "!"
        guard = (Name.at(m.group(2), line, col + 1 + neg), neg)
    ops = []
    append, new = ops.append, Name.__new__
    for o in _OPERAND_SPLIT.finditer(text, m.end()):
        t = o.group(1)
        if t[0] == "%":           # a register: the common case, as simple_operand makes it
            n = new(Name)
            n.text, n.line, n.col = t, line, col + o.start(1)
            append(n)
        else:
            append(simple_operand(t, line, col + o.start(1)))
    return ("instr", guard, m.group(3), line, col + m.start(3), ops)


def regdecl_tuple(text: str, line: int, col: int) -> tuple:
    """A simple ``.reg .type a, b<N>;`` (REGDECL) -> the same tuple as rule ``decl``."""
    m = _REGDECL_PARTS.match(text)
    decls = []
    for d in _REGDECL_NAME.finditer(text, m.end()):
        name = Name.at(d.group(1), line, col + d.start(1))
        decls.append(("range", name, _int(d.group(2), line, col + d.start(2))) if d.group(2)
                     else ("var", name, None, None))
    return ("decl", [(".reg", None, line, col), (m.group(1), None, line, col + m.start(1))],
            decls, line)


_PARAM_PARTS = re.compile(r"(\.[a-z][a-z0-9_]*)(?:[ \t]+([0-9]+))?|([%$A-Za-z_][\w$]*)|\[([0-9]*)\]")


def param_tuple(text: str, line: int, col: int) -> tuple:
    """A simple parameter (one part of a PARAMS token) -> the same tuple as rule ``param``."""
    attrs, name, dims = [], None, []
    for m in _PARAM_PARTS.finditer(text):
        word, num, ident, dim = m.groups()
        if word == ".param":
            attrs.append((".param", None, 0, 0))
        elif word is not None:
            attrs.append((word, None if num is None else _int(num, line, col + m.start(2)),
                          line, col + m.start()))
        elif ident is not None:
            name = Name.at(ident, line, col + m.start())
        else:
            dims.append(_int(dim, line, col + m.start(4)) if dim else None)
    return (attrs, name, dims or None)


@v_args(inline=True)
class ToTuples(Transformer):
    # ----------------------------------------------------------- module level
    def start(self, *items):
        return [i for i in items if i is not None]

    def version(self, num):
        if not re.fullmatch(r"[0-9]+\.[0-9]+", str(num)):     # PTX ISA 11.1.1: major.minor
            raise PtxcSyntax(f".version takes major.minor, got {shown(str(num))}", num.line, num.column)
        return ("version", str(num), num.line)

    def target(self, *names):
        return ("target", [str(n) for n in names], names[0].line)

    def address_size(self, num):
        size = _int(num)
        if size not in (32, 64):                            # PTX ISA 11.1.3
            raise PtxcSyntax(f".address_size is 32 or 64, got {shown(str(num))}", num.line, num.column)
        return ("address_size", size, num.line)

    def file_dir(self, tok):
        return ("file", str(tok), tok.line)

    def toplevel_pragma(self, *strings):
        return ("pragma", [str(s) for s in strings], strings[0].line)

    def LOC(self, tok):
        return ("loc", str(tok), tok.line)

    def SECTION(self, tok):
        return ("section", str(tok), tok.line)

    # ----------------------------------------------------------- declarations
    def attr(self, tok):
        return (str(tok), None, tok.line, tok.column)

    def attr_num(self, tok, num):
        return (str(tok), _int(num), tok.line, tok.column)

    def attr_paren(self, tok, *words):
        return (f"{tok}({','.join(str(w) for w in words)})", None, tok.line, tok.column)

    def attr_reg(self):
        return (".reg", None, 0, 0)

    def attr_param(self):
        return (".param", None, 0, 0)

    def declarator(self, name, *rest):
        dims, init = None, None
        for r in rest:
            if isinstance(r, tuple) and r and r[0] == "dims":
                dims = r[1]
            else:
                init = r
        return ("var", Name(name), dims, init)

    def reg_range(self, name, num):
        return ("range", Name(name), _int(num))

    def dims(self, *ds):
        return ("dims", list(ds))

    def dim(self, num=None):
        return None if num is None else _int(num)

    def dim_token(self, tok):
        inner = str(tok)[1:-1].strip()
        return _int(inner, tok.line, tok.column + 1) if inner else None

    def initializer(self, init):
        return ("init", init)

    def init_list(self, *items):
        return list(items)

    def init_num(self, num):
        return parse_number(num)

    def init_token(self, tok):
        """An INITLIST token (ptxc.frontend.lexer): its list of ir.Imm, as ``init_list`` gives."""
        return tok.value

    def init_sym(self, name):
        return ir.Sym(str(name))

    def init_symoff(self, name, num):
        return ir.Sym(str(name), _int(num))

    def init_generic(self, fn, name):
        return ("generic", ir.Sym(str(name)))

    def init_generic_off(self, fn, name, num):
        return ("generic", ir.Sym(str(name), _int(num)))

    def regdecl_token(self, tok):
        """A REGDECL token (``.reg .type a, b<N>;``) -> the same tuple as ``decl``."""
        return regdecl_tuple(str(tok), tok.line, tok.column)

    def decl(self, *items):
        attrs = [i for i in items if i[0] not in ("var", "range")]
        decls = [i for i in items if i[0] in ("var", "range")]
        line = next((a[2] for a in attrs if a[2]), decls[0][1].line)
        return ("decl", attrs, decls, line)

    # -------------------------------------------------------------- functions
    def function(self, *items):
        attrs, kind, rets, name, params, perfs, body = [], None, None, None, [], [], None
        for it in items:
            if isinstance(it, tuple) and it[0] == "rets":
                rets = it[1]
            elif isinstance(it, tuple) and it[0] == "params":
                params = it[1]
            elif isinstance(it, tuple) and it[0] == "perf":
                perfs.append(it[1:])
            elif isinstance(it, tuple) and it[0] == "body":
                body = it
            elif isinstance(it, tuple):
                attrs.append(it)
            elif it.type in ("ENTRY", "FUNC"):
                kind = it
            else:
                name = it
        return ("function", attrs, str(kind), rets, Name(name), params, perfs, body)

    def ret_params(self, plist=None):
        return ("rets", plist or [])

    def params(self, plist=None):
        return ("params", plist or [])

    def param_list(self, *ps):
        return list(ps)

    def params_token(self, tok):
        """A PARAMS token (ptxc.frontend.lexer) -> the same list as ``param_list``."""
        return [param_tuple(text, line, col) for text, line, col in tok.value]

    def param(self, *items):
        dims = items[-1][1] if isinstance(items[-1], tuple) and items[-1][0] == "dims" else None
        name = items[-2] if dims is not None else items[-1]
        attrs = [i for i in items if isinstance(i, tuple) and i[0] != "dims"]
        return (attrs, Name(name), dims)

    def perf(self, kw, *nums):
        return ("perf", str(kw), tuple(_int(n) for n in nums))

    def perf_pragma(self, *strings):
        return ("perf", ".pragma", tuple(str(s) for s in strings))

    def body(self, *stmts):
        out = []
        for s in stmts:
            if s is None:
                continue
            if s[0] == "stmts":
                out.extend(s[1])
            else:
                out.append(s)
        return ("body", out)

    def label(self, name):
        return ("label", Name(name))

    def pragma(self, *strings):
        return ("pragma", [str(s) for s in strings], strings[0].line)

    def proto(self, *items):
        rets = next((i[1] for i in items if isinstance(i, tuple) and i[0] == "rets"), None)
        params = next((i[1] for i in items if isinstance(i, tuple) and i[0] == "params"), [])
        name = next(i for i in items if not isinstance(i, tuple))
        return ("proto", rets, Name(name), params)

    def btargets(self, *names):
        return ("btargets", [Name(n) for n in names])

    # ----------------------------------------------------------- instructions
    def instr(self, *items):
        guard = None
        if items[0].__class__ is Token and items[0].type == "GUARD":
            guard, items = guard_of(items[0]), items[1:]
        op = items[0]
        return ("instr", guard, str(op), op.line, op.column, operands(items[1:]))

    def instr_token(self, tok):
        """An INSTR token (a whole simple instruction) -> the same tuple as ``instr``."""
        return instr_tuple(str(tok), tok.line, tok.column)

    def stmts(self, tok):
        """A run of simple statements (ptxc.frontend.lexer) -> ("stmts", their tuples)."""
        out = []
        for kind, text, line, col in tok.value:
            if kind == "INSTR":
                out.append(instr_tuple(text, line, col))
            elif kind == "REGDECL":
                out.append(regdecl_tuple(text, line, col))
            elif kind == "LABEL":
                out.append(("label", Name.at(text, line, col)))
            else:
                out.append(("loc", text, line))
        return ("stmts", out)

    def op_not(self, name):
        return ("not", Name(name))

    def op_symoff(self, name, num):
        return ("symoff", Name(name), _int(num))

    def op_pair(self, a, b):
        return ("pair", Name(a), Name(b))

    def op_mem(self, addr):
        return ("mem", addr)

    def op_vec(self, *items):
        return ("vec", operands(items))

    def op_paren(self, *items):
        return ("paren", operands(items))

    def addr_name(self, name):
        return (Name(name), 0)

    def addr_off(self, name, num):
        return (Name(name), _int(num))

    def addr_imm(self, num):
        return (None, _int(num))

    def addr_list(self, *ops):
        return ("list", operands(ops))
