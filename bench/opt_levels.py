"""JIT optimisation level against compile time and run time, per application.

Runs every app of tests/apps under ``ptxc run --mode full`` with the JIT's
on-disk cache off (PTXC_CACHE=0: every run compiles every kernel) once per
optimisation level: ``auto`` (jit.choose_level, the default) and the levels
forced with PTXC_OPT=0..3 (LLVM's new-pass-manager pipelines O0..O3 on the
IR, the same level for the code generator). Levels are interleaved per app
(auto, 0, 1, 2, 3, auto, 0, ...) so that every level sees the same machine
state; each number is the best of --repeat runs. From each run's report:
compile = the launches' compile_s summed (code generator + LLVM), run = their
run_s summed; wall = the whole process. The last columns are the totals of
each level relative to ``auto``. Nothing is asserted; an app that fails its
own check is marked.

Usage: python bench/opt_levels.py [--size test|bench] [--repeat N] [--apps a,b]
                                  [--levels auto,0,1,2,3]
needs nvcc (13) and `ptxc run`; apps are built into a temporary folder.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import app_harness as H                      # noqa: E402
from app_specs import APPS                   # noqa: E402


def run_level(exe, args, level: str, work: Path) -> dict:
    env = dict(os.environ, PTXC_CACHE="0")
    env.pop("PTXC_OPT", None)
    if level != "auto":
        env["PTXC_OPT"] = level
    report = work / f"opt{level}.sqlite"
    r = H.run(exe, args, "full", report, work, timeout=900, env=env)
    rep = H.read_report(report) if report.exists() else None
    rows = rep.launches if rep else []
    return {"ok": r.passed(), "wall": r.wall_s,
            "compile": sum(x["compile_s"] or 0.0 for x in rows),
            "run": sum(x["run_s"] or 0.0 for x in rows)}


def bench_app(app, exe, size: str, levels, repeat: int, work: Path) -> dict:
    args = [size] if size else (["0", str(work / "out.bin")] if app.output else [])
    best: dict = {}
    for _ in range(repeat):
        for lv in levels:
            got = run_level(exe, args, lv, work)
            old = best.get(lv)
            if old is None or got["compile"] + got["run"] < old["compile"] + old["run"]:
                best[lv] = got
    return best


def print_table(rows, levels) -> None:
    head = f"{'app':<14}" + "".join(f"{'O' + lv + ' comp/run s':>20}" for lv in levels)
    print(head)
    print("-" * len(head))
    tot = {lv: [0.0, 0.0, 0.0] for lv in levels}
    for name, best in rows:
        cells = []
        for lv in levels:
            b = best[lv]
            tot[lv][0] += b["compile"]
            tot[lv][1] += b["run"]
            tot[lv][2] += b["wall"]
            cells.append(f"{b['compile']:>9.3f}/{b['run']:<9.3f}" + ("" if b["ok"] else "!"))
        print(f"{name:<14}" + "".join(f"{c:>20}" for c in cells))
    print("-" * len(head))
    print(f"{'all':<14}" + "".join(f"{t[0]:>9.3f}/{t[1]:<9.3f} " for t in tot.values()))
    ref = tot[levels[0]]
    print(f"{'wall s':<14}" + "".join(f"{t[2]:>19.2f} " for t in tot.values()))
    print(f"{'vs ' + levels[0]:<14}" + "".join(
        f"{'c %.2f r %.2f w %.2f' % (t[0] / ref[0], t[1] / ref[1], t[2] / ref[2]):>21}"
        for t in tot.values()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=("bench", "test"), default="test")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--apps", default="")
    ap.add_argument("--levels", default="auto,0,1,2,3")
    opts = ap.parse_args()
    if H.find_nvcc() is None or H.runtime_missing():
        sys.exit(f"bench/opt_levels.py needs nvcc and `ptxc run` ({H.runtime_missing() or 'no nvcc'})")
    levels = opts.levels.split(",")
    apps = [a for a in APPS if not opts.apps or a.name in opts.apps.split(",")]
    with tempfile.TemporaryDirectory(prefix="ptxc-bench-opt-") as tmp:
        tmp = Path(tmp)
        rows = []
        for app, exe, work in H.built_apps(apps, tmp):
            size = app.bench_size if opts.size == "bench" else ""
            rows.append((app.name, bench_app(app, exe, size, levels, opts.repeat, work)))
            print(f"  {app.name} done", file=sys.stderr, flush=True)
    print(f"ptxc run --mode full, {opts.size} sizes, PTXC_CACHE=0, best of {opts.repeat}, "
          f"{os.cpu_count()} cores; cells: compile s / run s (launches summed)")
    print_table(rows, levels)


if __name__ == "__main__":
    main()
