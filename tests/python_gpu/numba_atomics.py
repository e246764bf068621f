"""A histogram with cuda.atomic.add (many threads hit the same bins)."""
import numpy as np
from numba import cuda

N, BINS = 5000, 16
GRID, BLOCK = 20, 256


@cuda.jit
def histogram(x, bins):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(bins, x[i] % bins.size, 1)


def inputs():
    x = (np.arange(N, dtype=np.int32) * 7919) % 1000
    return [x, np.zeros(BINS, dtype=np.int32)]


def main():
    x, bins = inputs()
    db = cuda.to_device(bins)
    histogram[GRID, BLOCK](cuda.to_device(x), db)
    got = db.copy_to_host()
    np.testing.assert_array_equal(got, np.bincount(x % BINS, minlength=BINS))
    print("OK atomics", got.sum())


if __name__ == "__main__":
    main()
