"""Error-injection throughput: `ptxc inject` on applications of tests/apps,
injected runs per second, with the fault-free (golden) run as the baseline.

For each app it runs one campaign (--runs N, --seed 1, register target,
--jobs J; matrixMul with --ignore '^time per') as `ptxc inject` does and
prints: the golden run's wall time (a
`ptxc run --mode full` of the app with the injection variant counting the
injection space), the injected runs' wall time in all, runs per second, and
the mean injected run's wall time over the golden run's (each injected run
is a process of its own: Python start, the app, the JIT from the object
cache, the launches). Nothing is asserted.

Usage: python bench/inject.py [--runs N] [--jobs J] [--apps a,b,...] [--size ARG]
needs nvcc (13) and `ptxc run`.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import app_harness as H                      # noqa: E402

APPS_DIR = Path(__file__).resolve().parent.parent / "tests" / "apps"
IGNORE = {"matrixMul": ("^time per",)}       # its printed timing differs from run to run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--apps", default="vectorAdd,matrixMul")
    ap.add_argument("--size", default=None, help="the apps' first argument (default: theirs)")
    a = ap.parse_args()
    from ptxc.inject import app_campaign as inject_app
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'app':<12} {'golden s':>9} {'runs':>5} {'injected s':>11} {'runs/s':>7} "
              f"{'run/golden':>10}  masked/sdc/due")
        for name in a.apps.split(","):
            exe = H.build(APPS_DIR / name / f"{name}.cu", Path(tmp))
            cwd = os.getcwd()
            os.chdir(tmp)
            try:
                r = inject_app.campaign([str(exe), *([a.size] if a.size else [])], runs=a.runs,
                                        seed=1, jobs=a.jobs, ignore=IGNORE.get(name, ()))
            finally:
                os.chdir(cwd)
            g = r["golden"]["wall_s"]
            inj = r["injected_s"]
            walls = [o["wall_s"] for o in r["outcomes"]]
            counts = [sum(o["outcome"] == c for o in r["outcomes"]) for c in ("masked", "sdc", "due")]
            print(f"{name:<12} {g:9.2f} {len(walls):5d} {inj:11.2f} {len(walls) / inj:7.2f} "
                  f"{sum(walls) / len(walls) / g:10.2f}  {'/'.join(map(str, counts))}")


if __name__ == "__main__":
    main()
