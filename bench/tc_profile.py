"""Where the JIT compile time of tensor-core and texture kernels goes.

For each kernel of tests/cuda/tc_kernels.sm90.ptx (or --kernels): the CPU
seconds (``time.process_time``: a loaded machine disturbs them less than
wall time) of ptxc's code generation (plan + LLVM IR text), LLVM's parse and
verify, and level-0 machine code (``emit_object``, instruction selection and
register allocation: what ``ptxc run`` pays for a kernel of more than 4,000
instructions, which never tiers up); the LLVM IR lines per PTX instruction
class (wmma.mma, wmma.load, wmma.store, mma, ldmatrix, tex, other: read from
the code generator's map of IR lines to instructions), the IR lines of the
out-of-line helpers (compiled apart since helper_lib.py, not counted in the
module's lines), and the native stack frame of ``run_warp`` read from the
emitted assembly (the prologue's ``sub ..., %rsp``). Nothing is asserted.

Usage: python bench/tc_profile.py [--kernels a,b] [--ptx FILE]
"""
from __future__ import annotations

import argparse
import os
import re
import time
from bisect import bisect_right
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
PTX = os.path.join(HERE, "..", "tests", "cuda", "tc_kernels.sm90.ptx")
CLASSES = ("wmma.mma", "wmma.load", "wmma.store", "mma", "ldmatrix", "tex")


def op_class(ins) -> str:
    name = ins.opcode
    if name == "wmma":
        return next((f"wmma.{m}" for m in ("mma", "load", "store") if m in ins.mods), "wmma")
    return name if name in CLASSES else "other"


def ir_lines_per_class(g) -> tuple[Counter, Counter]:
    """(IR lines, instructions) per class, from g.instr_at / g.instr_of."""
    lines, count = Counter(), Counter()
    at, n = g.instr_at, len(g.f.lines)
    for k, ins in enumerate(g.instr_of):
        end = at[k + 1] if k + 1 < len(at) else n
        c = op_class(ins)
        lines[c] += end - at[k]
        count[c] += 1
    return lines, count


FRAME = re.compile(r"sub[q]?\s+\$(\d+),\s*%rsp|movabsq\s+\$(\d+),\s*%rax")


def frame_bytes(asm: str, fn: str) -> int:
    """The stack frame of ``fn`` from its prologue in the assembly text."""
    start = asm.index(f"{fn}:")
    for line in asm[start:start + 4000].splitlines()[:40]:
        m = FRAME.search(line)
        if m:
            return int(m.group(1) or m.group(2))
    return 0


def profile(module, kernel) -> dict:
    from ptxc.backends.llvm import jit
    from ptxc.backends.llvm.codegen import KernelCodegen, module_text_of
    from ptxc.backends.llvm.guards import gc_paused
    from ptxc.backends.llvm.plan import Plan
    b = jit.llvm()
    t0 = time.process_time()
    with gc_paused():
        g = KernelCodegen(Plan(module, kernel), "full", name="run_warp")
        g.generate_function()
        text = module_text_of([g.function_text()], [g])
    t1 = time.process_time()
    mod = b.parse_assembly(text)
    mod.verify()
    t2 = time.process_time()
    tm = jit.new_target_machine(0)
    tm.emit_object(mod)
    t3 = time.process_time()
    asm = tm.emit_assembly(b.parse_assembly(text))
    lines, count = ir_lines_per_class(g)
    helper_lines = sum(h.count("\n") for h in g.helpers.values())
    return {"codegen": t1 - t0, "parse": t2 - t1, "emit": t3 - t2, "ir": text.count("\n"),
            "lines": lines, "count": count, "helpers": helper_lines,
            "frame": frame_bytes(asm, "run_warp"), "ptx": sum(count.values())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ptx", default=PTX)
    ap.add_argument("--kernels", default="wmma_f16_k4,wmma_f16_k8,wmma_f16_k16,wmma_bf16_k16,"
                    "wmma_s8_k16,wmma_tf32_k16,wmma_f64_k16,mma_ldmatrix_k32,tex_shift,flow_derivatives")
    a = ap.parse_args()
    import ptxc
    m = ptxc.load(a.ptx)
    print(f"{'kernel':18} {'ptx':>5} {'IR lines':>9} {'codegen s':>9} {'parse s':>8} {'emit s':>8} "
          f"{'frame KiB':>10}  IR lines per instruction (count)")
    for name in a.kernels.split(","):
        r = profile(m, m.function(name))
        per = "  ".join(f"{c} {r['lines'][c] / r['count'][c]:.0f} ({r['count'][c]})"
                        for c in (*CLASSES, "other") if r["count"][c])
        print(f"{name:18} {r['ptx']:5d} {r['ir']:9d} {r['codegen']:9.2f} {r['parse']:8.2f} "
              f"{r['emit']:8.2f} {r['frame'] / 1024:10.1f}  {per}  helpers {r['helpers']}", flush=True)


if __name__ == "__main__":
    main()
