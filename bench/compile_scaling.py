"""Compile time against kernel size: N straight-line adds, N doubling.

Generates a kernel of N dependent adds (``--shape``: ``s32`` = ``add.s32``,
``f16x2`` = ``add.f16x2``, whose code is four times longer) for each N, and
times, in CPU seconds in this process: the parse (text -> SSA IR), the code
generator (plan + LLVM IR text) and LLVM (parse, verify, object code at the
level a one-CTA launch gets, 0). Prints the times per size and the ratio of
each to the previous size: 2.0 is linear, 4.0 quadratic.

``--before`` undoes the two fixes of issue 27 for comparison: one LLVM block
for the whole straight run (lowering_guard.BLOCK_LINES) and the GC on while
code is generated (guards.gc_paused).

    .venv/bin/python bench/compile_scaling.py [--shape s32|f16x2] [--sizes 2000,4000,8000,16000] [--before]
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import os
import time

os.environ.setdefault("PTXC_CACHE", "0")

import ptxc  # noqa: E402
from ptxc.backends.llvm import jit, lowering_guard  # noqa: E402
from ptxc.backends.llvm.guards import gc_paused  # noqa: E402
from ptxc.backends.llvm.codegen import KernelCodegen  # noqa: E402
from ptxc.backends.llvm.plan import Plan  # noqa: E402

SHAPES = {"s32": ("b32", "add.s32 %v1, %v1, %v2;"),
          "f16x2": ("b32", "add.f16x2 %v1, %v1, %v2;")}


def kernel(shape: str, n: int) -> str:
    """A kernel of ``n`` dependent adds of ``shape`` between a load and a store."""
    t, add = SHAPES[shape]
    head = [".version 8.0", ".target sm_90", ".address_size 64",
            ".visible .entry k(.param .u64 p)", "{", f"\t.reg .{t} %v<3>;", "\t.reg .b64 %rd<2>;",
            "\tld.param.u64 %rd1, [p];", "\tld.global.u32 %v1, [%rd1];",
            "\tld.global.u32 %v2, [%rd1+4];"]
    return "\n".join(head + ["\t" + add] * n + ["\tst.global.u32 [%rd1], %v1;", "\tret;", "}", ""])


def measure(shape: str, n: int, before: bool) -> dict:
    """CPU seconds of each stage for ``n`` adds."""
    import llvmlite.binding as b
    jit.llvm()
    text = kernel(shape, n)
    clock = time.process_time
    t0 = clock()
    module = ptxc.parse(text, f"adds{n}.ptx")
    t1 = clock()
    paused = contextlib.nullcontext() if before else gc_paused()
    with paused:
        g = KernelCodegen(Plan(module, module.function("k")), "full", name="run_warp")
        g.generate_function()
        ir = g.module_text()
    t2 = clock()
    mod = b.parse_assembly(ir)
    mod.verify()
    jit.new_target_machine(0).emit_object(mod)
    t3 = clock()
    gc.collect()
    return {"parse": t1 - t0, "codegen": t2 - t1, "llvm": t3 - t2, "total": t3 - t0,
            "ir_lines": ir.count("\n")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", choices=sorted(SHAPES), default="f16x2")
    ap.add_argument("--sizes", default="2000,4000,8000,16000")
    ap.add_argument("--before", action="store_true", help="one block, GC on (the old behaviour)")
    args = ap.parse_args()
    if args.before:
        lowering_guard.BLOCK_LINES = 1 << 60
    sizes = [int(x) for x in args.sizes.split(",")]
    stages = ("parse", "codegen", "llvm", "total")
    print(f"shape {args.shape}{' (before: one block, GC on)' if args.before else ''}; "
          "CPU seconds, and the ratio to the previous size (2.0 = linear)")
    print(f"{'adds':>7} {'IR lines':>9} " + " ".join(f"{s:>14}" for s in stages))
    prev = None
    for n in sizes:
        m = measure(args.shape, n, args.before)
        cells = []
        for s in stages:
            ratio = f"({m[s] / prev[s]:.2f})" if prev and prev[s] > 0 else ""
            cells.append(f"{m[s]:7.2f}{ratio:>7}")
        print(f"{n:>7} {m['ir_lines']:>9} " + " ".join(cells), flush=True)
        prev = m


if __name__ == "__main__":
    main()
