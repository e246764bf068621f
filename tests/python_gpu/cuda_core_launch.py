"""cuda.core: compile CUDA C++ with NVRTC to PTX, load it, launch it on a
stream (cuda.core's Program / ObjectCode / LaunchConfig / launch), copy with
cuda-bindings' driver calls, check against numpy."""
import numpy as np
from cuda.bindings import driver as cu
from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch

SOURCE = r"""
extern "C" __global__ void saxpy(float a, const float *x, float *y, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def check(result):
    assert result[0] == cu.CUresult.CUDA_SUCCESS, result


def main():
    dev = Device()
    dev.set_current()
    stream = dev.create_stream()
    arch = "".join(str(v) for v in dev.compute_capability)
    prog = Program(SOURCE, code_type="c++", options=ProgramOptions(arch=f"compute_{arch}"))
    kernel = prog.compile("ptx").get_kernel("saxpy")
    n = 1000
    x, y = np.arange(n, dtype=np.float32), np.ones(n, dtype=np.float32)
    dx, dy = dev.allocate(x.nbytes, stream=stream), dev.allocate(y.nbytes, stream=stream)
    check(cu.cuMemcpyHtoDAsync(dx.handle, x.ctypes.data, x.nbytes, stream.handle))
    check(cu.cuMemcpyHtoDAsync(dy.handle, y.ctypes.data, y.nbytes, stream.handle))
    launch(stream, LaunchConfig(grid=4, block=256), kernel, np.float32(2.0), dx, dy, np.uint64(n))
    out = np.empty_like(y)
    check(cu.cuMemcpyDtoHAsync(out.ctypes.data, dy.handle, out.nbytes, stream.handle))
    stream.sync()
    np.testing.assert_allclose(out, 2 * x + 1)
    print("OK cuda.core", out[:3])


if __name__ == "__main__":
    main()
