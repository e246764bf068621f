"""Memory patterns of the test suite's applications, fast path off and on.

The matrix multiply (16 x 16 shared tiles), sequential-addressing reduction,
32 x 32 tiled transpose and shared-atomic histogram of tests/apps
(bench/kernels/patterns.cu) launched in full mode through the API, once per
setting of PTXC_FAST_MEM (0: per-lane accesses, the code before the fast
path; global: .global and generic accesses only; 1: the default, every space
but .local and .param), interleaved, best of
--repeat, each setting on a fresh module (compiled kernels are cached per
module; compile time is not counted). Prints thread instructions per second,
the ratio to the collatz ALU reference measured in the same run, and the
run-time ratio of each setting to PTXC_FAST_MEM=0. Outputs are compared
with numpy (a wrong result is printed, never hidden). Nothing is asserted.

``--var NAME`` switches another variable instead (``--var PTXC_INLINE_SHAPES
--settings 1,0``: the inline lane-shape tests and checks against the
out-of-line helpers; with PTXC_OPT=0 in the environment every launch runs
level-0 code).

Usage: python bench/mem_patterns.py [--repeat N] [--threads N] [--settings 0,global,1] [--var NAME]
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PTX = os.path.join(HERE, "kernels", "patterns.ptx")
COLLATZ = os.path.join(HERE, "kernels", "collatz.ptx")


def cases():
    """(name, kernel, grid, block, shared bytes, make args, check(args) -> bool)."""
    rng = np.random.default_rng(0)
    hA, wA, wB = 4096, 96, 128
    A = rng.integers(-5, 6, hA * wA).astype(np.float32)
    B = rng.integers(-4, 5, wA * wB).astype(np.float32)
    n = 1 << 22
    vals = rng.integers(-100, 100, n).astype(np.int32)
    w, h = 2048, 1365
    img = rng.random(w * h).astype(np.float32)
    pix = rng.integers(0, 1 << 30, 1 << 22).astype(np.uint32)
    red_ctas = n // 512
    return [
        ("matrixMul", "matmul", (wB // 16, hA // 16), (16, 16), 0,
         lambda: [np.zeros(hA * wB, np.float32), A, B, wA, wB],
         lambda a: np.array_equal(a[0].reshape(hA, wB), A.reshape(hA, wA) @ B.reshape(wA, wB))),
        ("reduction", "reduce_seq", (red_ctas,), (256,), 1024,
         lambda: [vals, np.zeros(red_ctas, np.int32), n],
         lambda a: np.array_equal(a[1], vals.reshape(red_ctas, 512).sum(1))),
        ("transpose", "transpose_tiled", ((w + 31) // 32, (h + 31) // 32), (32, 8), 0,
         lambda: [img, np.zeros(w * h, np.float32), w, h],
         lambda a: np.array_equal(a[1].reshape(w, h), img.reshape(h, w).T)),
        ("histogram", "histogram", (16,), (256,), 0,
         lambda: [pix, len(pix), np.zeros(1024, np.uint32)],
         lambda a: np.array_equal(a[2], np.bincount(pix % 1024, minlength=1024))),
    ]


def timed(module, kernel, grid, block, shared, args, threads):
    import ptxc
    t0 = time.perf_counter()
    prof = ptxc.launch(module, kernel, grid, block, args, mode="full", shared_bytes=shared,
                       threads=threads)
    return prof, time.perf_counter() - t0


def alu_rate(threads: int) -> float:
    import ptxc
    m = ptxc.load(COLLATZ)
    n = 1 << 20
    args = lambda: [np.zeros(n, np.uint32), n, 1]       # noqa: E731
    timed(m, "collatz", (n // 256,), (256,), 0, args(), threads)
    best = 0.0
    for _ in range(3):
        prof, dt = timed(m, "collatz", (n // 256,), (256,), 0, args(), threads)
        best = max(best, prof.counters()["thread_inst_executed"] / dt)
    return best


def main() -> None:
    import ptxc
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--settings", default="0,global,1")
    ap.add_argument("--var", default="PTXC_FAST_MEM", help="the variable the settings set "
                    "(e.g. PTXC_INLINE_SHAPES with --settings 1,0: the outlined helpers)")
    o = ap.parse_args()
    os.environ["PTXC_CACHE"] = "0"
    settings = o.settings.split(",")
    ref = alu_rate(o.threads)
    print(f"full mode, --threads {o.threads}, best of {o.repeat}; ALU reference (collatz) "
          f"{ref:.3g} thread-instr/s")
    print(f"{'pattern':<11}{o.var[-14:]:>14}{'thr-inst':>11}{'run s':>9}{'inst/s':>10}"
          f"{'of ALU':>8}{'vs 0':>7}  result")
    for name, kernel, grid, block, shared, make, check in cases():
        mods, best, profs, ok = {}, {}, {}, {}
        for s in settings:                       # compile each setting first (untimed)
            os.environ[o.var] = s
            mods[s] = ptxc.load(PTX)
            args = make()
            profs[s], _ = timed(mods[s], kernel, grid, block, shared, args, o.threads)
            ok[s] = check(args)
            best[s] = float("inf")
        for _ in range(o.repeat):
            for s in settings:
                os.environ[o.var] = s
                _, dt = timed(mods[s], kernel, grid, block, shared, make(), o.threads)
                best[s] = min(best[s], dt)
        base = best[settings[0]]
        for s in settings:
            ti = profs[s].counters()["thread_inst_executed"]
            same = profs[s].counters() == profs[settings[0]].counters()
            print(f"{name:<11}{s:>14}{ti:>11.3g}{best[s]:>9.4f}{ti / best[s]:>10.3g}"
                  f"{100 * ti / best[s] / ref:>7.1f}%{base / best[s]:>6.2f}x  "
                  f"{'ok' if ok[s] else 'WRONG'}{'' if same else ' (counters differ!)'}")


if __name__ == "__main__":
    main()
