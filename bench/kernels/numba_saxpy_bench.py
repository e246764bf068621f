"""saxpy with numba-cuda, launched twice; prints the second launch's time
(bench/numba_vs_cudasim.py runs it under ptxc and under the simulator)."""
import sys
import time

import numpy as np
from numba import cuda


@cuda.jit
def saxpy(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 14
    x = cuda.to_device(np.arange(n, dtype=np.float32))
    y = cuda.to_device(np.ones(n, dtype=np.float32))
    blocks = (n + 255) // 256
    saxpy[blocks, 256](np.float32(2.0), x, y)
    cuda.synchronize()
    t0 = time.perf_counter()
    saxpy[blocks, 256](np.float32(2.0), x, y)
    cuda.synchronize()
    dt = time.perf_counter() - t0
    assert np.allclose(y.copy_to_host(), 4 * np.arange(n, dtype=np.float32) + 1)
    print(f"second launch {dt:.6f}")


if __name__ == "__main__":
    main()
