"""Benchmark: the cost of fault checks in hybrid runs (docs/slice.md).

For the launches of bench/cta_equivalence.py (tests/cuda/cta_equiv.cu at
large grids, bench/kernels/loop.ptx, the README example, every XLA kernel
with the grid its linear-index bound implies) runs the same hybrid launch
with fault checks (the default: ``faults=checked``) and without
(``check_faults=False``: the branch slice alone, what a hybrid run was
before checks), after a warm-up launch of each that compiles, and prints
the CTAs each ran and the run-time ratios checked / unchecked (both
measured in this run, same process; the counters are asserted equal):
of the first launch after compiling (``1st``: it computes the launch's CTA
classes, fault checks included) and the best of ``--repeat`` later launches
(which reuse the remembered classes), ``Profile.timings['run']``. A launch
that fails in either mode is left out of the XLA sum ("failed").

    .venv/bin/python bench/faults.py [--repeat R] [--threads N] [--skip-xla]
"""
from __future__ import annotations

import sys
from pathlib import Path

import ptxc
from ptxc.launcher.api import launch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cta_equivalence import arguments, run_cases  # noqa: E402


def best(module, kernel, grid, block, make_args, repeat, threads, checks: bool):
    """(seconds of the first launch after compiling: the CTA classes are
    computed there; best of ``repeat`` later launches; the last Profile)."""
    ptxc.launch(module, kernel, grid, block, make_args(), threads=threads, check_faults=checks,
                cta_equivalence=False)                                         # compile
    first = launch(module, kernel, grid, block, make_args(), threads=threads,
                   check_faults=checks).timings["run"]
    t, prof = float("inf"), None
    for _ in range(repeat):
        prof = launch(module, kernel, grid, block, make_args(), threads=threads,
                      check_faults=checks)
        t = min(t, prof.timings["run"])
    return first, t, prof


def compare(module, kernel, grid, block, make_args, repeat, threads):
    """(first unchecked s, first checked s, unchecked s, checked s, CTAs run
    unchecked, checked, launched, note)."""
    f0, t0, off = best(module, kernel, grid, block, make_args, repeat, threads, False)
    f1, t1, on = best(module, kernel, grid, block, make_args, repeat, threads, True)
    assert off.counters() == on.counters(), kernel
    return f0, f1, t0, t1, off.ctas_run, on.ctas_run, on.ctas_launched, on.cta_equivalence or ""


def row(name, f0, f1, t0, t1, r0, r1, n, note):
    print(f"{name:24.24s} {f0:8.4f} {f1:8.4f} {f1 / f0:7.2f}x {t0:8.4f} {t1:8.4f} {t1 / t0:7.2f}x "
          f"{r0:6d} {r1:6d} {n:6d}  {note[:44]}", flush=True)


def main() -> None:
    a = arguments()
    print(f"{'launch':24s} {'1st off':>8s} {'1st on':>8s} {'ratio':>8s} {'off':>8s} {'on':>8s} "
          f"{'ratio':>8s} {'ran':>6s} {'ran on':>6s} {'CTAs':>6s}  CTA classes with checks")
    run_cases(compare, row, a, [0.0, 0.0, 0.0, 0.0, 0, 0, 0])


if __name__ == "__main__":
    main()
