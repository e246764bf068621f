"""Calls from generated code into Python, per application of tests/apps
(issue 25; docs/performance-sync.md): each app runs once under
`ptxc run --mode full` with ``PTXC_CALLBACK_COUNTS`` set, so the ptxc
process writes its callback counts (backends/llvm/callbacks.py) at exit;
printed with the app's launches (from the report) and the calls per launch.

Usage: python bench/callback_counts.py [--apps a,b] [--size test|bench]
needs nvcc (13) and `ptxc run`; apps are built into a temporary folder.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import app_harness as H                      # noqa: E402
from app_specs import APPS                   # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--apps", default="")
    ap.add_argument("--size", choices=("bench", "test"), default="test")
    opts = ap.parse_args()
    if H.find_nvcc() is None or H.runtime_missing():
        sys.exit(f"needs nvcc and `ptxc run` ({H.runtime_missing() or 'no nvcc'})")
    apps = [a for a in APPS if not opts.apps or a.name in opts.apps.split(",")]
    print(f"{'app':16} {'launches':>8} {'callbacks':>9} {'per launch':>10}  by function")
    with tempfile.TemporaryDirectory(prefix="ptxc-callbacks-") as tmp:
        tmp = Path(tmp)
        for app, exe, work in H.built_apps(apps, tmp):
            counts = work / "calls.json"
            env = dict(os.environ, PTXC_CALLBACK_COUNTS=str(counts))
            size = [app.bench_size] if opts.size == "bench" and app.bench_size else []
            r = H.run(exe, size, "full", work / "r.sqlite", work, timeout=600, env=env)
            if r.returncode != 0 or not counts.exists():
                print(f"{app.name:16} failed (exit {r.returncode})")
                continue
            calls = {k.rsplit(".", 1)[-1]: v for k, v in json.loads(counts.read_text()).items() if v}
            n = len(H.read_report(work / "r.sqlite").launches)
            total = sum(calls.values())
            print(f"{app.name:16} {n:8d} {total:9d} {total / max(n, 1):10.1f}  {calls or ''}")


if __name__ == "__main__":
    main()
