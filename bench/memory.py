"""Cost of the memory counters (docs/metrics.md, "Memory access counters"):
the same launch with and without ``memory_counters``, side by side in one
process, in full and in hybrid mode. Prints ratios (not asserted by tests).

Kernels (bench/kernels/memory.cu): ``mem_loop``, a loop of global loads
(coalesced with stride 1, one sector per lane with stride 32), and
``tile_transpose``, a 32 x 33 shared-memory tiled transpose.

Usage: python bench/memory.py [--threads N] [--repeat R]
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PTX = os.path.join(HERE, "kernels", "memory.ptx")


def best_of(repeat, fn):
    """(profile, fastest wall time) of ``repeat`` calls after a warm-up call (compile)."""
    prof = fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        prof = fn()
        best = min(best, time.perf_counter() - t0)
    return prof, best


def cases():
    n = 1 << 20
    inp = np.random.default_rng(0).random(n).astype(np.float32)
    w = 2048
    mat = np.random.default_rng(1).random(w * w).astype(np.float32)
    return [
        ("mem_loop stride 1", "mem_loop", (n // 256,), (256,),
         lambda: [inp, np.zeros(n, np.float32), n, 64, 1]),
        ("mem_loop stride 32", "mem_loop", (n // 256,), (256,),
         lambda: [inp, np.zeros(n, np.float32), n, 64, 32]),
        ("tile_transpose 2048^2", "tile_transpose", (w // 32, w // 32), (32, 8),
         lambda: [mat, np.zeros(w * w, np.float32), w]),
    ]


def main() -> None:
    import ptxc
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    os.environ.setdefault("PTXC_CACHE", "0")
    print(f"memory counters: with / without, best of {a.repeat} ({a.threads} threads)")
    for label, kernel, grid, block, args in cases():
        times = {}
        for mode in ("full", "hybrid"):
            m = ptxc.load(PTX)
            run = lambda mc: ptxc.launch(m, kernel, grid, block, args(), mode=mode,   # noqa: E731
                                         threads=a.threads, memory_counters=mc)
            off, times[mode, False] = best_of(a.repeat, lambda: run(False))
            on, times[mode, True] = best_of(a.repeat, lambda: run(True))
            assert on.counters()["inst_executed"] == off.counters()["inst_executed"]
            t_off, t_on = times[mode, False], times[mode, True]
            print(f"  {label:22s} {mode:6s} without {t_off:7.3f} s  with {t_on:7.3f} s  "
                  f"ratio {t_on / t_off:5.2f}  (gld_efficiency {on.memory['gld_efficiency']}, "
                  f"shared_efficiency {on.memory['shared_efficiency']})")
        print(f"  {label:22s} hybrid with / full without: "
              f"{times['hybrid', True] / times['full', False]:5.2f}")


if __name__ == "__main__":
    main()
