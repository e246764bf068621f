"""Device-side ``malloc`` and ``free`` (extern .func calls; C++ ``new`` and
``delete`` compile to them): one call per warp into the heap of device_heap.py
with the executing lanes' arguments, lanes in ascending order.

    call.uni (retval0), malloc, (param0);   // .param .b64 size -> .b64 pointer
    call.uni free, (param0);                // .param .b64 pointer

The argument is a ``.param`` variable of the caller (or a register); the
result goes to the return variable (or register). A ``free`` of an address
malloc did not return stops the run at the freeing thread
(layout.ERR_BAD_FREE).
"""
from __future__ import annotations

from ptxc import ir

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.ops.call_params import load_static, store_static
from ptxc.backends.llvm.plan import decode_call

DECLS = ("declare void @ptxc_heap_malloc(ptr, i32, ptr)",
         "declare i32 @ptxc_heap_free(ptr, i32)")
HEAP_CALLS = ("malloc", "free")


def read_arg(cg, op) -> str:
    """<32 x i64> value of a call argument (a .param symbol, a register or
    an immediate)."""
    if isinstance(op, ir.Sym):
        return load_static(cg, cg.plan.resolve(cg.inst, cg.cur, op.name), "b64")
    return cg.read(op, "b64")


def write_ret(cg, op, v: str) -> None:
    if isinstance(op, ir.Sym):
        store_static(cg, cg.plan.resolve(cg.inst, cg.cur, op.name), v, "b64")
    elif isinstance(op, ir.Value):
        cg.write(op, v, "b64")


def builtin_heap(cg, call_node, name: str) -> None:
    """Lower one malloc/free call node (``name`` is the callee)."""
    rets, _, args = decode_call(call_node.call)
    saved = cg.cur
    cg.cur = call_node.call
    cg.decls.update(DECLS)
    cg.uses_heap = True                  # one worker, CTAs in linear order: device_heap.py
    f = cg.f
    vec = f.alloca("<32 x i64>", "heap", 64)
    f.store("<32 x i64>", read_arg(cg, args[0]), vec, 64)
    if name == "malloc":
        out = f.alloca("<32 x i64>", "heapout", 64)
        f.call("void", "ptxc_heap_malloc", [("ptr", vec), ("i32", cg.emi), ("ptr", out)])
        if rets:
            write_ret(cg, rets[0], f.load("<32 x i64>", out, 64))
    else:
        bad = f.call("i32", "ptxc_heap_free", [("ptr", vec), ("i32", cg.emi)])
        cg.fail_if(bad, Lo.ERR_BAD_FREE, f.load("<32 x i64>", vec, 64))
    cg.cur = saved
