"""Constant memory (cuda.const.array_like) and a per-thread local array."""
import numpy as np
from numba import cuda, int64

WEIGHTS = np.array([1, 2, 3, 4], dtype=np.int64)


@cuda.jit
def weighted(x, out):
    w = cuda.const.array_like(WEIGHTS)
    acc = cuda.local.array(4, int64)
    i = cuda.grid(1)
    if i < x.size:
        for k in range(4):
            acc[k] = w[k] * (x[i] + k)
        out[i] = acc[0] + acc[1] + acc[2] + acc[3]


def main():
    x = np.arange(500, dtype=np.int64)
    out = cuda.device_array_like(x)
    weighted[2, 256](cuda.to_device(x), out)
    want = sum(WEIGHTS[k] * (x + k) for k in range(4))
    np.testing.assert_array_equal(out.copy_to_host(), want)
    print("OK const and local")


if __name__ == "__main__":
    main()
