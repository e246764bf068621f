"""cuda.core compiling to a cubin (SASS for the device, with a template
instantiated by a name expression): under ptxc run, ptxc's NVRTC keeps the
PTX of the same program and the module loads it. Checked against numpy."""
import numpy as np
from cuda.bindings import driver as cu
from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch

SOURCE = r"""
template <typename T> __global__ void scale(T *x, T k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= k;
}
"""


def main():
    dev = Device()
    dev.set_current()
    stream = dev.create_stream()
    arch = "".join(str(v) for v in dev.compute_capability)
    prog = Program(SOURCE, code_type="c++", options=ProgramOptions(arch=f"sm_{arch}"))
    kernel = prog.compile("cubin", name_expressions=("scale<float>",)).get_kernel("scale<float>")
    x = np.arange(100, dtype=np.float32)
    d = dev.allocate(x.nbytes, stream=stream)
    assert cu.cuMemcpyHtoD(d.handle, x.ctypes.data, x.nbytes)[0] == 0
    launch(stream, LaunchConfig(grid=1, block=128), kernel, d, np.float32(3), np.int32(100))
    stream.sync()
    out = np.empty_like(x)
    assert cu.cuMemcpyDtoH(out.ctypes.data, d.handle, out.nbytes)[0] == 0
    np.testing.assert_allclose(out, 3 * x)
    print("OK cubin", out[:3])


if __name__ == "__main__":
    main()
