"""Dynamic shared memory (cuda.shared.array(0, ...), size given at launch):
each block reverses its chunk through shared memory."""
import numpy as np
from numba import cuda, float32


@cuda.jit
def reverse_blocks(x):
    buf = cuda.shared.array(0, dtype=float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = x[i]
    cuda.syncthreads()
    x[i] = buf[cuda.blockDim.x - 1 - t]


def main():
    block, grid = 128, 6
    x = np.arange(block * grid, dtype=np.float32)
    d = cuda.to_device(x)
    reverse_blocks[grid, block, 0, block * 4](d)
    np.testing.assert_array_equal(d.copy_to_host(), x.reshape(grid, block)[:, ::-1].ravel())
    print("OK dynamic shared")


if __name__ == "__main__":
    main()
