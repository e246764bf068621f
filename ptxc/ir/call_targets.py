"""What an indirect call may enter: the module's address-taken functions,
their addresses, and the ``.callprototype`` an indirect call names.

PTX ISA 9.0, "call": ``call (ret), %fptr, (args), proto;`` calls through a
function pointer; ``proto`` labels a ``.callprototype`` declaring the
parameters and return values, and "the prototype must match the callee's
signature". A function's address comes from ``mov.u64 %rd, fname`` (and
``cvta``), or from a ``.global``/``.const`` initialiser (C++ vtables,
tables of function pointers). So an indirect call may enter any
*address-taken* function whose signature matches the prototype: the call
graph the executor (backends/llvm/plan.py), the slice and CTA equivalence
use (as LLVM's call graph gives an indirect call site an edge to every
address-taken function of a compatible type).

Function addresses: ptxc numbers every function of the module (in module
order, declarations included) and gives function k the address
``FUNC_BASE(shift) + 16 (k + 1)`` in the null segment (generic addresses
``segment << shift | offset``, backends/llvm/layout.py): below one segment,
so a function pointer used as data is a null access, and any other value
is known not to be a function.
"""
from __future__ import annotations

from ptxc.ir import values as V

FUNC_STRIDE = 16


def func_base(shift: int) -> int:
    """The address of the module's function 0 minus FUNC_STRIDE."""
    return 1 << (shift - 1)


def function_numbers(module) -> dict:
    """{function name: k}, in module order (the first of a name)."""
    out: dict = {}
    for f in module.functions:
        out.setdefault(f.name, len(out))
    return out


def function_address(module, name: str, shift: int) -> int | None:
    k = function_numbers(module).get(name)
    return None if k is None else func_base(shift) + FUNC_STRIDE * (k + 1)


def _init_names(init):
    if isinstance(init, list):
        for x in init:
            yield from _init_names(x)
    elif isinstance(init, tuple) and len(init) == 2:
        yield from _init_names(init[1])
    elif isinstance(init, V.Sym):
        yield init.name


def address_taken(module) -> list:
    """The defined functions whose address the module takes (module doc)."""
    funcs = {f.name: f for f in module.functions
             if not f.is_decl and f.blocks and not f.is_kernel}   # a kernel is launched, never called
    taken = set()
    for fn in module.functions:
        for ins in fn.instructions() if fn.blocks else ():
            if ins.opcode in ("mov", "cvta"):
                taken.update(op.name for op in ins.srcs if isinstance(op, V.Sym) and op.name in funcs)
    for v in module.globals:
        taken.update(n for n in _init_names(v.init) if n in funcs)
    return [f for f in funcs.values() if f.name in taken]


def prototype(ins) -> tuple | None:
    """(rets, params) of the ``.callprototype`` an indirect call names (as
    Variables), or None when it names none."""
    label = next((op.name for op in reversed(ins.srcs) if isinstance(op, V.Sym)), None)
    scope = ins.scope
    while label is not None and scope is not None:
        for d in scope.decl_order:
            if isinstance(d, tuple) and d[0] == "proto" and d[1] == label:
                return d[2] or [], d[3] or []
        scope = scope.parent
    return None


def _shape(v) -> tuple:
    return (v.space, v.size)


def matches(fn, proto) -> bool:
    """Does ``fn``'s signature match the prototype (same parameters and
    return values: state space and size each)?"""
    if proto is None:
        return True
    rets, params = proto
    return ([_shape(p) for p in fn.params] == [_shape(p) for p in params]
            and [_shape(r) for r in fn.rets] == [_shape(r) for r in rets])


def signature_text(rets, params) -> str:
    """``(.param .b32) (.param .b64, .param .b32)``."""
    def one(v):
        return f".{v.space} .{v.type}" + (f"[{v.size}]" if v.type == "b8" and v.size > 1 else "")
    r = "(" + ", ".join(one(v) for v in rets) + ") " if rets else ""
    return r + "(" + ", ".join(one(v) for v in params) + ")"


def candidates(module, ins) -> list:
    """The address-taken functions the indirect call ``ins`` may enter."""
    proto = prototype(ins)
    return [f for f in address_taken(module) if matches(f, proto)]


__all__ = ["func_base", "function_numbers", "function_address", "address_taken", "prototype",
           "matches", "signature_text", "candidates"]
