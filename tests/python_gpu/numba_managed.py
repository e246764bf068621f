"""Managed memory (cuda.managed_array): written by the host, updated by a
kernel, read by the host without copies."""
import numpy as np
from numba import cuda


@cuda.jit
def increment(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


def main():
    m = cuda.managed_array(300, dtype=np.int32)
    m[:] = np.arange(300)
    increment[2, 256](m)
    cuda.synchronize()
    np.testing.assert_array_equal(np.asarray(m), np.arange(300) + 1)
    print("OK managed")


if __name__ == "__main__":
    main()
