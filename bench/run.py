"""Executor benchmarks: prints the three speed figures of the executor's
issue, measured side by side on this machine (not asserted by tests).

1. full mode, a compute loop at 2^20 threads: thread-instructions per second
   (target >= 1e9 on a 2-core machine);
2. hybrid vs full on the same launch of a kernel whose branch slice is small
   (target: hybrid >= 3x faster where slice_fraction <= 20%);
3. the XLA module of the corpus, every kernel launched in hybrid mode with its
   .reqntid block and grid 1, in a fresh process: parse + slice + compile +
   run (target < 2 s).

Usage: python bench/run.py [--threads N] [--skip-xla] [--warm]
(cold by default: the on-disk object cache is off, every compile counts)
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
LOOP_PTX = os.path.join(HERE, "kernels", "loop.ptx")
XLA_PTX = "/work/shared/corpus/xla/module_0000.ptx"


def timed_launch(m, kernel, grid, block, args, mode, threads):
    import ptxc
    t0 = time.perf_counter()
    prof = ptxc.launch(m, kernel, grid, block, args, mode=mode, threads=threads)
    return prof, time.perf_counter() - t0


def bench_full_loop(threads: int) -> None:
    import ptxc
    m = ptxc.load(LOOP_PTX)
    n, iters = 1 << 20, 256
    out = np.zeros(n, np.float32)
    prof, first = timed_launch(m, "loop_fma", n // 256, 256, [out, n, iters], "full", threads)
    prof, again = timed_launch(m, "loop_fma", n // 256, 256, [out, n, iters], "full", threads)
    run = prof.timings["run"]
    print(f"1. full mode, loop_fma, 2^20 threads x {iters} iterations ({threads} threads)")
    print(f"   thread instructions  {prof.thread_inst_executed:.3e}")
    print(f"   first launch {first:.2f} s (compile {first - again:.2f} s), "
          f"cached launch {again:.2f} s, run {run:.2f} s")
    print(f"   => {prof.thread_inst_executed / run:.3e} thread-instructions/s (run), "
          f"{prof.thread_inst_executed / first:.3e} including compile   [target >= 1e9]")


def bench_hybrid_vs_full(threads: int) -> None:
    import ptxc
    m = ptxc.load(LOOP_PTX)
    n = 1 << 20
    args = lambda: [np.zeros(n, np.float32), n]   # noqa: E731
    timed_launch(m, "loop_divergent", n // 256, 256, args(), "hybrid", threads)   # compile
    timed_launch(m, "loop_divergent", n // 256, 256, args(), "full", threads)
    hyb, th = timed_launch(m, "loop_divergent", n // 256, 256, args(), "hybrid", threads)
    full, tf = timed_launch(m, "loop_divergent", n // 256, 256, args(), "full", threads)
    assert hyb.counters() == full.counters()
    print(f"2. hybrid vs full, loop_divergent, {n} threads, per-thread trip counts 0..127")
    print(f"   slice fraction {hyb.slice_fraction:.3f}, thread instructions {full.thread_inst_executed:.3e}")
    print(f"   full {tf:.3f} s, hybrid {th:.3f} s  => hybrid {tf / th:.2f}x faster   "
          f"[target >= 3x]  (counters identical)")


XLA_SCRIPT = r"""
import time, sys
t0 = time.perf_counter()
import numpy as np
import ptxc
from ptxc.launcher.launcher import is_pointer_param
m = ptxc.load(sys.argv[1])
t1 = time.perf_counter()
n = bad = 0
buf = np.zeros(1 << 22, np.float32)          # 16 MiB of zeros, shared by every buffer argument
for k in m.kernels:
    args = {p.name: buf for p in k.params if is_pointer_param(p)}
    try:
        ptxc.launch(m, k, 1, None, args, mode="hybrid")
        n += 1
    except ptxc.PtxcError as e:
        bad += 1
        print("  failed:", str(e).splitlines()[0][:160])
t2 = time.perf_counter()
print(f"{n} {bad} {t1 - t0:.3f} {t2 - t1:.3f} {t2 - t0:.3f}")
"""


def bench_xla() -> None:
    if not os.path.exists(XLA_PTX):
        print("3. XLA module not found, skipped")
        return
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", XLA_SCRIPT, XLA_PTX], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    lines = r.stdout.strip().splitlines()
    if r.returncode != 0 or not lines:
        print("3. XLA benchmark failed:", r.stderr[-500:])
        return
    for line in lines[:-1]:
        print(line)
    n, bad, parse, rest, total = lines[-1].split()
    print(f"3. XLA module, {n} kernels launched in hybrid mode (.reqntid block, grid 1), {bad} failed")
    print(f"   import + parse {float(parse):.2f} s, slice + compile + run {float(rest):.2f} s, "
          f"total {float(total):.2f} s in-process, {wall:.2f} s process wall time   [target < 2 s]")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--skip-xla", action="store_true")
    ap.add_argument("--warm", action="store_true",
                    help="use the on-disk object cache (default: cold, PTXC_CACHE=0)")
    a = ap.parse_args()
    if not a.warm:
        os.environ["PTXC_CACHE"] = "0"
    bench_full_loop(a.threads)
    bench_hybrid_vs_full(a.threads)
    if not a.skip_xla:
        bench_xla()


if __name__ == "__main__":
    main()
