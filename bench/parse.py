"""Parse speed: ptxc (parse + IR + SSA) vs `ptxas -O0` on the same files, same run.

Prints, for the XLA module and the largest corpus files: instructions,
ptxc seconds, instructions per second, ptxas -O0 seconds and the ratio
ptxc/ptxas (target for the XLA module: <= 2.0). Best of N runs each.
Times are CPU seconds (ours: process time; ptxas: the child's user+sys from
getrusage), so a busy machine disturbs the ratio less than wall time would.

    python bench/parse.py [--repeat 3] [FILE ...]
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import ptxc

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def default_files(n_largest: int = 4) -> list[Path]:
    files = sorted(CORPUS.rglob("*.ptx"), key=lambda p: p.stat().st_size, reverse=True)
    xla = CORPUS / "xla" / "module_0000.ptx"
    return [xla] + [f for f in files if f != xla][:n_largest]


def best_of(repeat: int, fn) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def best_child_of(repeat: int, cmd: list[str]) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = child_cpu()
        subprocess.run(cmd, capture_output=True, check=True)
        best = min(best, child_cpu() - t)
    return best


def ptxas_seconds(path: Path, repeat: int) -> float | None:
    exe = shutil.which("ptxas")
    if exe is None:
        return None
    cmd = [exe, "-arch=sm_75", "-O0", str(path), "-o", os.devnull]
    if subprocess.run(cmd, capture_output=True).returncode != 0:
        return None
    return best_child_of(repeat, cmd)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    files = args.files or default_files()
    ptxc.parse(".version 8.0\n.target sm_90\n.entry k() { ret; }\n")   # build the grammar once
    print(f"{'file':44} {'instrs':>7} {'ptxc s':>7} {'instr/s':>9} {'ptxas s':>8} {'ratio':>6}")
    for path in files:
        text = path.read_text()
        try:
            module = ptxc.parse(text, str(path))
        except ptxc.PtxcError as e:
            print(f"{path.name:44} error: {e.headline()}")
            continue
        n = sum(len(b.body) for f in module.functions for b in f.blocks)
        t = best_of(args.repeat, lambda: ptxc.parse(text, str(path)))
        ref = ptxas_seconds(path, args.repeat)
        ratio = f"{t / ref:6.2f}" if ref else "   n/a"
        name = str(path.relative_to(CORPUS)) if CORPUS in path.parents else path.name
        print(f"{name[-44:]:44} {n:7d} {t:7.3f} {n / t:9.0f} "
              f"{(f'{ref:8.3f}' if ref else '     n/a')} {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
