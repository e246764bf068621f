"""cp.async-heavy GEMM vs the same GEMM with plain loads, full mode, same process.

bench/kernels/async_mm.cu has one tiled SGEMM twice: mm_async copies the
tiles to shared memory with cp.async (16 bytes a thread, as cuda-samples'
globalToShmemAsyncCopy does through cuda::memcpy_async) and mm_plain with
float4 loads and stores. Both execute almost the same thread instructions,
so their rates should be close: the ratio plain/async time is printed (1.0:
cp.async costs what a load + store costs). Warm JIT (the first run of each
compiles); best of N; results checked against numpy.

    python bench/async_copy.py [--n 512] [--repeat 3]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import ptxc

PTX = Path(__file__).parent / "kernels" / "async_mm.ptx"


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
    for k, (dt, ti) in best.items():
        print(f"{k:9s} {dt:7.3f} s  {ti:>12d} thread instructions  {ti / dt:9.3g} /s")
    print(f"async / plain time: {best['mm_async'][0] / best['mm_plain'][0]:.2f}")


if __name__ == "__main__":
    main()
