"""Where JIT compile time goes, per application of the test suite.

For each .cu of tests/apps (or --sources), ``nvcc -ptx -arch=sm_90 -O3``
makes its PTX; then, in this process with the on-disk cache off, each stage
of what ``ptxc run --mode full`` does before a kernel's first launch is
timed (wall seconds, every kernel of the module, after one untimed warm-up): parse (text -> SSA IR),
passes (the launch slice that decides whether CTAs may run in parallel:
ensure_launch_slice), codegen (plan + LLVM IR text), LLVM parse+verify of
that text, the LLVM IR pipeline (O1/O2/O3; nothing at O0) and machine code
(emit_object at the same level). One LLVM module per kernel, as ``ptxc run``
compiles them. Prints one row per app and level and the shares of the total.

``--inline`` adds, per app and level, a row with PTXC_INLINE_SHAPES=1 (the
inline lane-shape tests and segment checks, before ops/outlined.py), run
right before the default one: before/after, interleaved.

Usage: python bench/compile_stages.py [--levels 0,1,2,3] [--sources a.cu,b.cu] [--inline]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ["PTXC_CACHE"] = "0"

import ptxc  # noqa: E402
from ptxc.backends.llvm import jit  # noqa: E402
from ptxc.backends.llvm.codegen import KernelCodegen  # noqa: E402
from ptxc.backends.llvm.guards import gc_paused  # noqa: E402
from ptxc.backends.llvm.plan import Plan  # noqa: E402
from ptxc.launcher.alias import ensure_launch_slice, guessed_classes  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
STAGES = ("parse", "passes", "codegen", "llvm_parse", "llvm_opt", "llvm_emit")


def ptx_of(cu: Path, out: Path) -> str:
    dst = out / (cu.stem + ".ptx")
    subprocess.run(["nvcc", "-ptx", "-arch=sm_90", "-O3", str(cu), "-o", str(dst)], check=True)
    return dst.read_text()


def stages(text: str, name: str, level: int) -> dict:
    t = {s: 0.0 for s in STAGES}
    b = jit.llvm()
    c0 = time.perf_counter()
    module = ptxc.parse(text, name)
    t["parse"] = time.perf_counter() - c0
    for fn in module.kernels:
        c0 = time.perf_counter()
        ensure_launch_slice(module, fn, guessed_classes(fn))
        c1 = time.perf_counter()
        with gc_paused():
            g = KernelCodegen(Plan(module, fn), "full", name="run_warp")
            g.generate_function()
            ir = g.module_text()
        c2 = time.perf_counter()
        mod = b.parse_assembly(ir)
        mod.verify()
        c3 = time.perf_counter()
        if level > 0:
            jit._optimise(mod, level)
        c4 = time.perf_counter()
        jit.new_target_machine(level).emit_object(mod)
        c5 = time.perf_counter()
        for s, a, z in zip(STAGES[1:], (c0, c1, c2, c3, c4), (c1, c2, c3, c4, c5)):
            t[s] += z - a
    t["kernels"] = len(module.kernels)
    return t


def tag(lv) -> str:
    """A row's level: '0', or '0i' with the inline sequences (--inline)."""
    return f"{lv[0]}{'i' if lv[1] else ''}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--levels", default="0,1,2,3")
    ap.add_argument("--sources", default="")
    ap.add_argument("--inline", action="store_true", help="also PTXC_INLINE_SHAPES=1, interleaved")
    opts = ap.parse_args()
    levels = [int(x) for x in opts.levels.split(",")]
    if opts.inline:                  # (level, inline) rows: "0i" is level 0 inline
        levels = [(lv, inl) for lv in levels for inl in (True, False)]
    else:
        levels = [(lv, False) for lv in levels]
    cus = [Path(s) for s in opts.sources.split(",")] if opts.sources else \
        sorted((ROOT / "tests" / "apps").glob("*/*.cu"))
    jit.runtime()
    head = f"{'app':<14}{'lvl':>4}{'kern':>5}" + "".join(f"{s:>11}" for s in STAGES) + f"{'total':>9}"
    print("wall seconds per stage, all kernels of the module, one LLVM module each, cache off")
    print(head)
    print("-" * len(head))
    sums = {lv: {s: 0.0 for s in STAGES} for lv in levels}
    with tempfile.TemporaryDirectory(prefix="ptxc-stages-") as tmp:
        stages(ptx_of(cus[0], Path(tmp)), "warm-up", 0)      # first-use costs (imports, tables)
        for cu in cus:
            text = ptx_of(cu, Path(tmp))
            for lv in levels:
                os.environ["PTXC_INLINE_SHAPES"] = "1" if lv[1] else "0"
                t = stages(text, cu.name, lv[0])
                for s in STAGES:
                    sums[lv][s] += t[s]
                total = sum(t[s] for s in STAGES)
                print(f"{cu.stem:<14}{tag(lv):>4}{t['kernels']:>5}" + "".join(f"{t[s]:>11.4f}" for s in STAGES)
                      + f"{total:>9.3f}", flush=True)
    print("-" * len(head))
    for lv in levels:
        total = sum(sums[lv].values())
        print(f"{'all':<14}{tag(lv):>4}{'':>5}" + "".join(f"{sums[lv][s]:>11.3f}" for s in STAGES)
              + f"{total:>9.3f}")
        print(f"{'share':<14}{tag(lv):>4}{'':>5}" + "".join(f"{100 * sums[lv][s] / total:>10.1f}%" for s in STAGES))


if __name__ == "__main__":
    main()
