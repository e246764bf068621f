"""Elementwise c = a + b over device arrays (to_device / copy_to_host round trip)."""
import numpy as np
from numba import cuda

N = 1000
GRID, BLOCK = 4, 256


@cuda.jit
def vecadd(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def inputs():
    a = np.arange(N, dtype=np.float32)
    b = np.linspace(0, 1, N, dtype=np.float32)
    return [a, b, np.zeros(N, dtype=np.float32)]


def main():
    a, b, c = inputs()
    da, db, dc = cuda.to_device(a), cuda.to_device(b), cuda.device_array_like(c)
    vecadd[GRID, BLOCK](da, db, dc)
    out = dc.copy_to_host()
    np.testing.assert_allclose(out, a + b)
    back = da.copy_to_host()                 # the device copy is the same bytes
    np.testing.assert_array_equal(back, a)
    print("OK vecadd", out[:3])


if __name__ == "__main__":
    main()
