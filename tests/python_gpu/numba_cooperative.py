"""A cooperative kernel: two phases separated by a grid-wide sync
(cuda.cg.this_grid().sync(), launched as a cooperative launch)."""
import numpy as np
from numba import cuda


@cuda.jit
def two_phase(x, out):
    g = cuda.cg.this_grid()
    i = cuda.grid(1)
    x[i] = i * 2
    g.sync()                       # every block has written x
    out[i] = x[(i + 1) % x.size]


def main():
    n = 4 * 128
    x = cuda.device_array(n, dtype=np.int64)
    out = cuda.device_array(n, dtype=np.int64)
    two_phase[4, 128](x, out)
    np.testing.assert_array_equal(out.copy_to_host(), ((np.arange(n) + 1) % n) * 2)
    print("OK cooperative")


if __name__ == "__main__":
    main()
