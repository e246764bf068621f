"""A warp reduction with shfl_down_sync; lane 0 of each warp adds its sum atomically."""
import numpy as np
from numba import cuda, int32


@cuda.jit
def warp_sum(x, total):
    i = cuda.grid(1)
    v = x[i] if i < x.size else int32(0)
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(total, 0, v)


def main():
    x = np.arange(1000, dtype=np.int32)
    total = cuda.to_device(np.zeros(1, dtype=np.int32))
    warp_sum[4, 256](cuda.to_device(x), total)
    assert total.copy_to_host()[0] == x.sum()
    print("OK shuffle", x.sum())


if __name__ == "__main__":
    main()
