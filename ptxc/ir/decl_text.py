"""Declarations as PTX text: variables, parameters, registers, function headers.

The IR printer (ptxc.ir.printer) and the PTX emitter (backends/ptx/emitter.py)
write declarations the same way, as written in the PTX source:
``.shared .align 4 .b8 buf[128];``, ``.reg .b32 %r<5>;``,
``.visible .entry k(.param .u64 k_param_0)`` with its performance directives.
"""
from __future__ import annotations

from ptxc.ir import core as ir


def init_text(init) -> str:
    if isinstance(init, list):
        return "{" + ", ".join(init_text(i) for i in init) + "}"
    if isinstance(init, tuple) and init[0] == "generic":
        sym = init[1]
        return f"generic({sym.name})" + (f"+{sym.offset}" if sym.offset else "")
    if isinstance(init, ir.Sym):
        return f"{init.name}+{init.offset}" if init.offset else init.name
    return init.text


def dims_text(dims) -> str:
    return "".join(f"[{'' if d is None else d}]" for d in dims)


def variable_decl(v: ir.Variable, terminator: str = ";") -> str:
    """A variable declaration as PTX, e.g. '.shared .align 4 .b8 buf[128];'."""
    parts = list(v.linkage) + [f".{v.space}"]
    if ".ptr" in v.attrs:
        parts += [f".{v.type}"] + list(v.attrs) + ([f".align {v.align}"] if v.align else [])
    else:
        parts += list(v.attrs) + ([f".align {v.align}"] if v.align else [])
        parts += [f".v{v.vec}"] if v.vec else []
        parts += [f".{v.type}"]
    text = " ".join(parts) + " " + v.name + dims_text(v.dims)
    if v.init is not None:
        text += " = " + init_text(v.init)
    return text + terminator


def param_decl(p: ir.Variable) -> str:
    return variable_decl(p, terminator="")


def reg_decl(d: ir.RegDecl) -> str:
    names = ", ".join(n if isinstance(n, str) else f"{n[0]}<{n[1]}>" for n in d.names)
    parts = [".reg"] + ([f".align {d.align}"] if d.align else []) + \
        ([f".v{d.vec}"] if d.vec else []) + [f".{d.type}"]
    return " ".join(parts) + " " + names + ";"


def function_header(fn: ir.Function) -> str:
    parts = list(fn.linkage) + [".entry" if fn.is_kernel else ".func"]
    if fn.attrs.get("has_rets"):
        parts.append("(" + ", ".join(param_decl(p) for p in fn.rets) + ")")
    head = " ".join(parts) + " " + fn.name
    head += "(" + ", ".join(param_decl(p) for p in fn.params) + ")"
    for kw, nums in fn.directives:
        if kw == ".pragma":
            head += f"\n.pragma {', '.join(nums)};"
        else:
            head += f"\n{kw}" + (" " + ", ".join(map(str, nums)) if nums else "")
    return head
