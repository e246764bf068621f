"""Lowering of the device calls that reach the host (device_calls.py).

``vprintf`` and ``__assertfail`` / ``__assert_fail`` are external functions
of a PTX module. A call to one of them stores each argument (a ``.param``
variable, a register or an immediate) of every lane into a vector of 32
i64 and calls ``ptxc_device_call`` with the executing lanes (guard
included). An unreadable format, argument buffer or string becomes an
out-of-bounds error at the call; otherwise ``vprintf``'s return values are
written to its return parameter, and a failed assertion ends the launch
with ERR_ASSERT (the launcher turns it into the GPU's error).
"""
from __future__ import annotations

from ptxc import ir
from ptxc.ir.types import TYPE_SIZES

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.ops.device_calls import KIND_VPRINTF, KINDS
from ptxc.backends.llvm.ops.call_params import load_static, store_static
from ptxc.backends.llvm.plan import decode_call

DECL = "declare i32 @ptxc_device_call(i32, ptr, ptr, ptr, ptr, i32, ptr, i32, ptr)"


def arg_vector(cg, op) -> str:
    """<32 x i64> of one argument, zero-extended."""
    f = cg.f
    if isinstance(op, ir.Sym):
        placed = cg.plan.resolve(cg.inst, cg.cur, op.name)
        t = "b64" if placed.var.size >= 8 else "b32"
        v = load_static(cg, placed, t)
    else:
        t = "b32" if TYPE_SIZES.get(getattr(op, "type", None) or "b64", 8) == 4 else "b64"
        v = cg.read(op, t)
    return f.cast("zext", "<32 x i32>", v, "<32 x i64>") if t == "b32" else v


def device_call(cg, call_node, name: str) -> None:
    f = cg.f
    call = call_node.call
    saved = cg.cur
    cg.cur = call
    rets, _, args = decode_call(call)
    lanes = cg.emi
    if call.guard is not None:
        lanes = f.cast("bitcast", "<32 x i1>", cg.guard_mask(call), "i32")
    buf = f.alloca(f"[{max(len(args), 1) * 32} x i64]", "dcargs", 64)
    for k, op in enumerate(args):
        f.store("<32 x i64>", arg_vector(cg, op), f.gep(buf, 256 * k), 64)
    out = f.alloca("[32 x i64]", "dcout", 64)
    cg.decls.add(DECL)
    bad = f.call("i32", "ptxc_device_call", [
        ("i32", str(KINDS[name])), ("ptr", "%L"), ("ptr", "%cta"), ("ptr", "%ws"), ("ptr", "%segs"),
        ("i32", lanes), ("ptr", buf), ("i32", str(len(args))), ("ptr", out)])
    outv = f.load("<32 x i64>", out, 64)
    cg.fail_if(bad, Lo.ERR_OOB, outv)
    if KINDS[name] == KIND_VPRINTF:
        ret = f.cast("trunc", "<32 x i64>", outv, "<32 x i32>")
        for r in rets:
            if isinstance(r, ir.Sym):
                store_static(cg, cg.plan.resolve(cg.inst, call, r.name), ret, "b32")
            elif isinstance(r, ir.Value):
                cg.write(r, ret, "b32")
    else:
        cg.fail_if(lanes, Lo.ERR_ASSERT, "zeroinitializer")
    cg.cur = saved
