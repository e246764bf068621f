"""The driver API through cuda-bindings: a module from PTX text, a linked
module, globals, launches with kernelParams and with the `extra` buffer,
copies and sets, pointer attributes, occupancy, cuGetProcAddress, events;
and the return codes the CUDA Driver API reference (cuda.h) documents for
bad handles and sizes. Prints one OK line per group."""
import ctypes

import numpy as np
from cuda.bindings import driver as cu

R = cu.CUresult
PTX = b"""
.version 8.0
.target sm_90
.address_size 64
.global .align 4 .u32 counter;
.visible .entry scale(.param .u64 p, .param .u32 n, .param .f32 k)
{
    .reg .b32 %r<6>; .reg .b64 %rd<4>; .reg .f32 %f<3>; .reg .pred %p;
    ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [n]; ld.param.f32 %f1, [k];
    mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x; mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p, %r5, %r1;
    @%p bra DONE;
    mul.wide.u32 %rd2, %r5, 4; add.s64 %rd3, %rd1, %rd2;
    ld.global.f32 %f2, [%rd3]; mul.f32 %f2, %f2, %f1; st.global.f32 [%rd3], %f2;
    atom.global.add.u32 %r2, [counter], 1;
DONE:
    ret;
}
"""


def ok(result, *want):
    err = result[0]
    assert err in (want or (R.CUDA_SUCCESS,)), (err, want)
    return result[1] if len(result) == 2 else result[1:]


def params(*values):
    """kernelParams: an array of pointers to each argument's bytes."""
    keep = [np.array([v], dtype=t) for v, t in values]
    ptrs = np.array([a.ctypes.data for a in keep], dtype=np.uint64)
    return ptrs, keep


