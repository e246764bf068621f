"""CTAs on one worker thread against two, and this tree against an older
commit, in the same run.

The kernels of tests/cuda/parallel_ctas.cu (nvcc -O3, sm_90) at bench
sizes: a tiled matrix multiply, a tiled transpose, a shared-memory
histogram, a reduction with data-dependent loops, a global-atomics
histogram (integer adds that commute: CTAs in parallel since
backends/llvm/atomic_order.py; one worker before) and a float atomic sum
(always one worker). Each is launched in full mode through ``ptxc.launch``
with ``threads=1`` and ``threads=2``, interleaved, best of --repeat; the time
is the launch's run time (Profile.timings["run"]: the CTAs, not the
compile). Outputs are checked against numpy (a mismatch is marked ``!``).

The same worker runs on the tree of ``--old`` (default 5d0f45a, checked out
with ``git worktree add`` under /tmp) by pointing this venv's editable
install at that tree in a child process; new and old children alternate.
Printed: run seconds, serial / parallel (> 1: two threads are faster) and
old / new for each thread count, and the compile seconds of each tree
(PTXC_CACHE=0: every child compiles).

Sizes grow with --scale K (default 4): matrices of 128K x 128K and
512K x 512K, 2**18 K**2 histogram bytes, 512 K**2 reduction CTAs.

Usage: python bench/parallel_ctas.py [--repeat N] [--old COMMIT] [--scale K]
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from trees import old_tree, run_worker, use_tree   # bench/trees.py (python bench/X.py puts bench/ on sys.path)

ROOT = Path(__file__).resolve().parent.parent
PTX = ROOT / "tests" / "cuda" / "parallel_ctas.sm90.ptx"


# ------------------------------------------------------------ the worker
def cases(scale: int):
    import numpy as np
    rng = np.random.default_rng(0)
    n = 128 * scale
    a = rng.integers(0, 4, (n, n)).astype(np.float32)
    b = rng.integers(0, 4, (n, n)).astype(np.float32)
    yield "matmul_tiled", (n // 16, n // 16, 1), (16, 16, 1), \
        lambda: [a, b, np.zeros((n, n), np.float32), n], 2, a @ b
    r, c = 512 * scale, 512 * scale
    x = rng.standard_normal((r, c)).astype(np.float32)
    yield "transpose_tiled", (c // 32, r // 32, 1), (32, 8, 1), \
        lambda: [x, np.zeros((c, r), np.float32), r, c], 1, x.T
    m, grid, block = (1 << 18) * scale * scale, 64, 256
    data = rng.integers(0, 256, m).astype(np.uint8)
    want = np.zeros((grid, 64), np.uint32)
    np.add.at(want, ((np.arange(m) // block) % grid, data & 63), 1)
    yield "histogram_shared", (grid, 1, 1), (block, 1, 1), \
        lambda: [data, np.zeros((grid, 64), np.uint32), m], 1, want
    g = 512 * scale * scale
    src = rng.integers(0, 1 << 20, g * 128).astype(np.int32)
    terms = sum((src >> k) * ((src & 7) > k) for k in range(8)).astype(np.int64)
    yield "reduce_varying", (g, 1, 1), (128, 1, 1), \
        lambda: [src, np.zeros(g, np.int32)], 1, terms.reshape(g, 128).sum(axis=1).astype(np.int32)
    yield "histogram_global", (256, 1, 1), (256, 1, 1), \
        lambda: [data, np.zeros(256, np.uint32), m], 1, np.bincount(data, minlength=256).astype(np.uint32)
    f = rng.standard_normal(1 << 16).astype(np.float32)
    yield "float_sum", (256, 1, 1), (256, 1, 1), lambda: [f, np.zeros(1, np.float32)], 1, None


def worker(root: str, repeat: int, scale: int) -> None:
    """Run every case in this process on the tree ``root``; print JSON."""
    use_tree(root)
    import time

    import numpy as np
    import ptxc
    assert ptxc.__file__.startswith(root), ptxc.__file__
    module = ptxc.load(str(PTX))
    out = {}
    for name, grid, block, make, k_out, want in cases(scale):
        best = {}
        t0 = time.perf_counter()
        ptxc.launch(module, name, grid, block, make(), mode="full", threads=1)   # compile
        compile_s = time.perf_counter() - t0
        ok = True
        for _ in range(repeat):
            for threads in (1, 2):
                args = make()
                prof = ptxc.launch(module, name, grid, block, args, mode="full", threads=threads)
                if want is not None and not np.array_equal(args[k_out], want):
                    ok = False
                run = prof.timings["run"]
                best[threads] = min(best.get(threads, run), run)
        out[name] = {"t1": best[1], "t2": best[2], "ok": ok, "compile": compile_s,
                     "inst": prof.thread_inst_executed}
    print(json.dumps(out))


# ------------------------------------------------------------ the driver
def child(root: Path, repeat: int, scale: int) -> dict:
    return run_worker(__file__, root, ["--repeat", repeat, "--scale", scale],
                      {"PTXC_CACHE": "0", "PTXC_PROGRESS": "0"})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--scale", type=int, default=4)
    ap.add_argument("--old", default="5d0f45a")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.worker:
        return worker(opts.worker, opts.repeat, opts.scale)
    old = old_tree(opts.old)
    runs = {"new": [], "old": []}
    for _ in range(2):                          # alternate the trees, keep each one's best
        runs["new"].append(child(ROOT, opts.repeat, opts.scale))
        runs["old"].append(child(old, opts.repeat, opts.scale))
    best = {}
    for tree, rs in runs.items():
        best[tree] = {k: {f: (min(r[k][f] for r in rs) if f in ("t1", "t2", "compile") else rs[0][k][f])
                          for f in rs[0][k]} for k in rs[0]}
    print(f"full-mode launches, run seconds (best of {2 * opts.repeat}), {os.cpu_count()} cores; "
          f"new = this tree, old = {opts.old}")
    head = (f"{'kernel':<18}{'thr inst':>11}{'new 1 thr':>11}{'new 2 thr':>11}{'1/2 new':>9}"
            f"{'old 1 thr':>11}{'old 2 thr':>11}{'1/2 old':>9}{'old/new 2':>11}{'compile n/o':>14}")
    print(head)
    print("-" * len(head))
    for k, n in best["new"].items():
        o = best["old"][k]
        mark = "" if n["ok"] and o["ok"] else "  ! output differs from numpy"
        print(f"{k:<18}{n['inst']:>11.2e}{n['t1']:>11.4f}{n['t2']:>11.4f}{n['t1'] / n['t2']:>9.2f}"
              f"{o['t1']:>11.4f}{o['t2']:>11.4f}{o['t1'] / o['t2']:>9.2f}{o['t2'] / n['t2']:>11.2f}"
              f"{n['compile']:>7.2f}/{o['compile']:<6.2f}{mark}")


if __name__ == "__main__":
    main()
