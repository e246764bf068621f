"""A Triton row softmax (no PyTorch): reductions across the CTA (tl.max,
tl.sum: Triton's shuffles and shared memory) and tl.exp, on device memory
from cuda-bindings. Checked against numpy."""
import numpy as np
import triton
import triton.language as tl
from cuda.bindings import driver as cu


@triton.jit
def softmax_rows(x_ptr, out_ptr, ncols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < ncols
    x = tl.load(x_ptr + row * ncols + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * ncols + cols, e / tl.sum(e, axis=0), mask=mask)


class DeviceArray:
    """A float32 buffer in device memory: what Triton needs of a tensor."""
    dtype = "float32"

    def __init__(self, host):
        self.shape = host.shape
        st, self.ptr = cu.cuMemAlloc(host.nbytes)
        assert st == 0, st
        assert cu.cuMemcpyHtoD(self.ptr, host.ctypes.data, host.nbytes)[0] == 0

    def data_ptr(self):
        return int(self.ptr)

    def get(self):
        out = np.empty(self.shape, dtype=np.float32)
        assert cu.cuMemcpyDtoH(out.ctypes.data, self.ptr, out.nbytes)[0] == 0
        return out


def main():
    assert cu.cuInit(0)[0] == 0
    st, dev = cu.cuDeviceGet(0)
    st, ctx = cu.cuDevicePrimaryCtxRetain(dev)
    assert cu.cuCtxSetCurrent(ctx)[0] == 0
    rows, cols = 8, 300
    x = np.random.default_rng(1).standard_normal((rows, cols)).astype(np.float32)
    dx, dout = DeviceArray(x), DeviceArray(np.zeros_like(x))
    softmax_rows[(rows,)](dx, dout, cols, BLOCK=512)
    assert cu.cuCtxSynchronize()[0] == 0
    out = dout.get()
    ref = np.exp(x - x.max(axis=1, keepdims=True))
    ref /= ref.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-7)
    print("OK triton softmax", float(out.sum()))


if __name__ == "__main__":
    main()
