"""A device function and math (numba's libdevice): exp, sqrt, sin."""
import math

import numpy as np
from numba import cuda


@cuda.jit(device=True)
def smooth(v):
    return math.sqrt(v * v + 1.0) * math.exp(-v) + math.sin(v)


@cuda.jit
def apply(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = smooth(x[i])


def main():
    x = np.linspace(-2, 2, 777)
    out = cuda.device_array_like(x)
    apply[4, 256](cuda.to_device(x), out)
    np.testing.assert_allclose(out.copy_to_host(), np.sqrt(x * x + 1) * np.exp(-x) + np.sin(x),
                               rtol=1e-12)
    print("OK device functions")


if __name__ == "__main__":
    main()
