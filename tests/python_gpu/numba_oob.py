"""An out-of-bounds write: the last block writes past the end of `out`
(the bound check uses n + 32). `ptxc check` reports it at this file's line."""
import numpy as np
from numba import cuda


@cuda.jit(lineinfo=True)
def fill(out, n):
    i = cuda.grid(1)
    if i < n + 32:
        out[i] = i


def main():
    n = 1000
    d = cuda.device_array(n, dtype=np.int32)
    fill[4, 256](d, n)
    cuda.synchronize()
    print("after the launch")


if __name__ == "__main__":
    main()
