"""cp.async-heavy GEMM vs the same GEMM with plain loads, and a tensor-core
(wmma) GEMM of the same size, full mode, same process.

bench/kernels/async_mm.cu has one tiled SGEMM twice: mm_async copies the
tiles to shared memory with cp.async (16 bytes a thread, as cuda-samples'
globalToShmemAsyncCopy does through cuda::memcpy_async) and mm_plain with
float4 loads and stores. Both execute almost the same thread instructions,
so their rates should be close: the ratio plain/async time is printed (1.0:
cp.async costs what a load + store costs). tests/cuda/wmma.cu's wmma_gemm
(f16 in, f32 out, one 16x16 tile per warp, wmma.load from global) does the
same n^3 multiply-adds on tensor-core instructions: its time over mm_plain's
says what a matrix-multiply-heavy launch costs against a simple kernel per
multiply-add. Warm JIT (the first run of each compiles); best of N; results
checked against numpy.

    python bench/async_copy.py [--n 512] [--repeat 3]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import ptxc

PTX = Path(__file__).parent / "kernels" / "async_mm.ptx"
WMMA = Path(__file__).parents[1] / "tests" / "cuda" / "wmma.sm90.ptx"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    n = a.n
    module = ptxc.load(PTX)
    rng = np.random.default_rng(0)
    A, B = rng.random(n * n, np.float32), rng.random(n * n, np.float32)
    ref = (A.reshape(n, n).astype(np.float64) @ B.reshape(n, n)).ravel()
    best = {}
    for _ in range(a.repeat + 1):
        for k in ("mm_plain", "mm_async"):
            C = np.zeros(n * n, np.float32)
            t = time.perf_counter()
            p = ptxc.launch(module, k, (n // 32, n // 32), (8, 32), [A, B, C, n], mode="full")
            dt = time.perf_counter() - t
            assert np.allclose(C, ref, rtol=1e-4), k
            best[k] = min(best.get(k, (dt, 0))[0], dt), p.thread_inst_executed
    best["wmma_gemm"] = wmma_gemm(n, a.repeat)
    for k, (dt, ti) in best.items():
        print(f"{k:9s} {dt:7.3f} s  {ti:>12d} thread instructions  {ti / dt:9.3g} /s  "
              f"{n ** 3 / dt:9.3g} multiply-adds/s")
    print(f"async / plain time: {best['mm_async'][0] / best['mm_plain'][0]:.2f}")
    print(f"wmma / plain time:  {best['wmma_gemm'][0] / best['mm_plain'][0]:.2f}")


def wmma_gemm(n: int, repeat: int) -> tuple:
    """(best time, thread instructions) of tests/cuda/wmma.cu's wmma_gemm, n^3."""
    module = ptxc.load(WMMA)
    rng = np.random.default_rng(1)
    A = rng.standard_normal((n, n)).astype(np.float16)
    B = rng.standard_normal((n, n)).astype(np.float16)
    C = np.zeros((n, n), np.float32)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    best = None
    for _ in range(repeat + 1):
        D = np.zeros((n, n), np.float32)
        t = time.perf_counter()
        p = ptxc.launch(module, "wmma_gemm", (n // 32, n // 32), (64, 2),
                        [A, np.ascontiguousarray(B.T), C, D, n, n, n, np.float32(1), np.float32(0)],
                        mode="full")
        dt = time.perf_counter() - t
        assert np.allclose(D, ref, rtol=1e-3, atol=1e-2 * np.sqrt(n))
        if best is None or dt < best[0]:
            best = (dt, p.thread_inst_executed)
    return best


if __name__ == "__main__":
    main()
