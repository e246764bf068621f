"""Benchmark: CTA equivalence for nvcc's countdown loops (exit test ``!=``).

For launches of tests/cuda/countdown.cu (a grid-stride loop with a
parameter stride, counted loops with n from %ctaid), runs the default
hybrid launch (fault checks on, CTA equivalence on) and the same launch
with every CTA (``cta_equivalence=False``: what the default did before
passes/cta/countdown.py, when these loops were refused), after a warm-up
launch that compiles; prints CTAs run / launched, the first reduced launch
(it computes the classes), the best of ``--repeat`` later ones and the
ratio every-CTA / reduced. The counters are asserted equal.

    .venv/bin/python bench/countdown.py [--repeat R]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import ptxc
from ptxc.launcher.api import launch

PTX = Path(__file__).resolve().parents[1] / "tests" / "cuda" / "countdown.sm90.ptx"


def cases():
    n = 1 << 21
    ints = np.zeros(n, np.int32)
    b = np.random.default_rng(0).random(16 * 128).astype(np.float32)
    return [
        ("cd_param_stride", 1024, 256, lambda: [ints, ints.copy(), n, 300000]),
        ("cd_param_stride", 4096, 128, lambda: [ints, ints.copy(), n, 1 << 20]),
        ("cd_row", 8192, 64, lambda: [np.zeros(8192 * 16, np.float32), 16]),
        ("cd_sum", 8192, 128, lambda: [np.zeros(8192 * 128, np.float32), b, 16]),
    ]


def best(module, kernel, grid, block, make, repeat, **kw):
    t, prof = float("inf"), None
    for _ in range(repeat):
        prof = launch(module, kernel, grid, block, make(), **kw)
        t = min(t, prof.timings["run"])
    return t, prof


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    m = ptxc.load(str(PTX))
    print(f"{'launch':28s} {'ran':>6s} {'CTAs':>6s} {'1st':>8s} {'reduced':>8s} {'every':>8s} "
          f"{'ratio':>8s}  classes")
    for kernel, grid, block, make in cases():
        launch(m, kernel, grid, block, make(), cta_equivalence=False)          # compile
        first = launch(m, kernel, grid, block, make())
        t_red, red = best(m, kernel, grid, block, make, a.repeat)
        t_all, every = best(m, kernel, grid, block, make, a.repeat, cta_equivalence=False)
        assert red.counters() == every.counters() == first.counters(), kernel
        name = f"{kernel} {grid}x{block}"
        print(f"{name:28s} {red.ctas_run:6d} {red.ctas_launched:6d} {first.timings['run']:8.4f} "
              f"{t_red:8.4f} {t_all:8.4f} {t_all / t_red:7.1f}x  {red.cta_equivalence}",
              flush=True)


if __name__ == "__main__":
    main()
