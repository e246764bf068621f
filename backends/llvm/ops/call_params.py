"""Parameters of inlined ``.func`` calls: the arguments copied into the
callee's parameters at the call, the return values copied back after it
(masked by the executing lanes; simt.py calls :func:`copy_params`).

A ``.reg`` parameter is a register of the callee instance (a vector one
component by component); a ``.param`` parameter is a placed variable, copied
byte by byte from a symbol argument or stored from a register or
immediate. :func:`load_static` / :func:`store_static` also serve the
builtin calls (builtin.py, heap_calls.py).
"""
from __future__ import annotations

from ptxc import ir
from ptxc.errors import PtxcError

from ptxc.backends.llvm.ops.access import K64, static_address
from ptxc.backends.llvm.ops.resolve import elem_ptrs, gather, resolve, scatter
from ptxc.backends.llvm.plan import decode_call
from ptxc.backends.llvm.values import bits_of, lty


def reg_param_pairs(cg, callee, actual, formal) -> list:
    """(actual operand, callee register Var) pairs of a .reg parameter; a vector
    parameter (.reg .v2 .u32 p) pairs component by component."""
    if formal.vec:
        scope = callee.fn.scope
        comps = scope.find_vector(formal.name) if scope is not None else None
        if comps is None or not isinstance(actual, ir.Vec) or len(actual.items) != len(comps):
            raise PtxcError(f"vector .reg parameter '{formal.name}' bound to {type(actual).__name__}")
        return list(zip(actual.items, comps))
    var = cg.plan.formal_var(callee.fn, formal.name)
    if var is None:
        raise PtxcError(f".reg parameter '{formal.name}' has no register in {callee.fn.name}")
    return [(actual, var)]


def copy_reg(cg, caller, callee, actual, var, t: str, into_callee: bool) -> None:
    if isinstance(actual, ir.Sym):
        raise PtxcError(f"symbol '{actual.name}' passed for .reg parameter")
    if into_callee:
        cg.inst = caller
        v = cg.read(actual, t)
        cg.inst = callee
        cg.write_var(var, v, t)
    else:
        cg.inst = callee
        v = cg.read_var(var, t)
        cg.inst = caller
        cg.write(actual, v, t)


def copy_params(cg, call_node, into_callee: bool) -> None:
    """Copy call arguments into the callee's parameters, or its return
    values back to the caller (masked by the executing lanes)."""
    call, callee = call_node.call, call_node.callee
    rets, _, args = decode_call(call)
    caller = call_node.inst
    pairs = zip(args, callee.fn.params) if into_callee else zip(rets, callee.fn.rets)
    saved = cg.inst, cg.cur
    cg.cur = call
    for actual, formal in pairs:
        copy_one(cg, caller, callee, actual, formal, into_callee)
    cg.inst, cg.cur = saved


def copy_one(cg, caller, callee, actual, formal, into_callee: bool) -> None:
    size = formal.size
    if formal.space == "reg":            # register parameters: copy the value(s)
        for item, var in reg_param_pairs(cg, callee, actual, formal):
            copy_reg(cg, caller, callee, item, var, formal.type, into_callee)
        return
    fplace = cg.plan._place(callee, formal)
    if isinstance(actual, ir.Sym):
        cg.inst = caller
        aplace = cg.plan.resolve(caller, cg.cur, actual.name)
        src, dst = (aplace, fplace) if into_callee else (fplace, aplace)
        copy_bytes(cg, src, dst, size)
        return
    t = formal.type if formal.type in ("f32", "f64") else "b%d" % (bits_of(formal.type) if formal.type != "pred" else 32)
    if into_callee:                      # a register or immediate argument
        cg.inst = caller
        v = cg.read(actual, t)
        store_static(cg, fplace, v, t)
    else:
        v = load_static(cg, fplace, t)
        cg.inst = caller
        cg.write(actual, v, t)


def _static_ptrs(cg, placed, nbytes):
    addr = K64(static_address(cg, placed, 0))
    return resolve(cg, "local", addr, None, nbytes, 1)


def copy_bytes(cg, src, dst, size: int) -> None:
    sp = _static_ptrs(cg, src, size)
    dp = _static_ptrs(cg, dst, size)
    off = 0
    for chunk, lt in ((8, "i64"), (4, "i32"), (2, "i16"), (1, "i8")):
        while size - off >= chunk:
            v = gather(cg, lt, elem_ptrs(cg, sp, off), 1, cg.em)
            scatter(cg, lt, v, elem_ptrs(cg, dp, off), 1, cg.em)
            off += chunk


def store_static(cg, placed, v, t) -> None:
    scatter(cg, lty(t), v, _static_ptrs(cg, placed, bits_of(t) // 8), 1, cg.em)


def load_static(cg, placed, t):
    return gather(cg, lty(t), _static_ptrs(cg, placed, bits_of(t) // 8), 1, cg.em)
