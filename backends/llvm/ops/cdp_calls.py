"""Lowering of the device runtime calls of dynamic parallelism
(device_launch.py does the work at run time).

``nvcc -rdc=true`` compiles ``child<<<grid, block, shared, stream>>>(args)``
in a kernel to two extern calls of libcudadevrt (CUDA 12+ names; older
toolkits drop the ``__cudaCDP2`` prefix)::

    call.uni (retval0), __cudaCDP2GetParameterBufferV2, (func, grid, block, shared);
    ... st [buffer + k], arg_k ...
    call.uni (retval0), __cudaCDP2LaunchDeviceV2, (buffer, stream);

``grid`` and ``block`` are ``.param .align 4 .b8 [12]`` (a ``dim3``); the
other arguments are scalars. Device-side ``cudaStreamCreateWithFlags``,
``cudaStreamDestroy``, ``cudaGetLastError`` and ``cudaPeekAtLastError`` are
extern calls too. Each call stores its arguments, flattened to 32-lane i64
vectors (a dim3 gives three), and calls ``ptxc_cdp_call`` once per warp with
the executing lanes (guard included), as ops/builtin.py does for printf; the
results go to the call's return parameter. Like malloc, the call is one
instruction of the kernel: the device runtime's own code is not counted.
"""
from __future__ import annotations

from ptxc import ir

from ptxc.backends.llvm import layout as Lo
from ptxc.backends.llvm.ops.builtin import arg_vector
from ptxc.backends.llvm.ops.call_params import _static_ptrs, store_static
from ptxc.backends.llvm.ops.device_launch import KINDS, RESULT_BITS
from ptxc.backends.llvm.ops.resolve import elem_ptrs, gather
from ptxc.backends.llvm.plan import decode_call

DECL = "declare i32 @ptxc_cdp_call(i32, ptr, ptr, ptr, ptr, i32, ptr, i32, ptr)"


def flat_args(cg, args) -> list:
    """<32 x i64> vectors of the arguments; a 12-byte .param (dim3) gives
    its three u32 components."""
    f, out = cg.f, []
    for op in args:
        if isinstance(op, ir.Sym):
            placed = cg.plan.resolve(cg.inst, cg.cur, op.name)
            if placed.var.size == 12:
                ptrs = _static_ptrs(cg, placed, 12)
                for off in (0, 4, 8):
                    v = gather(cg, "i32", elem_ptrs(cg, ptrs, off), 1, cg.em)
                    out.append(f.cast("zext", "<32 x i32>", v, "<32 x i64>"))
                continue
        out.append(arg_vector(cg, op))
    return out


def cdp_call(cg, call_node, name: str) -> None:
    """Lower one device-runtime call node (``name`` is the callee)."""
    f = cg.f
    call = call_node.call
    saved = cg.cur
    cg.cur = call
    rets, _, args = decode_call(call)
    cg.launches_grids = True
    lanes = cg.emi
    if call.guard is not None:
        lanes = f.cast("bitcast", "<32 x i1>", cg.guard_mask(call), "i32")
    vals = flat_args(cg, args)
    buf = f.alloca(f"[{max(len(vals), 1) * 32} x i64]", "cdpargs", 64)
    for k, v in enumerate(vals):
        f.store("<32 x i64>", v, f.gep(buf, 256 * k), 64)
    out = f.alloca("[32 x i64]", "cdpout", 64)
    cg.decls.add(DECL)
    bad = f.call("i32", "ptxc_cdp_call", [
        ("i32", str(KINDS[name])), ("ptr", "%L"), ("ptr", "%cta"), ("ptr", "%ws"), ("ptr", "%segs"),
        ("i32", lanes), ("ptr", buf), ("i32", str(len(vals))), ("ptr", out)])
    outv = f.load("<32 x i64>", out, 64)
    cg.fail_if(bad, Lo.ERR_OOB, outv)
    bits = RESULT_BITS[KINDS[name]]
    ret = outv if bits == 64 else f.cast("trunc", "<32 x i64>", outv, "<32 x i32>")
    t = f"b{bits}"
    for r in rets:
        if isinstance(r, ir.Sym):
            store_static(cg, cg.plan.resolve(cg.inst, call, r.name), ret, t)
        elif isinstance(r, ir.Value):
            cg.write(r, ret, t)
    cg.cur = saved
