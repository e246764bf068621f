"""Benchmark: parsing vs. the CFG analyses and the verifier, side by side.

Loads the XLA module (109 kernels) and the largest corpus files that parse,
then times, per file, ``ptxc.load`` and each analysis over every function
(cfg, domtree, postdomtree, reconvergence, control-dep, loops, each on a fresh
AnalysisManager that already holds the analyses it depends on) and the
verifier. Prints microseconds per instruction and the ratio analyses / parse
(the target: no more than 1.0).

    .venv/bin/python bench/analyses.py [--largest N] [--repeat R] [FILE ...]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import ptxc
from ptxc.passes.cfg import CFG, defined_functions
from ptxc.passes.controldep import ControlDep
from ptxc.passes.domtree import DomTree
from ptxc.passes.loops import Loops
from ptxc.passes.postdomtree import PostDomTree
from ptxc.passes.reconvergence import Reconvergence
from ptxc.ir.passmanager import AnalysisManager
from ptxc.passes.verifier import verify_module

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
XLA = CORPUS / "xla" / "module_0000.ptx"
ANALYSES = [CFG, DomTree, PostDomTree, Reconvergence, ControlDep, Loops]
DEPS = {DomTree: [CFG], PostDomTree: [CFG], Reconvergence: [CFG, PostDomTree],
        ControlDep: [CFG, PostDomTree], Loops: [CFG, DomTree]}


def best_of(repeat: int, fn) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def time_analysis(module, analysis, repeat: int) -> float:
    """Seconds to compute one analysis on every function, dependencies cached."""
    fns = defined_functions(module)

    def once():
        am = AnalysisManager(module)
        for fn in fns:
            for dep in DEPS.get(analysis, []):
                am.get(dep, fn)
        t = time.perf_counter()
        for fn in fns:
            am.get(analysis, fn)
        return time.perf_counter() - t
    return min(once() for _ in range(repeat))


def bench_file(path: Path, repeat: int) -> dict:
    module = ptxc.load(str(path))
    times = {"parse": best_of(max(1, repeat // 2), lambda: ptxc.load(str(path)))}
    for a in ANALYSES:
        times[a.name] = time_analysis(module, a, repeat)
    times["verify"] = best_of(repeat, lambda: verify_module(module))
    n = sum(len(b.body) for f in defined_functions(module) for b in f.blocks)
    return {"file": path, "instrs": n, "functions": len(defined_functions(module)), **times}


def largest_parsing(n: int) -> list[Path]:
    """The n largest corpus files that ptxc parses."""
    out = []
    for path in sorted(CORPUS.rglob("*.ptx"), key=lambda p: -p.stat().st_size):
        try:
            ptxc.load(str(path))
        except ptxc.PtxcError:
            continue
        out.append(path)
        if len(out) == n:
            break
    return out


def report(row: dict) -> str:
    names = [a.name for a in ANALYSES] + ["verify"]
    total = sum(row[k] for k in names)
    per = lambda s: 1e6 * s / max(row["instrs"], 1)   # noqa: E731
    head = (f"{row['file'].relative_to(CORPUS) if CORPUS in row['file'].parents else row['file']}: "
            f"{row['functions']} functions, {row['instrs']} instrs")
    cols = "  ".join(f"{k} {per(row[k]):.2f}" for k in ["parse"] + names)
    ratio = total / row["parse"]
    return (f"{head}\n  us/instr: {cols}\n"
            f"  analyses+verify {per(total):.2f} us/instr, ratio analyses/parse {ratio:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--largest", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    files = args.files or [XLA] + [p for p in largest_parsing(args.largest) if p != XLA]
    for path in files:
        print(report(bench_file(path, args.repeat)), flush=True)


if __name__ == "__main__":
    main()
