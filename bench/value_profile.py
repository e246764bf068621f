"""Value profiling's cost: full runs with and without ``value_profile=True``
(docs/value-profile.md), same process, warm JIT, best of N run times.

Kernels of tests/value_profile/valueprof.sm90.ptx: ``vp_loop`` (a loop of
four register writes per iteration: 512 CTAs x 256 threads x 256
iterations) and ``vp_xor`` (straight-line, 1 M threads). Prints each run
time and the ratio profiled / unprofiled; the profiles are checked to
count every write (vp_loop's loop counter: iterations x warps writes).

    python bench/value_profile.py [--repeat 5] [--threads 1]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import ptxc
from ptxc.launcher.value_profile import rows

PTX = Path(__file__).parents[1] / "tests" / "value_profile" / "valueprof.sm90.ptx"


def cases():
    n = 1 << 20
    x = np.random.default_rng(0).integers(0, 2 ** 32, size=n, dtype=np.uint32)
    yield "vp_loop", dict(grid=512, block=256), \
        lambda: [np.arange(256 * 256, dtype=np.uint32), np.zeros(256, np.uint32), 256]
    yield "vp_xor", dict(grid=n // 256, block=256), lambda: [x, np.zeros(n, np.uint32), 5, n]


def best(module, kernel, launch, args, repeat: int, threads: int, vp: bool):
    times, prof = [], None
    for _ in range(repeat + 1):                 # the first run compiles
        prof = ptxc.launch(module, kernel, args=args(), mode="full", value_profile=vp,
                           threads=threads, **launch)
        times.append(prof.timings["run"])
    return min(times[1:]), prof


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    module = ptxc.load(PTX)
    for kernel, launch, args in cases():
        plain, p = best(module, kernel, launch, args, a.repeat, a.threads, False)
        profiled, q = best(module, kernel, launch, args, a.repeat, a.threads, True)
        assert p.counters() == q.counters()
        if kernel == "vp_loop":
            counter = next(r for r in rows(q.value_profile)
                           if r["register"] == "%r17" and r["opcode"] == "add.s32")
            assert counter["writes"] == 256 * 512 * 256 // 32
        print(f"{kernel:8s} {q.inst_executed:>10} warp instructions  unprofiled "
              f"{plain * 1e3:8.2f} ms  profiled {profiled * 1e3:8.2f} ms  ratio {profiled / plain:.2f}")


if __name__ == "__main__":
    main()
