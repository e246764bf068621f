"""Whole-application benchmark: every app of tests/apps run under
`ptxc run --mode hybrid` and `--mode full` on this machine, side by side.

For each app it prints the wall time of the whole run in each mode (process
start to exit: the runtime, fat-binary decoding, PTX parsing, slicing, JIT
compilation, every launch, the app's own host code) and the ratio full / hybrid
(> 1: hybrid is faster), the kernels' own run time in each mode (the report's
run_s summed over launches) and its ratio, the number of launches, and the slice
fraction (instructions the hybrid run executes / static instructions, from the
hybrid report: mean over launches, and the minimum). Nothing is asserted; a run
that fails its own check is marked.

Modes are interleaved (hybrid, full, hybrid, full, ...) and each time is the
best of --repeat runs, so both see the same machine state. By default the JIT's
on-disk object cache stays on and one untimed run per mode fills it (the warm
case, what a user sees from the second run on); --cold turns the cache off
(PTXC_CACHE=0) so that every run compiles every kernel.

Usage: python bench/apps.py [--size bench|test] [--repeat N] [--cold]
                            [--apps a,b,...] [--threads N]
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


def timed(exe, args, mode, work: Path, env, extra):
    """(best Run of the repeats, its report) for one mode."""
    report = work / f"{mode}.sqlite"
    r = H.run(exe, args, mode, report, work, timeout=600, extra=extra, env=env)
    rep = H.read_report(report) if report.exists() else None
    return r, rep


def kernel_seconds(rep) -> float:
    return sum(row["run_s"] for row in rep.launches) if rep else float("nan")


def bench_app(app, exe, size: str, repeat: int, env, extra, work: Path) -> dict:
    args = [size] if size else []
    if size == "" and app.output:
        args = ["0", str(work / "out.bin")]
    best = {}
    for _ in range(repeat):
        for mode in ("hybrid", "full"):
            r, rep = timed(exe, args, mode, work, env, extra)
            if mode not in best or r.wall_s < best[mode][0].wall_s:
                best[mode] = (r, rep)
    (rh, hyb), (rf, full) = best["hybrid"], best["full"]
    fractions = [row["slice_fraction"] for row in hyb.launches] if hyb else []
    fractions = [f for f in fractions if f is not None]
    return {
        "app": app.name, "args": " ".join(args[:1]) or "-",
        "ok": rh.passed() and rf.passed(),
        "launches": len(full.launches) if full else 0,
        "slice_mean": sum(fractions) / len(fractions) if fractions else float("nan"),
        "slice_min": min(fractions) if fractions else float("nan"),
        "full_s": rf.wall_s, "hybrid_s": rh.wall_s,
        "kfull_s": kernel_seconds(full), "khybrid_s": kernel_seconds(hyb),
    }


def print_table(rows) -> None:
    head = (f"{'app':<14}{'size':>9}{'launches':>9}{'slice':>7}{'(min)':>7}"
            f"{'full s':>9}{'hybrid s':>9}{'ratio':>7}{'kern full':>11}{'kern hyb':>10}{'ratio':>7}")
    print(head)
    print("-" * len(head))
    for r in rows:
        ratio = r["full_s"] / r["hybrid_s"]
        kratio = r["kfull_s"] / r["khybrid_s"] if r["khybrid_s"] > 0 else float("nan")
        print(f"{r['app']:<14}{r['args']:>9}{r['launches']:>9}{r['slice_mean']:>7.2f}"
              f"{r['slice_min']:>7.2f}{r['full_s']:>9.3f}{r['hybrid_s']:>9.3f}{ratio:>7.2f}"
              f"{r['kfull_s']:>11.4f}{r['khybrid_s']:>10.4f}{kratio:>7.2f}"
              + ("" if r["ok"] else "   (app FAILED)"))
    tf, th = sum(r["full_s"] for r in rows), sum(r["hybrid_s"] for r in rows)
    kf, kh = sum(r["kfull_s"] for r in rows), sum(r["khybrid_s"] for r in rows)
    print("-" * len(head))
    print(f"{'all':<14}{'':>9}{sum(r['launches'] for r in rows):>9}{'':>14}"
          f"{tf:>9.3f}{th:>9.3f}{tf / th:>7.2f}{kf:>11.4f}{kh:>10.4f}{kf / kh if kh else 0:>7.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=("bench", "test"), default="bench",
                    help="bench: each app's larger bench size; test: the default size of the tests")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cold", action="store_true", help="JIT object cache off (PTXC_CACHE=0)")
    ap.add_argument("--apps", default="", help="comma-separated subset")
    ap.add_argument("--threads", type=int, default=None, help="ptxc run --threads")
    opts = ap.parse_args()
    if H.find_nvcc() is None or H.runtime_missing():
        sys.exit(f"bench/apps.py needs nvcc and `ptxc run` ({H.runtime_missing() or 'no nvcc'})")
    apps = [a for a in APPS if not opts.apps or a.name in opts.apps.split(",")]
    env = dict(os.environ, **({"PTXC_CACHE": "0"} if opts.cold else {}))
    extra = ["--threads", str(opts.threads)] if opts.threads else []
    with tempfile.TemporaryDirectory(prefix="ptxc-bench-apps-") as tmp:
        tmp = Path(tmp)
        rows = []
        for app, exe, work in H.built_apps(apps, tmp):
            size = app.bench_size if opts.size == "bench" else ""
            if not opts.cold:                     # fill the JIT cache (untimed)
                for mode in ("hybrid", "full"):
                    timed(exe, [size] if size else [], mode, work, env, extra)
            rows.append(bench_app(app, exe, size, opts.repeat, env, extra, work))
            print(f"  {app.name} done", file=sys.stderr, flush=True)
    cache = "cold (PTXC_CACHE=0)" if opts.cold else "warm JIT cache"
    print(f"ptxc run, whole applications, {opts.size} sizes, best of {opts.repeat}, {cache}, "
          f"{os.cpu_count()} cores; ratio = full / hybrid")
    print_table(rows)


if __name__ == "__main__":
    main()
