"""A tiled matrix product with shared memory tiles (16 x 16 blocks)."""
import numpy as np
from numba import cuda, float64

TILE = 16


@cuda.jit
def matmul(a, b, c):
    sa = cuda.shared.array((TILE, TILE), float64)
    sb = cuda.shared.array((TILE, TILE), float64)
    x, y = cuda.grid(2)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    acc = 0.0
    for t in range((a.shape[1] + TILE - 1) // TILE):
        sa[ty, tx] = a[y, t * TILE + tx] if y < a.shape[0] and t * TILE + tx < a.shape[1] else 0.0
        sb[ty, tx] = b[t * TILE + ty, x] if x < b.shape[1] and t * TILE + ty < b.shape[0] else 0.0
        cuda.syncthreads()
        for k in range(TILE):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    if y < c.shape[0] and x < c.shape[1]:
        c[y, x] = acc


def main():
    rng = np.random.default_rng(0)
    a, b = rng.random((40, 30)), rng.random((30, 50))
    c = cuda.device_array((40, 50))
    matmul[(4, 3), (TILE, TILE)](cuda.to_device(a), cuda.to_device(b), c)
    np.testing.assert_allclose(c.copy_to_host(), a @ b, rtol=1e-12)
    print("OK matmul")


if __name__ == "__main__":
    main()
