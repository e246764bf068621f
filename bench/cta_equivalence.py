"""Benchmark: CTAs run vs launched, and hybrid time saved, with CTA equivalence.

For a few launches (the kernels of tests/cuda/cta_equiv.cu at large grids,
bench/kernels/loop.ptx, the README example, every kernel of the XLA module
with the grid its linear-index bound implies), runs the same hybrid launch
with CTA equivalence (the default) and with every CTA, after a warm-up
launch that compiles, and prints CTAs run / launched and the run-time ratio
every-CTA / reduced (both measured in this run; the counters are asserted
equal). Times are the best of ``--repeat`` runs of ``Profile.timings['run']``
(class computation included in the reduced run).

    .venv/bin/python bench/cta_equivalence.py [--repeat R] [--threads N] [--skip-xla]
"""
from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

import numpy as np

import ptxc
from ptxc.launcher.api import launch

ROOT = Path(__file__).resolve().parents[1]
CTA_PTX = ROOT / "tests" / "cuda" / "cta_equiv.sm90.ptx"
LOOP_PTX = ROOT / "bench" / "kernels" / "loop.ptx"
EXAMPLE = ROOT / "examples" / "branchy.ptx"
XLA = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "xla" / "module_0000.ptx"


def best_run(module, kernel, grid, block, make_args, repeat, threads, **kw):
    best, prof = float("inf"), None
    for _ in range(repeat):
        prof = launch(module, kernel, grid, block, make_args(), threads=threads, **kw)
        best = min(best, prof.timings["run"])
    return best, prof


def compare(module, kernel, grid, block, make_args, repeat, threads):
    """(ctas run, ctas launched, every-CTA seconds, reduced seconds, seconds
    to compute the classes the first time, note). The reduced runs after the
    first reuse the launch's classes (ptxc/launcher/cta_classes.py remembers them)."""
    launch(module, kernel, grid, block, make_args(), threads=threads,
           cta_equivalence=False)                                              # compile
    first = launch(module, kernel, grid, block, make_args(), threads=threads)
    t_red, red = best_run(module, kernel, grid, block, make_args, repeat, threads)
    t_all, every = best_run(module, kernel, grid, block, make_args, repeat, threads,
                            cta_equivalence=False)
    assert red.counters() == every.counters() == first.counters(), kernel
    return (red.ctas_run, red.ctas_launched, t_all, t_red, first.timings["cta_classes"],
            red.cta_equivalence)


def cuda_cases():
    n = 1 << 22
    x = np.random.default_rng(0).random(n).astype(np.float32)
    y = np.zeros(n, np.float32)
    return [
        ("scale_bounded", (n // 256 + 1,), 256, lambda: [x, y, 2.0, n - 77]),
        ("saxpy_stride", (1024,), 256, lambda: [x, y, 1.5, n]),
        ("saxpy_stride, 64 CTAs", (64,), 256, lambda: [x, y, 1.5, n - 3]),
        ("tile2d", (64, 256), (32, 8), lambda: [x, y, 2040, 2040]),
        ("block_rounds", (n // 256,), 256, lambda: [y, n - 100]),
        ("block_sum", (n // 128,), 128, lambda: [x.view(np.int32), y.view(np.int32), n - 50]),
        ("block_flag", (n // 256,), 256,
         lambda: [np.ones(n // 256, np.int32), y, n]),
    ]


def row(name, ctas_run, ctas, t_all, t_red, t_classes, note):
    print(f"{name:26.26s} {ctas_run:7d} {ctas:7d} {t_all:8.4f} {t_red:8.4f} {t_classes:8.4f} "
          f"{t_all / t_red:7.2f}x {t_all / (t_red + t_classes):7.2f}x  {note[:50]}", flush=True)


def xla_cases(module):
    """(kernel, grid) for the XLA kernels whose linear index is ctaid << s |
    tid << t, compared against a constant N: grid = ceil(N / 2^s)."""
    text = XLA.read_text()
    out = []
    for k in module.kernels:
        start = text.index(f".entry {k.name}(")
        body = text[start:text.index("\n}\n", start)]
        sh = re.search(r"shl.b32\s+%r\d+, %r\d+, (\d+);", body)
        bound = re.search(r"setp.lt.u32\s+%p\d+, %r\d+, (\d+);", body)
        if sh and bound:
            out.append((k, -(-int(bound.group(1)) // (1 << int(sh.group(1))))))
    return out


def arguments():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--skip-xla", action="store_true")
    return ap.parse_args()


def run_cases(compare, row, a, total: list) -> None:
    """``row(name, *compare(module, kernel, grid, block, make, repeat, threads))``
    for every case: the CUDA kernels, loop_divergent, the README example, then
    the XLA module's kernels summed into ``total`` (its first len(total)
    results; bench/faults.py shares the cases)."""
    m = ptxc.load(str(CTA_PTX))
    for name, grid, block, make in cuda_cases():
        row(name, *compare(m, name.split(",")[0], grid, block, make, a.repeat, a.threads))
    loop = ptxc.load(str(LOOP_PTX))
    n = 1 << 20
    row("loop_divergent", *compare(loop, "loop_divergent", n // 256, 256,
                                   lambda: [np.zeros(n, np.float32), n], a.repeat, a.threads))
    ex = ptxc.load(str(EXAMPLE))
    arr = np.arange(1 << 20, dtype=np.float32)
    row("README vecadd_branchy", *compare(ex, "vecadd_branchy", 4096, 256,
                                          lambda: [arr, arr, np.zeros_like(arr), (1 << 20) - 9],
                                          a.repeat, a.threads))
    if a.skip_xla or not XLA.is_file():
        return
    xla = ptxc.load(str(XLA))
    skipped = 0
    for k, grid in xla_cases(xla):
        bufs = [np.zeros(1 << 21, np.uint8) for _ in k.params]     # one allocation each
        try:
            result = compare(xla, k, grid, None, lambda: bufs, a.repeat, a.threads)
        except ptxc.PtxcError:
            skipped += 1
            continue
        for i, v in enumerate(result[:len(total)]):
            total[i] += v
    row("XLA module, all kernels", *total, f"sum over kernels ({skipped} failed)")


def main() -> None:
    a = arguments()
    print(f"{'launch':26s} {'run':>7s} {'CTAs':>7s} {'every s':>8s} {'reduced':>8s} "
          f"{'classes':>8s} {'ratio':>8s} {'ratio+cl':>8s}  classes")
    run_cases(compare, row, a, [0, 0, 0.0, 0.0, 0.0])


if __name__ == "__main__":
    main()
