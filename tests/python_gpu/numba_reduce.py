"""Block sums with shared memory and syncthreads (a tree reduction per block)."""
import numpy as np
from numba import cuda, float32

N = 4096
GRID, BLOCK = 16, 256


@cuda.jit
def block_sum(x, partial):
    tmp = cuda.shared.array(256, float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    tmp[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if t < s:
            tmp[t] += tmp[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = tmp[0]


def inputs():
    x = (np.arange(N, dtype=np.float32) % 7) - 3
    return [x, np.zeros(GRID, dtype=np.float32)]


def main():
    x, partial = inputs()
    dp = cuda.to_device(partial)
    block_sum[GRID, BLOCK](cuda.to_device(x), dp)
    got = dp.copy_to_host()
    np.testing.assert_allclose(got, x.reshape(GRID, BLOCK).sum(axis=1))
    print("OK reduce", got.sum())


if __name__ == "__main__":
    main()
