"""A 2-D kernel: the transpose of a matrix, with cuda.grid(2)."""
import numpy as np
from numba import cuda

ROWS, COLS = 50, 70
GRID, BLOCK = (5, 4), (16, 16)     # (x over columns, y over rows)


@cuda.jit
def transpose(a, out):
    col, row = cuda.grid(2)
    if row < a.shape[0] and col < a.shape[1]:
        out[col, row] = a[row, col]


def inputs():
    a = np.arange(ROWS * COLS, dtype=np.float64).reshape(ROWS, COLS)
    return [a, np.zeros((COLS, ROWS), dtype=np.float64)]


def main():
    a, out = inputs()
    d_out = cuda.to_device(out)
    transpose[GRID, BLOCK](cuda.to_device(a), d_out)
    np.testing.assert_array_equal(d_out.copy_to_host(), a.T)
    print("OK transpose", a.shape)


if __name__ == "__main__":
    main()
