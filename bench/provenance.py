"""Benchmark: the cost of the provenance check on loaded pointers.

Full runs of tests/cuda/provenance.cu's kernels at a large grid, with the
check (the default) and without it (``expected_segment`` replaced by one that
checks nothing: the executor before loaded pointers were checked), same
process, fresh module each, a warm-up launch first (it compiles); prints the
best of ``--repeat`` run times (``Profile.timings['run']``) and the ratio.
The counters are asserted equal.

    batched_scale  y = ys[blockIdx.x]: one array of pointers, a shadow copy
                   and a per-lane check per store
    call_put       the store inside put(): its pointer argument
    pair_copy      a struct of two pointers read through a pointer

    .venv/bin/python bench/provenance.py [--ctas N] [--repeat R] [--threads N]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import ptxc
from ptxc.backends.llvm.instruments import provenance_ir
from ptxc.launcher.api import launch_segments

PTX = Path(__file__).resolve().parent.parent / "tests" / "cuda" / "provenance.sm90.ptx"
BLOCK = 256


def le(v: int) -> bytes:
    return int(v).to_bytes(8, "little")


def setup(kernel: str, ctas: int):
    """(params, segments) of one launch: every pointer into 256-float rows of
    segment 8 (y / dst), x / src in segment 7."""
    y = np.zeros(ctas * BLOCK, np.float32).view(np.uint8)
    x = np.arange(BLOCK, dtype=np.float32).view(np.uint8)
    if kernel == "batched_scale":
        table = np.array([(8 << 32) + 4 * BLOCK * b for b in range(ctas)], np.uint64).view(np.uint8)
        return (le(6 << 32) + le(7 << 32) + np.float32(2).tobytes() + bytes(4) + le(0),
                {6: table, 7: x, 8: y})
    if kernel == "pair_copy":
        pair = np.array([7 << 32, 8 << 32], np.uint64).view(np.uint8)
        return le(6 << 32) + le(0), {6: pair, 7: x, 8: y}
    return le(8 << 32) + le(7 << 32) + le(0), {7: x, 8: y}


def best(kernel: str, ctas: int, repeat: int, threads: int):
    m = ptxc.load(PTX)
    params, segs = setup(kernel, ctas)
    launch_segments(m, kernel, (ctas, 1, 1), (BLOCK, 1, 1), params, segs, mode="full",
                    threads=threads)
    t, prof = float("inf"), None
    for _ in range(repeat):
        prof = launch_segments(m, kernel, (ctas, 1, 1), (BLOCK, 1, 1), params, segs, mode="full",
                               threads=threads)
        t = min(t, prof.timings["run"])
    return t, prof


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ctas", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    print(f"full runs, {a.ctas} CTAs x {BLOCK} threads, best of {a.repeat}, {a.threads} thread(s)")
    print(f"{'kernel':16s} {'unchecked':>10s} {'checked':>10s} {'ratio':>7s}")
    keep = provenance_ir.expected_segment
    for kernel in ("batched_scale", "call_put", "pair_copy"):
        provenance_ir.expected_segment = lambda cg: None
        try:
            t0, off = best(kernel, a.ctas, a.repeat, a.threads)
        finally:
            provenance_ir.expected_segment = keep
        t1, on = best(kernel, a.ctas, a.repeat, a.threads)
        assert off.counters() == on.counters(), kernel
        print(f"{kernel:16s} {t0:10.4f} {t1:10.4f} {t1 / t0:6.2f}x", flush=True)


if __name__ == "__main__":
    main()
