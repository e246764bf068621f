"""cp.async (non-bulk) against a numpy model of the PTX ISA text: cp-size 4,
8 and 16 bytes; src-size (bytes past it are zero-filled); the ignore-src
predicate (zeros only). Kernels: tests/cuda/cp_async.cu (nvcc -arch=sm_90
-O3). Each thread t copies src[16t .. 16t+15] to shared memory in cp-size
chunks, the first chunk with src-size keep[t], and writes the 16 shared
bytes back (shared memory was filled with 0xEE first, so a byte cp.async did
not write would show as 0xEE)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc

PTX = Path(__file__).parent / "cuda" / "cp_async.sm90.ptx"
THREADS = 128


def model(src: np.ndarray, keep: np.ndarray, size: int) -> np.ndarray:
    out = src.reshape(THREADS, 16).copy()
    for t in range(THREADS):
        out[t, keep[t]:size] = 0            # first chunk: bytes past src-size are zeros
    return out.ravel()


def run(kernel: str, src, keep):
    module = ptxc.load(PTX)
    out = np.zeros(16 * THREADS, np.uint8)
    full = ptxc.launch(module, kernel, 1, THREADS, [src, out, keep], mode="full")
    hybrid = ptxc.launch(module, kernel, 1, THREADS, [src, np.zeros_like(out), keep], mode="hybrid")
    assert full.counters() == hybrid.counters()
    return out


@pytest.mark.parametrize("size", [4, 8, 16])
def test_src_size_zero_fills_the_rest(size):
    rng = np.random.default_rng(size)
    src = rng.integers(1, 256, 16 * THREADS, dtype=np.uint8)     # no zero bytes in the source
    keep = rng.integers(0, size + 1, THREADS).astype(np.uint32)
    keep[:size + 1] = np.arange(size + 1)                          # every src-size at least once
    assert (run(f"cp{size}", src, keep) == model(src, keep, size)).all()


def test_ignore_src_copies_zeros():
    rng = np.random.default_rng(7)
    src = rng.integers(1, 256, 16 * THREADS, dtype=np.uint8)
    keep = rng.integers(0, 4, THREADS).astype(np.uint32)
    want = src.reshape(THREADS, 16).copy()
    want[(keep & 1) == 1] = 0
    assert (run("cp_ignore", src, keep) == want.ravel()).all()
