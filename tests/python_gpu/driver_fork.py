"""A forked child of a driver-API program: as on a GPU (CUDA is not
fork-safe), the child's driver calls return CUDA_ERROR_NOT_INITIALIZED,
while the parent goes on allocating and copying. Prints one OK line each."""
import os

import numpy as np
from cuda.bindings import driver as cu

R = cu.CUresult
assert cu.cuInit(0)[0] == R.CUDA_SUCCESS
err, dev = cu.cuDeviceGet(0)
assert err == R.CUDA_SUCCESS
err, ctx = cu.cuDevicePrimaryCtxRetain(dev)
assert cu.cuCtxSetCurrent(ctx)[0] == R.CUDA_SUCCESS

pid = os.fork()
if pid == 0:                                  # the child: every call refused
    codes = {cu.cuInit(0)[0], cu.cuDeviceGetCount()[0], cu.cuMemAlloc(64)[0],
             cu.cuCtxSynchronize()[0]}
    os._exit(0 if codes == {R.CUDA_ERROR_NOT_INITIALIZED} else 1)
_, status = os.waitpid(pid, 0)
print("OK child" if os.waitstatus_to_exitcode(status) == 0 else f"child status {status}")

host = np.arange(16, dtype=np.float32)
err, d = cu.cuMemAlloc(host.nbytes)
assert err == R.CUDA_SUCCESS
assert cu.cuMemcpyHtoD(d, host.ctypes.data, host.nbytes)[0] == R.CUDA_SUCCESS
back = np.zeros_like(host)
assert cu.cuMemcpyDtoH(back.ctypes.data, d, host.nbytes)[0] == R.CUDA_SUCCESS
assert np.array_equal(back, host)
print("OK parent")
