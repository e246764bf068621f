"""Benchmark: slice fraction of the corpus kernels in each memory mode.

For every kernel of the shared corpus (and the XLA module), the fraction of
its instructions in the branch slice (METRICS.md ``slice_fraction``) with
``memory=conservative``, ``refined``, ``noalias`` (the opt-in assumption)
and ``launch`` specialised to distinct buffers for the pointer parameters
(what ``ptxc.launch`` does for distinct arrays; passes/slice/alias_rules.py).
Prints the distribution per mode (mean, quartiles, the share of kernels
whose slice is the whole kernel) and, per corpus part, the mean fraction.
Fractions are ratios, all measured in the same run.

    .venv/bin/python bench/slice_fraction.py [--limit N] [FILE ...]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import ptxc
from ptxc.launcher.alias import guessed_classes
from ptxc.passes.slice.slice_pass import select_slice

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
MODES = ("conservative", "refined", "noalias", "launch")


def kernel_fractions(module, mode: str) -> list[float]:
    options = {"memory": mode}
    if mode == "launch":
        options["alias"] = tuple((k.name, guessed_classes(k)) for k in module.kernels)
    reports = select_slice(module, **options)
    return [reports[k.name]["slice_fraction"] for k in module.kernels
            if reports[k.name]["static_inst"]]


def part(path: Path) -> str:
    rel = path.relative_to(CORPUS) if CORPUS in path.parents else path
    return rel.parts[0] if len(rel.parts) > 1 else "other"


def collect(files, limit: int | None):
    rows = []              # (part, {mode: fraction}) per kernel
    seconds = dict.fromkeys(MODES, 0.0)
    for path in files[:limit]:
        try:
            module = ptxc.load(str(path))
        except ptxc.PtxcError:
            continue
        per_mode = {}
        for mode in MODES:
            t = time.perf_counter()
            per_mode[mode] = kernel_fractions(module, mode)
            seconds[mode] += time.perf_counter() - t
        for i in range(len(per_mode["conservative"])):
            rows.append((part(path), {m: per_mode[m][i] for m in MODES}))
    return rows, seconds


def summary(values: list[float]) -> str:
    a = np.array(values)
    q = np.percentile(a, [10, 25, 50, 75, 90])
    return (f"{a.mean():6.3f} " + " ".join(f"{x:6.3f}" for x in q)
            + f" {100 * np.mean(a >= 0.999999):6.1f}%")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--limit", type=int, default=None, help="at most N files")
    args = ap.parse_args()
    files = args.files or sorted(CORPUS.rglob("*.ptx"))
    rows, seconds = collect(files, args.limit)
    print(f"{len(rows)} kernels from {len(files[:args.limit])} files")
    print(f"{'memory':13s} {'mean':>6s} {'p10':>6s} {'p25':>6s} {'median':>6s} {'p75':>6s} "
          f"{'p90':>6s} {'whole':>7s} {'slice s':>8s}")
    for mode in MODES:
        print(f"{mode:13s} {summary([r[1][mode] for r in rows])} {seconds[mode]:8.2f}")
    print("mean fraction per corpus part:")
    for name in sorted({r[0] for r in rows}):
        sel = [r[1] for r in rows if r[0] == name]
        print(f"  {name:10s} {len(sel):5d} kernels  " +
              "  ".join(f"{m} {np.mean([x[m] for x in sel]):.3f}" for m in MODES))
    smaller = sum(r[1]["launch"] < r[1]["conservative"] - 1e-9 for r in rows)
    print(f"launch < conservative for {smaller} of {len(rows)} kernels; "
          f"launch == noalias for {sum(abs(r[1]['launch'] - r[1]['noalias']) < 1e-9 for r in rows)}")


if __name__ == "__main__":
    main()
