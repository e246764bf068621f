"""Benchmark: the whole ``slice,count`` pipeline against ``ptxas -O0``.

For the XLA module (109 kernels) and the largest corpus files that parse,
times, in one run and side by side: ``ptxc.load`` (parse + SSA), the control
flow analyses the executor needs (cfg, postdomtree, reconvergence), the slice
(the default memory=launch, which is conservative without a launch, and
noalias; bench/slice_fraction.py compares every mode per kernel), the count pass, and
``ptxas -arch=sm_75 -O0`` on the same file (when ptxas exists and accepts the
file). Prints per file the slice fraction of both memory modes, the seconds
of each stage and the ratio pipeline / ptxas (the target: at most 3).

    .venv/bin/python bench/slice.py [--largest N] [--repeat R] [FILE ...]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import time
from pathlib import Path

import ptxc
from ptxc.passes.cfg import CFG, defined_functions
from ptxc.passes.postdomtree import PostDomTree
from ptxc.passes.reconvergence import Reconvergence
from ptxc.passes.slice.slice_pass import mark_slice
from ptxc.ir.passmanager import AnalysisManager
from ptxc.passes.pipeline import run_pipeline

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
XLA = CORPUS / "xla" / "module_0000.ptx"
PTXAS = shutil.which("ptxas")


def best_of(repeat: int, fn):
    best, value = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t)
    return best, value


def ptxas_seconds(path: Path, repeat: int) -> float | None:
    if PTXAS is None:
        return None

    def once():
        r = subprocess.run([PTXAS, "-arch=sm_75", "-O0", str(path), "-o", os.devnull],
                           capture_output=True, timeout=600)
        return r.returncode == 0
    t, ok = best_of(repeat, once)
    return t if ok else None


def analyses(module) -> None:
    am = AnalysisManager(module)
    for fn in defined_functions(module):
        for a in (CFG, PostDomTree, Reconvergence):
            am.get(a, fn)


def fraction(reports: dict) -> float:
    n = sum(r["static_inst"] for r in reports.values())
    return sum(r["slice_inst"] for r in reports.values()) / n if n else 0.0


def bench_file(path: Path, repeat: int) -> dict:
    t_load, module = best_of(repeat, lambda: ptxc.load(str(path)))
    t_an, _ = best_of(repeat, lambda: analyses(module))
    t_noalias, rep_na = best_of(repeat, lambda: mark_slice(module, memory="noalias"))
    t_slice, rep = best_of(repeat, lambda: mark_slice(module))
    t_count, _ = best_of(repeat, lambda: run_pipeline(module, "count"))
    total = t_load + t_an + t_slice + t_count
    t_ptxas = ptxas_seconds(path, repeat)
    return {"file": path, "inst": sum(r["static_inst"] for r in rep.values()),
            "load": t_load, "analyses": t_an, "slice": t_slice, "slice_noalias": t_noalias,
            "count": t_count, "total": total, "ptxas": t_ptxas,
            "fraction": fraction(rep), "fraction_noalias": fraction(rep_na)}


def largest(n: int) -> list[Path]:
    files = sorted(CORPUS.rglob("*.ptx"), key=lambda p: p.stat().st_size, reverse=True)
    return [p for p in files if p != XLA][:n]


def row(r: dict) -> str:
    name = str(r["file"].relative_to(CORPUS)) if CORPUS in r["file"].parents else str(r["file"])
    ratio = f"{r['total'] / r['ptxas']:6.2f}" if r["ptxas"] else "   n/a"
    ptxas = f"{r['ptxas']:7.3f}" if r["ptxas"] else "    n/a"
    return (f"{name:45.45s} {r['inst']:7d} {100 * r['fraction']:6.1f}% "
            f"{100 * r['fraction_noalias']:6.1f}% {r['load']:7.3f} {r['analyses']:7.3f} "
            f"{r['slice']:7.3f} {r['count']:7.3f} {r['total']:7.3f} {ptxas} {ratio}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--largest", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    files = args.files or ([XLA] if XLA.exists() else []) + largest(args.largest)
    print(f"{'file':45s} {'inst':>7s} {'slice':>7s} {'noalias':>7s} {'load':>7s} "
          f"{'anal.':>7s} {'slice':>7s} {'count':>7s} {'total':>7s} {'ptxas':>7s} {'ratio':>6s}")
    print(f"{'':45s} {'':7s} {'frac':>7s} {'frac':>7s} {'s':>7s} {'s':>7s} {'s':>7s} "
          f"{'s':>7s} {'s':>7s} {'-O0 s':>7s} {'':>6s}")
    for path in files:
        try:
            print(row(bench_file(path, args.repeat)), flush=True)
        except ptxc.PtxcError as e:
            print(f"{path.name:45.45s} does not parse: {e.headline()}")


if __name__ == "__main__":
    main()
