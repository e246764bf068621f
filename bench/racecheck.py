"""The cost of racecheck on whole applications: `ptxc check --tool racecheck`
and `--tool all` against `ptxc run --mode full` (no check), side by side.

For each app of tests/apps named (default: matrixMul, reduction, pathfinder,
at their default test size) it prints the wall time of each command (process
start to exit, warm JIT object cache: one untimed run of each fills it) and
the ratios checked / unchecked. Commands are interleaved (run, racecheck,
all, run, ...) and each time is the best of --repeat runs, so all see the
same machine state. A check command exits 1 when it finds errors; the apps
here are clean, so any exit status other than 0 is marked.

Usage: python bench/racecheck.py [--repeat N] [--apps a,b,...]
needs nvcc (13) and `ptxc`; apps are built into a temporary folder.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import app_harness as H                      # noqa: E402

COMMANDS = {"run": ["run", "--mode", "full"], "racecheck": ["check", "--tool", "racecheck"],
            "all": ["check", "--tool", "all"]}


def timed(cmd: list[str], cwd: Path) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=1800)
    return time.perf_counter() - start, proc.returncode


def bench_app(name: str, exe: Path, repeat: int, work: Path) -> dict:
    best: dict = {}
    for k in range(repeat + 1):                  # run 0 fills the object cache, untimed
        for label, sub in COMMANDS.items():
            s, rc = timed([H.find_ptxc(), *sub, "-o", str(work / f"{label}.txt"), "--", str(exe)],
                          work)
            if k and (label not in best or s < best[label][0]):
                best[label] = (s, rc)
    return {"app": name, **best}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--apps", default="matrixMul,reduction,pathfinder")
    a = ap.parse_args()
    why = H.why_no_apps()
    if why:
        sys.exit(f"bench/racecheck.py: {why}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        names = a.apps.split(",")
        exes = H.build_all([ROOT / "tests" / "apps" / n / f"{n}.cu" for n in names], work)
        print(f"{'app':<12}{'run s':>8}{'race s':>8}{'all s':>8}{'race/run':>10}{'all/run':>9}")
        for n in names:
            if isinstance(exes[n], Exception):
                print(f"{n:<12} build failed: {exes[n]}")
                continue
            r = bench_app(n, exes[n], a.repeat, work)
            flags = "" if all(r[c][1] == 0 for c in COMMANDS) else "  (non-zero exit)"
            print(f"{n:<12}{r['run'][0]:8.2f}{r['racecheck'][0]:8.2f}{r['all'][0]:8.2f}"
                  f"{r['racecheck'][0] / r['run'][0]:10.1f}{r['all'][0] / r['run'][0]:9.1f}{flags}")


if __name__ == "__main__":
    main()
