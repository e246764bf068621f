"""CuPy RawKernel: y = a * x + y over float32, the CUDA C source compiled by NVRTC."""
import cupy as cp
import numpy as np

N = 1000
GRID, BLOCK = 4, 256
SOURCE = r'''
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
'''


def inputs():
    x = np.linspace(-1, 1, N, dtype=np.float32)
    y = np.arange(N, dtype=np.float32)
    return [np.float32(2.5), x, y, np.int32(N)]


def main():
    a, x, y, n = inputs()
    kernel = cp.RawKernel(SOURCE, "saxpy")
    dx, dy = cp.asarray(x), cp.asarray(y)
    kernel((GRID,), (BLOCK,), (a, dx, dy, n))
    out = dy.get()
    np.testing.assert_allclose(out, a * x + y, rtol=1e-6)
    print("OK rawkernel", out[:3])


if __name__ == "__main__":
    main()
