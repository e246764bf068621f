"""The cost of ``ptxc run``'s default ``--clock model``: the memory counters
it turns on (the time model's inputs) and the prediction of each launch.

Every app of tests/apps (or --apps) runs under ``ptxc run --mode hybrid`` in
three configurations, interleaved so that all see the same machine state,
each time the best of --repeat runs with a warm JIT object cache (one
untimed run per configuration fills it first):

    host      --clock host                    (no memory counters, no model)
    counters  --clock host --memory-counters  (the counters alone)
    model     --clock model                   (counters + one prediction per launch)

It prints, per app, the wall time of the whole run (process start to exit)
in each configuration, the kernels' own run time (the report's run_s summed
over launches) and the ratios counters / host and model / host of both:
the slowdown the memory counters cost, and what the predictions add on top.
Nothing is asserted; a run that fails its own check is marked.

Usage: python bench/clock.py [--size bench|test] [--repeat N] [--apps a,b,...]
needs nvcc (13) and `ptxc run`; apps are built into a temporary folder.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import app_harness as H                      # noqa: E402
from app_specs import APPS                   # noqa: E402

CONFIGS = {"host": ["--clock", "host"],
           "counters": ["--clock", "host", "--memory-counters"],
           "model": ["--clock", "model"]}


def one_run(exe, args, name: str, work: Path):
    """(Run, kernel run seconds) of one configuration."""
    report = work / f"{name}.sqlite"
    r = H.run(exe, args, "hybrid", report, work, timeout=600, extra=CONFIGS[name])
    rep = H.read_report(report) if report.exists() else None
    kernel = sum(row["run_s"] for row in rep.launches) if rep else float("nan")
    return r, kernel


def bench_app(app, exe, args, repeat: int, work: Path) -> dict:
    for name in CONFIGS:                          # fill the JIT cache (untimed)
        one_run(exe, args, name, work)
    best: dict = {}
    for _ in range(repeat):
        for name in CONFIGS:
            r, kernel = one_run(exe, args, name, work)
            if name not in best or r.wall_s < best[name][0].wall_s:
                best[name] = (r, kernel)
    row = {"app": app.name, "args": " ".join(args[:1]) or "-",
           "ok": all(r.passed() for r, _ in best.values())}
    for name, (r, kernel) in best.items():
        row[name], row["k" + name] = r.wall_s, kernel
    return row


def ratio(a: float, b: float) -> float:
    return a / b if b > 0 else float("nan")


def print_table(rows) -> None:
    head = (f"{'app':<14}{'size':>9}{'host s':>9}{'ctr s':>9}{'model s':>9}"
            f"{'ctr/host':>9}{'mod/host':>9}{'kern host':>11}{'kern ctr':>10}{'ctr/host':>9}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['app']:<14}{r['args']:>9}{r['host']:>9.3f}{r['counters']:>9.3f}"
              f"{r['model']:>9.3f}{ratio(r['counters'], r['host']):>9.2f}"
              f"{ratio(r['model'], r['host']):>9.2f}{r['khost']:>11.4f}{r['kcounters']:>10.4f}"
              f"{ratio(r['kcounters'], r['khost']):>9.2f}" + ("" if r["ok"] else "   (app FAILED)"))
    tot = {k: sum(r[k] for r in rows) for k in ("host", "counters", "model", "khost", "kcounters")}
    print("-" * len(head))
    print(f"{'all':<14}{'':>9}{tot['host']:>9.3f}{tot['counters']:>9.3f}{tot['model']:>9.3f}"
          f"{ratio(tot['counters'], tot['host']):>9.2f}{ratio(tot['model'], tot['host']):>9.2f}"
          f"{tot['khost']:>11.4f}{tot['kcounters']:>10.4f}"
          f"{ratio(tot['kcounters'], tot['khost']):>9.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=("bench", "test"), default="test",
                    help="test: the default size of the tests; bench: each app's larger size")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--apps", default="", help="comma-separated subset")
    opts = ap.parse_args()
    if H.find_nvcc() is None or H.runtime_missing():
        sys.exit(f"bench/clock.py needs nvcc and `ptxc run` ({H.runtime_missing() or 'no nvcc'})")
    apps = [a for a in APPS if not opts.apps or a.name in opts.apps.split(",")]
    with tempfile.TemporaryDirectory(prefix="ptxc-bench-clock-") as tmp:
        tmp = Path(tmp)
        rows = []
        for app, exe, work in H.built_apps(apps, tmp):
            size = app.bench_size if opts.size == "bench" else ""
            args = [size] if size else (["0", str(work / "out.bin")] if app.output else [])
            rows.append(bench_app(app, exe, args, opts.repeat, work))
            print(f"  {app.name} done", file=sys.stderr, flush=True)
    print(f"ptxc run --mode hybrid, whole applications, {opts.size} sizes, best of "
          f"{opts.repeat}, warm JIT cache; ctr = --clock host --memory-counters, "
          "mod = --clock model (the default)")
    print_table(rows)


if __name__ == "__main__":
    main()
