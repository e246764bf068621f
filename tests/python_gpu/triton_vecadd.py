"""A plain Triton program (no PyTorch): a @triton.jit vector add launched
on device buffers that cuda-bindings allocated (Triton takes any object
with data_ptr() and dtype as a pointer). Under ptxc run, Triton's ptxas
is ptxc's wrapper (ptxc/runtime/ptxas_keep.py), which keeps the PTX of
each cubin, and the module loads that PTX (or the PTX next to the cubin in
Triton's cache, cubin_ptx.py). Checked against numpy."""
import numpy as np
import triton
import triton.language as tl
from cuda.bindings import driver as cu


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


class DeviceArray:
    """A float32 buffer in device memory: what Triton needs of a tensor."""
    dtype = "float32"

    def __init__(self, host):
        self.nbytes = host.nbytes
        st, self.ptr = cu.cuMemAlloc(host.nbytes)
        assert st == 0, st
        assert cu.cuMemcpyHtoD(self.ptr, host.ctypes.data, host.nbytes)[0] == 0

    def data_ptr(self):
        return int(self.ptr)

    def get(self):
        out = np.empty(self.nbytes // 4, dtype=np.float32)
        assert cu.cuMemcpyDtoH(out.ctypes.data, self.ptr, self.nbytes)[0] == 0
        return out


N = 3000
BLOCK_SIZE = 1024


def inputs():
    """x and y of the launch (the test profiles the same launch with ptxc opt)."""
    return (np.random.default_rng(0).random(N, dtype=np.float32), np.arange(N, dtype=np.float32))


def main():
    assert cu.cuInit(0)[0] == 0
    st, dev = cu.cuDeviceGet(0)
    st, ctx = cu.cuDevicePrimaryCtxRetain(dev)
    assert cu.cuCtxSetCurrent(ctx)[0] == 0
    x, y = inputs()
    dx, dy, dout = DeviceArray(x), DeviceArray(y), DeviceArray(np.zeros(N, np.float32))
    grid = lambda meta: (triton.cdiv(N, meta["BLOCK_SIZE"]),)
    add_kernel[grid](dx, dy, dout, N, BLOCK_SIZE=BLOCK_SIZE)
    assert cu.cuCtxSynchronize()[0] == 0
    out = dout.get()
    np.testing.assert_array_equal(out, x + y)
    print("OK triton", out[:3])


if __name__ == "__main__":
    main()
