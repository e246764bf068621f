"""Error-injection throughput on one kernel launch (``ptxc.inject.campaign``,
``ptxc inject FILE.ptx``): injected launches per second for each ``jobs``,
with the fault-free launch as the baseline.

The launch: tests/apps/vectorAdd's kernel (nvcc's PTX, committed) on N
elements (random inputs, seed 0), 256 threads per CTA. For each ``jobs`` it
runs one campaign (--runs R, seed 1, register target) and prints the
fault-free launch's wall time (the injection variant, compiled already: a
second golden run), the injected launches' wall time in all, launches per
second, the mean injected launch over the fault-free one, and the classes
(which must not depend on jobs: checked). Nothing else is asserted.

Usage: python bench/inject_launch.py [--n N] [--runs R] [--jobs 1,2]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ptxc                                   # noqa: E402
import ptxc.inject as inj                     # noqa: E402

PTX = Path(__file__).resolve().parent.parent / "tests" / "apps" / "vectorAdd" / "vectorAdd.sm90.ptx"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=65536)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--jobs", default="1,2")
    a = ap.parse_args()
    m = ptxc.load(str(PTX))
    kernel = m.kernels[0].name
    rng = np.random.default_rng(0)
    args = [rng.random(a.n, np.float32), rng.random(a.n, np.float32), np.zeros(a.n, np.float32), a.n]
    grid = (a.n + 255) // 256
    inj.golden_run(m, kernel, grid, 256, args)           # compile the injection variant
    t0 = time.perf_counter()
    inj.golden_run(m, kernel, grid, 256, args)
    golden = time.perf_counter() - t0
    print(f"vectorAdd n={a.n}: fault-free launch {golden:.3f} s")
    print(f"{'jobs':>4} {'runs':>5} {'injected s':>11} {'runs/s':>7} {'run/golden':>10}  masked/sdc/due")
    first = None
    for jobs in (int(j) for j in a.jobs.split(",")):
        c = inj.campaign(m, kernel, grid, 256, args, runs=a.runs, seed=1, jobs=jobs)
        classes = [o["outcome"] for o in c.outcomes]
        assert first is None or classes == first, "classes depend on jobs"
        first = classes
        counts = "/".join(str(classes.count(k)) for k in ("masked", "sdc", "due"))
        print(f"{jobs:>4} {a.runs:>5} {c.injected_s:11.2f} {a.runs / c.injected_s:7.1f} "
              f"{c.injected_s / a.runs / golden:10.2f}  {counts}")


if __name__ == "__main__":
    main()