def main():
    ok(cu.cuInit(1), R.CUDA_ERROR_INVALID_VALUE)
    ok(cu.cuInit(0))
    dev = ok(cu.cuDeviceGet(0))
    ok(cu.cuDeviceGet(5), R.CUDA_ERROR_INVALID_DEVICE)
    assert ok(cu.cuDeviceGetCount()) == 1
    name = ok(cu.cuDeviceGetName(64, dev))
    major = ok(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
    ctx = ok(cu.cuDevicePrimaryCtxRetain(dev))
    ok(cu.cuCtxSetCurrent(ctx))
    assert int(ok(cu.cuCtxGetCurrent())) == int(ctx)
    ok(cu.cuCtxPopCurrent())
    ok(cu.cuCtxPopCurrent(), R.CUDA_ERROR_INVALID_CONTEXT)       # the stack is empty
    ok(cu.cuCtxPushCurrent(ctx))
    print("OK device", name.split(b"\0")[0].decode(), major)

    mod = ok(cu.cuModuleLoadData(PTX))
    fn = ok(cu.cuModuleGetFunction(mod, b"scale"))
    ok(cu.cuModuleGetFunction(mod, b"nope"), R.CUDA_ERROR_NOT_FOUND)
    ok(cu.cuModuleLoadData(b"this is not an image\0"), R.CUDA_ERROR_INVALID_IMAGE)
    gptr, gsize = ok(cu.cuModuleGetGlobal(mod, b"counter"))
    assert gsize == 4
    ok(cu.cuModuleGetGlobal(mod, b"nope"), R.CUDA_ERROR_NOT_FOUND)
    print("OK module")

    n = 1000
    host = np.arange(n, dtype=np.float32)
    ok(cu.cuMemAlloc(0), R.CUDA_ERROR_INVALID_VALUE)
    d = ok(cu.cuMemAlloc(host.nbytes))
    ok(cu.cuMemcpyHtoD(d, host.ctypes.data, host.nbytes))
    ok(cu.cuMemcpyHtoD(d, host.ctypes.data, host.nbytes + 4), R.CUDA_ERROR_INVALID_VALUE)
    ok(cu.cuMemFree(cu.CUdeviceptr(int(d) + 4)), R.CUDA_ERROR_INVALID_VALUE)
    base, size = ok(cu.cuMemGetAddressRange(cu.CUdeviceptr(int(d) + 8)))
    assert int(base) == int(d) and size == host.nbytes
    mtype = ok(cu.cuPointerGetAttribute(cu.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d))
    assert mtype == cu.CUmemorytype.CU_MEMORYTYPE_DEVICE, mtype
    print("OK memory")

    ptrs, keep = params((int(d), np.uint64), (n, np.uint32), (2.0, np.float32))
    ok(cu.cuLaunchKernel(fn, 4, 1, 1, 256, 1, 1, 0, 0, ptrs.ctypes.data, 0))
    ok(cu.cuLaunchKernel(fn, 0, 1, 1, 256, 1, 1, 0, 0, ptrs.ctypes.data, 0), R.CUDA_ERROR_INVALID_VALUE)
    ok(cu.cuLaunchKernel(fn, 1, 1, 1, 2048, 1, 1, 0, 0, ptrs.ctypes.data, 0), R.CUDA_ERROR_INVALID_VALUE)
    buf = np.zeros(24, dtype=np.uint8)                 # the `extra` form: the packed .param bytes
    buf[0:8] = np.frombuffer(np.uint64(int(d)).tobytes(), np.uint8)
    buf[8:12] = np.frombuffer(np.uint32(n).tobytes(), np.uint8)
    buf[12:16] = np.frombuffer(np.float32(0.5).tobytes(), np.uint8)
    size_t = ctypes.c_size_t(16)
    extra = (ctypes.c_void_p * 5)(1, buf.ctypes.data, 2, ctypes.addressof(size_t), 0)
    ok(cu.cuLaunchKernel(fn, 4, 1, 1, 256, 1, 1, 0, 0, 0, ctypes.addressof(extra)))
    ok(cu.cuCtxSynchronize())
    out = np.empty_like(host)
    ok(cu.cuMemcpyDtoH(out.ctypes.data, d, out.nbytes))
    np.testing.assert_allclose(out, host)               # x 2, then x 0.5
    count = np.zeros(1, dtype=np.uint32)
    ok(cu.cuMemcpyDtoH(count.ctypes.data, gptr, 4))
    assert count[0] == 2 * n, count
    print("OK launch")

    nthreads = ok(cu.cuFuncGetAttribute(cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn))
    blocks = ok(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, 256, 0))
    min_grid, block = ok(cu.cuOccupancyMaxPotentialBlockSize(fn, 0, 0, 0))
    assert nthreads == 1024 and blocks >= 1 and block >= 32 and min_grid >= 1
    print("OK attributes", blocks, block)

    ok(cu.cuMemsetD32(d, 0x3F800000, n))                 # 1.0f
    ok(cu.cuMemcpyDtoH(out.ctypes.data, d, out.nbytes))
    assert (out == 1.0).all()
    ok(cu.cuMemsetD16(cu.CUdeviceptr(int(d) + 1), 0, 2), R.CUDA_ERROR_INVALID_VALUE)   # misaligned
    print("OK sets")

    rows, cols = 6, 10                                  # a pitched 2-D round trip
    mat = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    pd, pitch = ok(cu.cuMemAllocPitch(cols * 4, rows, 4))
    assert pitch >= cols * 4
    up = cu.CUDA_MEMCPY2D()
    up.srcMemoryType, up.srcHost, up.srcPitch = cu.CUmemorytype.CU_MEMORYTYPE_HOST, mat.ctypes.data, cols * 4
    up.dstMemoryType, up.dstDevice, up.dstPitch = cu.CUmemorytype.CU_MEMORYTYPE_DEVICE, pd, pitch
    up.WidthInBytes, up.Height = cols * 4, rows
    ok(cu.cuMemcpy2D(up))
    back = np.zeros_like(mat)
    down = cu.CUDA_MEMCPY3D()
    down.srcMemoryType, down.srcDevice, down.srcPitch, down.srcHeight = \
        cu.CUmemorytype.CU_MEMORYTYPE_DEVICE, pd, pitch, rows
    down.dstMemoryType, down.dstHost, down.dstPitch, down.dstHeight = \
        cu.CUmemorytype.CU_MEMORYTYPE_HOST, back.ctypes.data, cols * 4, rows
    down.WidthInBytes, down.Height, down.Depth = cols * 4, rows, 1
    ok(cu.cuMemcpy3D(down))
    np.testing.assert_array_equal(back, mat)
    up.Height = rows + 50                               # past the allocation
    ok(cu.cuMemcpy2D(up), R.CUDA_ERROR_INVALID_VALUE)
    ok(cu.cuMemFree(pd))
    print("OK copies 2D 3D")

    s = ok(cu.cuStreamCreate(0))
    e1, e2 = ok(cu.cuEventCreate(0)), ok(cu.cuEventCreate(0))
    ok(cu.cuEventElapsedTime(e1, e2), R.CUDA_ERROR_INVALID_HANDLE)   # not recorded
    ok(cu.cuEventRecord(e1, s))
    ok(cu.cuLaunchKernel(fn, 4, 1, 1, 256, 1, 1, 0, s, ptrs.ctypes.data, 0))
    ok(cu.cuEventRecord(e2, s))
    ok(cu.cuEventSynchronize(e2))
    assert ok(cu.cuEventElapsedTime(e1, e2)) >= 0.0
    ok(cu.cuStreamSynchronize(s))
    ok(cu.cuStreamDestroy(s))
    print("OK streams")

    link = ok(cu.cuLinkCreate(0, [], []))
    ok(cu.cuLinkAddData(link, cu.CUjitInputType.CU_JIT_INPUT_PTX, PTX, len(PTX), b"scale.ptx", 0, [], []))
    image, size = ok(cu.cuLinkComplete(link))
    lmod = ok(cu.cuModuleLoadData(image))
    ok(cu.cuModuleGetFunction(lmod, b"scale"))
    ok(cu.cuLinkDestroy(link))
    print("OK link")

    fn_v2, status = ok(cu.cuGetProcAddress(b"cuMemAlloc", 12000, 0))
    direct, _ = ok(cu.cuGetProcAddress(b"cuMemAlloc_v2", 12000, 0))
    assert int(fn_v2) == int(direct) and status == 0
    ok(cu.cuGetProcAddress(b"cuNoSuchCall", 12000, 0), R.CUDA_ERROR_NOT_FOUND)
    ok(cu.cuGetProcAddress(b"cuMemAlloc", 1000, 0), R.CUDA_ERROR_NOT_FOUND)   # version too low
    assert ok(cu.cuGetErrorName(R.CUDA_ERROR_INVALID_VALUE)) == b"CUDA_ERROR_INVALID_VALUE"
    print("OK entry points")

    ok(cu.cuMemFree(d))
    ok(cu.cuModuleUnload(mod))
    ok(cu.cuModuleGetFunction(mod, b"scale"), R.CUDA_ERROR_INVALID_HANDLE)   # unloaded
    ok(cu.cuMemAddressReserve(1 << 20, 0, 0, 0), R.CUDA_ERROR_NOT_SUPPORTED)  # ptxc lacks it
    print("OK done")


if __name__ == "__main__":
    main()
