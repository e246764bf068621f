/* Device, host and managed memory, copies and sets of the driver API.
 *
 * Follows the CUDA Driver API reference, "Memory Management" and "Unified
 * Addressing". Allocations are the runtime half's (memory.c): one table,
 * one memfd per allocation mapped at the same address in the application
 * and in kernels, so a CUdeviceptr is a cudaMalloc pointer and the two
 * APIs mix. Copies and sets are memcpy/memset after a range check (a bad
 * pointer or range is CUDA_ERROR_INVALID_VALUE); the blocking ones first
 * synchronise (device printf output, device faults: devout.c). A 2D/3D
 * copy may have a CUDA array (drv_texture.c) on either side.
 */
#define _GNU_SOURCE
#include <string.h>

#include "driver.h"

#define MEM_ATTACH_GLOBAL 1
#define MEM_ATTACH_HOST 2
#define HOSTALLOC_FLAGS 0x7u           /* PORTABLE | DEVICEMAP | WRITECOMBINED */

void shim_note_write(const void *dst, const void *src, size_t width, size_t rows, size_t dpitch,
                     size_t spitch);

static void *ptr(CUdeviceptr d) { return (void *)(uintptr_t)d; }

/* ------------------------------------------------------------ allocation */
static CUresult allocate(CUdeviceptr *d, size_t size, int kind, unsigned flags, const char *call)
{
    CUresult st = drv_ctx_check();
    if (st)
        return st;
    if (!d || !size)
        return CUDA_ERROR_INVALID_VALUE;
    void *p = NULL;
    st = drv_from_runtime(shim_alloc(&p, size, kind, flags, call));
    if (st)
        return st;
    *d = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *d, size_t size)
{
    DRV_CHILD_GUARD();
    return allocate(d, size, KIND_DEVICE, 0, "cuMemAlloc");
}

EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *d, size_t *pitch, size_t width, size_t height,
                                   unsigned elem)
{
    DRV_CHILD_GUARD();
    if (!pitch || !width || !height || (elem != 4 && elem != 8 && elem != 16))
        return CUDA_ERROR_INVALID_VALUE;
    size_t p = (width + 511) / 512 * 512;
    CUresult st = allocate(d, p * height, KIND_DEVICE, 0, "cuMemAllocPitch");
    if (!st)
        *pitch = p;
    return st;
}

EXPORT CUresult cuMemAllocManaged(CUdeviceptr *d, size_t size, unsigned flags)
{
    DRV_CHILD_GUARD();
    if (flags != MEM_ATTACH_GLOBAL && flags != MEM_ATTACH_HOST)
        return CUDA_ERROR_INVALID_VALUE;
    return allocate(d, size, KIND_MANAGED, flags, "cuMemAllocManaged");
}

EXPORT CUresult cuMemHostAlloc(void **p, size_t size, unsigned flags)
{
    DRV_CHILD_GUARD();
    if (!p || (flags & ~HOSTALLOC_FLAGS))
        return CUDA_ERROR_INVALID_VALUE;
    CUdeviceptr d = 0;
    CUresult st = allocate(&d, size, KIND_HOST, flags, "cuMemHostAlloc");
    if (!st)
        *p = ptr(d);
    return st;
}

EXPORT CUresult cuMemAllocHost_v2(void **p, size_t size) { DRV_CHILD_GUARD(); return cuMemHostAlloc(p, size, 0); }

EXPORT CUresult cuMemFree_v2(CUdeviceptr d)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (st)
        return st;
    uint64_t base, size;
    int kind;
    unsigned flags;
    if (!shim_range(ptr(d), &base, &size, &kind, &flags) || base != d || kind == KIND_HOST ||
        kind == KIND_MODULE)
        return CUDA_ERROR_INVALID_VALUE;
    return drv_from_runtime(shim_release(ptr(d), 0));
}

EXPORT CUresult cuMemFreeHost(void *p)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (st)
        return st;
    uint64_t base, size;
    int kind;
    unsigned flags;
    if (!shim_range(p, &base, &size, &kind, &flags) || base != (uintptr_t)p || kind != KIND_HOST)
        return CUDA_ERROR_INVALID_VALUE;
    return drv_from_runtime(shim_release(p, 1));
}

EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned flags)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (st)
        return st;
    uint64_t base, size;
    int kind;
    unsigned f;
    if (!d || flags || !shim_range(p, &base, &size, &kind, &f) || kind != KIND_HOST)
        return CUDA_ERROR_INVALID_VALUE;
    *d = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemHostGetFlags(unsigned *flags, void *p)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (st)
        return st;
    uint64_t base, size;
    int kind;
    unsigned f;
    if (!flags || !shim_range(p, &base, &size, &kind, &f) || kind != KIND_HOST)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = f;
    return CUDA_SUCCESS;
}

/* page-locking means nothing here: registered memory stays host memory */
EXPORT CUresult cuMemHostRegister_v2(void *p, size_t size, unsigned flags)
{
    DRV_CHILD_GUARD();
    (void)flags;
    CUresult st = drv_ctx_check();
    return st ? st : !p || !size ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
ALIAS(cuMemHostRegister, cuMemHostRegister_v2);
EXPORT CUresult cuMemHostUnregister(void *p)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    return st ? st : !p ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (st)
        return st;
    if (!free_bytes || !total)
        return CUDA_ERROR_INVALID_VALUE;
    return RT(cudaMemGetInfo(free_bytes, total));
}

EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr d)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (st)
        return st;
    uint64_t b, n;
    int kind;
    unsigned flags;
    if (!shim_range(ptr(d), &b, &n, &kind, &flags))
        return CUDA_ERROR_NOT_FOUND;
    if (base)
        *base = b;
    if (size)
        *size = n;
    return CUDA_SUCCESS;
}

/* managed memory is host memory here: hints and prefetches have nothing to do */
EXPORT CUresult cuMemPrefetchAsync_v2(void) { DRV_CHILD_GUARD(); return drv_ctx_check(); }
EXPORT CUresult cuMemPrefetchAsync(void) { DRV_CHILD_GUARD(); return drv_ctx_check(); }
EXPORT CUresult cuMemAdvise_v2(void) { DRV_CHILD_GUARD(); return drv_ctx_check(); }
EXPORT CUresult cuMemAdvise(void) { DRV_CHILD_GUARD(); return drv_ctx_check(); }
ALIAS(cuMemPrefetchAsync_ptsz, cuMemPrefetchAsync);
ALIAS(cuMemPrefetchAsync_v2_ptsz, cuMemPrefetchAsync_v2);

/* ---------------------------------------------------------------- copies */
/* an asynchronous operation on s: the stream must be valid and not capturing */
static CUresult async_ok(CUstream s)
{
    CUresult st = drv_ctx_check();
    if (st)
        return st;
    if (!stream_valid(s))
        return CUDA_ERROR_INVALID_HANDLE;
    int c = capture_state(s);
    return c > 0 ? drv_from_runtime(c) : c < 0 ? drv_unsupported("driver API copy in a stream capture")
                                               : CUDA_SUCCESS;
}

/* a blocking operation: synchronise first (the sticky device error, if any) */
static CUresult blocking_ok(void)
{
    CUresult st = drv_ctx_check();
    return st ? st : drv_from_runtime(device_sync());
}

static CUresult copy(void *dst, const void *src, size_t n, int kind)
{
    return drv_from_runtime(shim_copy(dst, src, n, kind));
}

EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    DRV_CHILD_GUARD();
    CUresult st = blocking_ok();
    return st ? st : copy(ptr(dst), ptr(src), n, cudaMemcpyDefault);
}
EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    DRV_CHILD_GUARD();
    CUresult st = blocking_ok();
    return st ? st : copy(ptr(dst), src, n, cudaMemcpyHostToDevice);
}
EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    DRV_CHILD_GUARD();
    CUresult st = blocking_ok();
    return st ? st : copy(dst, ptr(src), n, cudaMemcpyDeviceToHost);
}
EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    DRV_CHILD_GUARD();
    CUresult st = blocking_ok();
    return st ? st : copy(ptr(dst), ptr(src), n, cudaMemcpyDeviceToDevice);
}
EXPORT CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n)
{
    DRV_CHILD_GUARD();
    (void)dc; (void)sc;
    return cuMemcpyDtoD_v2(dst, src, n);
}

EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    DRV_CHILD_GUARD();
    CUresult st = async_ok(s);
    return st ? st : copy(ptr(dst), ptr(src), n, cudaMemcpyDefault);
}
EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    DRV_CHILD_GUARD();
    CUresult st = async_ok(s);
    return st ? st : copy(ptr(dst), src, n, cudaMemcpyHostToDevice);
}
EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    DRV_CHILD_GUARD();
    CUresult st = async_ok(s);
    return st ? st : copy(dst, ptr(src), n, cudaMemcpyDeviceToHost);
}
EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    DRV_CHILD_GUARD();
    CUresult st = async_ok(s);
    return st ? st : copy(ptr(dst), ptr(src), n, cudaMemcpyDeviceToDevice);
}
EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc,
                                  size_t n, CUstream s)
{
    DRV_CHILD_GUARD();
    (void)dc; (void)sc;
    return cuMemcpyDtoDAsync_v2(dst, src, n, s);
}

/* one side of a 2D/3D copy: its first byte, or NULL */
static char *side(int type, const void *host, CUdeviceptr dev, size_t x, size_t y, size_t z,
                  size_t pitch, size_t height)
{
    const char *base = type == CU_MEMORYTYPE_HOST ? host
                     : type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED ? ptr(dev)
                     : NULL;
    return base ? (char *)base + x + pitch * (y + height * z) : NULL;
}

static int kind_of(int type) { return type == CU_MEMORYTYPE_HOST ? 0 : 1; }

static CUresult copy3d(const CUDA_MEMCPY3D *c)
{
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    if (c->srcMemoryType == CU_MEMORYTYPE_ARRAY || c->dstMemoryType == CU_MEMORYTYPE_ARRAY)
        return drv_array_copy3d(c);              /* drv_texture.c */
    size_t sh = c->srcHeight ? c->srcHeight : c->Height, dh = c->dstHeight ? c->dstHeight : c->Height;
    char *src = side(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes, c->srcY, c->srcZ,
                     c->srcPitch, sh);
    char *dst = side(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes, c->dstY, c->dstZ,
                     c->dstPitch, dh);
    if (!src || !dst)
        return CUDA_ERROR_INVALID_VALUE;
    int kind = kind_of(c->dstMemoryType) | kind_of(c->srcMemoryType) << 1;   /* cudaMemcpyKind */
    if (c->srcMemoryType == CU_MEMORYTYPE_UNIFIED || c->dstMemoryType == CU_MEMORYTYPE_UNIFIED)
        kind = cudaMemcpyDefault;                /* either side may be host memory */
    size_t spitch = c->srcPitch ? c->srcPitch : c->WidthInBytes;
    size_t dpitch = c->dstPitch ? c->dstPitch : c->WidthInBytes;
    CUresult st = CUDA_SUCCESS;
    for (size_t z = 0; z < (c->Depth ? c->Depth : 1) && !st; z++)
        st = drv_from_runtime(shim_copy2d(dst + z * dpitch * dh, dpitch, src + z * spitch * sh,
                                          spitch, c->WidthInBytes, c->Height, kind));
    return st;
}

static CUresult copy2d(const CUDA_MEMCPY2D *c)
{
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_MEMCPY3D d;
    memset(&d, 0, sizeof d);
    d.srcXInBytes = c->srcXInBytes; d.srcY = c->srcY; d.srcMemoryType = c->srcMemoryType;
    d.srcHost = c->srcHost; d.srcDevice = c->srcDevice; d.srcArray = c->srcArray;
    d.srcPitch = c->srcPitch;
    d.dstXInBytes = c->dstXInBytes; d.dstY = c->dstY; d.dstMemoryType = c->dstMemoryType;
    d.dstHost = c->dstHost; d.dstDevice = c->dstDevice; d.dstArray = c->dstArray;
    d.dstPitch = c->dstPitch;
    d.WidthInBytes = c->WidthInBytes; d.Height = c->Height; d.Depth = 1;
    return copy3d(&d);
}

EXPORT CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *c)
{
    DRV_CHILD_GUARD();
    CUresult st = blocking_ok();
    return st ? st : copy2d(c);
}
ALIAS(cuMemcpy2DUnaligned_v2, cuMemcpy2D_v2);
EXPORT CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *c, CUstream s)
{
    DRV_CHILD_GUARD();
    CUresult st = async_ok(s);
    return st ? st : copy2d(c);
}
EXPORT CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *c)
{
    DRV_CHILD_GUARD();
    CUresult st = blocking_ok();
    return st ? st : copy3d(c);
}
EXPORT CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *c, CUstream s)
{
    DRV_CHILD_GUARD();
    CUresult st = async_ok(s);
    return st ? st : copy3d(c);
}

/* ------------------------------------------------------------------ sets */
/* rows of `width` elements of `size` bytes, `pitch` bytes apart */
static CUresult set(CUdeviceptr d, size_t pitch, uint32_t value, size_t size, size_t width,
                    size_t height)
{
    if (d % size)
        return CUDA_ERROR_INVALID_VALUE;
    if (size == 1)
        return drv_from_runtime(shim_set2d(ptr(d), pitch, (int)value, width, height));
    if (!width || !height)
        return CUDA_SUCCESS;
    if (width * size > pitch && height > 1)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    CUresult st = is_mapped_range(ptr(d), pitch * (height - 1) + width * size)
                  ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    for (size_t y = 0; !st && y < height; y++) {
        char *row = (char *)ptr(d) + y * pitch;
        for (size_t x = 0; x < width; x++)
            memcpy(row + x * size, &value, size);     /* little-endian: the low bytes */
    }
    if (!st)
        shim_note_write(ptr(d), NULL, width * size, height, pitch, 0);
    UNLOCK();
    return st;
}

#define SETS(name, async, type, size)                                                      \
    EXPORT CUresult name(CUdeviceptr d, type v, size_t n)                                  \
    {                                                                                      \
        CUresult st = drv_ctx_check();                                                     \
        return st ? st : set(d, n * size, v, size, n, 1);                                  \
    }                                                                                      \
    EXPORT CUresult async(CUdeviceptr d, type v, size_t n, CUstream s)                     \
    {                                                                                      \
        CUresult st = async_ok(s);                                                         \
        return st ? st : set(d, n * size, v, size, n, 1);                                  \
    }
SETS(cuMemsetD8_v2, cuMemsetD8Async, unsigned char, 1)
SETS(cuMemsetD16_v2, cuMemsetD16Async, unsigned short, 2)
SETS(cuMemsetD32_v2, cuMemsetD32Async, unsigned int, 4)

#define SETS2D(name, async, type, size)                                                    \
    EXPORT CUresult name(CUdeviceptr d, size_t pitch, type v, size_t w, size_t h)          \
    {                                                                                      \
        CUresult st = drv_ctx_check();                                                     \
        return st ? st : set(d, pitch, v, size, w, h);                                     \
    }                                                                                      \
    EXPORT CUresult async(CUdeviceptr d, size_t pitch, type v, size_t w, size_t h,         \
                          CUstream s)                                                      \
    {                                                                                      \
        CUresult st = async_ok(s);                                                         \
        return st ? st : set(d, pitch, v, size, w, h);                                     \
    }
SETS2D(cuMemsetD2D8_v2, cuMemsetD2D8Async, unsigned char, 1)
SETS2D(cuMemsetD2D16_v2, cuMemsetD2D16Async, unsigned short, 2)
SETS2D(cuMemsetD2D32_v2, cuMemsetD2D32Async, unsigned int, 4)

/* ----------------------------------------------------- pointer attributes */
enum { PA_CONTEXT = 1, PA_MEMORY_TYPE = 2, PA_DEVICE_POINTER = 3, PA_HOST_POINTER = 4,
       PA_SYNC_MEMOPS = 6, PA_BUFFER_ID = 7, PA_IS_MANAGED = 8, PA_DEVICE_ORDINAL = 9,
       PA_IS_LEGACY_IPC = 10, PA_RANGE_START = 11, PA_RANGE_SIZE = 12, PA_MAPPED = 13,
       PA_ALLOWED_HANDLE_TYPES = 14, PA_ACCESS_FLAGS = 16, PA_MEMPOOL = 17,
       PA_MAPPING_SIZE = 18, PA_MAPPING_BASE = 19, PA_BLOCK_ID = 20 };

CUcontext drv_current_ctx(void);

/* one attribute of p (in the allocation at base/size/kind, or none): its
 * value written to data in the attribute's C type; an error when p is not
 * ptxc's memory and the attribute needs it (`strict`: cuPointerGetAttribute) */
static CUresult attribute(void *data, int attr, CUdeviceptr p, int found, uint64_t base,
                          uint64_t size, int kind, int strict)
{
    int device = kind == KIND_DEVICE || kind == KIND_MODULE;
    if (!found && strict)
        return CUDA_ERROR_INVALID_VALUE;
    switch (attr) {
    case PA_CONTEXT: *(CUcontext *)data = found ? drv_current_ctx() : NULL; break;
    case PA_MEMORY_TYPE:
        *(unsigned *)data = !found ? 0 : kind == KIND_HOST ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        break;
    case PA_DEVICE_POINTER: *(CUdeviceptr *)data = found ? p : 0; break;
    case PA_HOST_POINTER:
        if (found && device && strict)
            return CUDA_ERROR_INVALID_VALUE;
        *(void **)data = found && !device ? ptr(p) : NULL;
        break;
    case PA_SYNC_MEMOPS: case PA_IS_LEGACY_IPC: *(unsigned char *)data = 0; break;
    case PA_IS_MANAGED: *(unsigned char *)data = found && kind == KIND_MANAGED; break;
    case PA_MAPPED: *(unsigned char *)data = found; break;
    case PA_BUFFER_ID: case PA_BLOCK_ID: *(unsigned long long *)data = found ? base >> 32 : 0; break;
    case PA_DEVICE_ORDINAL: *(int *)data = found ? 0 : -2; break;
    case PA_RANGE_START: *(CUdeviceptr *)data = found ? base : 0; break;
    case PA_RANGE_SIZE: case PA_MAPPING_SIZE: *(size_t *)data = found ? size : 0; break;
    case PA_MAPPING_BASE: *(void **)data = found ? ptr(base) : NULL; break;
    case PA_ALLOWED_HANDLE_TYPES: *(unsigned long long *)data = 0; break;
    case PA_ACCESS_FLAGS: *(unsigned *)data = found ? 3 : 0; break;   /* READWRITE */
    case PA_MEMPOOL: *(void **)data = NULL; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr p)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (st)
        return st;
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t base = 0, size = 0;
    int kind = 0;
    unsigned flags;
    int found = shim_range(ptr(p), &base, &size, &kind, &flags);
    return attribute(data, attr, p, found, base, size, kind, 1);
}

EXPORT CUresult cuPointerGetAttributes(unsigned n, int *attrs, void **data, CUdeviceptr p)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (st)
        return st;
    if (!attrs || !data)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t base = 0, size = 0;
    int kind = 0;
    unsigned flags;
    int found = shim_range(ptr(p), &base, &size, &kind, &flags);
    for (unsigned i = 0; i < n && !st; i++)
        if (data[i])
            st = attribute(data[i], attrs[i], p, found, base, size, kind, 0);
    return st;
}

EXPORT CUresult cuPointerSetAttribute(const void *value, int attr, CUdeviceptr p)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (st)
        return st;
    uint64_t base, size;
    int kind;
    unsigned flags;
    if (!value || attr != PA_SYNC_MEMOPS || !shim_range(ptr(p), &base, &size, &kind, &flags))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;               /* copies are synchronous anyway */
}

ALIAS(cuMemcpy_ptds, cuMemcpy);
ALIAS(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD_v2);
ALIAS(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH_v2);
ALIAS(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD_v2);
ALIAS(cuMemcpyPeer_ptds, cuMemcpyPeer);
ALIAS(cuMemcpyAsync_ptsz, cuMemcpyAsync);
ALIAS(cuMemcpyHtoDAsync_v2_ptsz, cuMemcpyHtoDAsync_v2);
ALIAS(cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyDtoHAsync_v2);
ALIAS(cuMemcpyDtoDAsync_v2_ptsz, cuMemcpyDtoDAsync_v2);
ALIAS(cuMemcpyPeerAsync_ptsz, cuMemcpyPeerAsync);
ALIAS(cuMemcpy2D_v2_ptds, cuMemcpy2D_v2);
ALIAS(cuMemcpy2DUnaligned_v2_ptds, cuMemcpy2D_v2);
ALIAS(cuMemcpy2DAsync_v2_ptsz, cuMemcpy2DAsync_v2);
ALIAS(cuMemcpy3D_v2_ptds, cuMemcpy3D_v2);
ALIAS(cuMemcpy3DAsync_v2_ptsz, cuMemcpy3DAsync_v2);
ALIAS(cuMemsetD8_v2_ptds, cuMemsetD8_v2);
ALIAS(cuMemsetD16_v2_ptds, cuMemsetD16_v2);
ALIAS(cuMemsetD32_v2_ptds, cuMemsetD32_v2);
ALIAS(cuMemsetD2D8_v2_ptds, cuMemsetD2D8_v2);
ALIAS(cuMemsetD2D16_v2_ptds, cuMemsetD2D16_v2);
ALIAS(cuMemsetD2D32_v2_ptds, cuMemsetD2D32_v2);
ALIAS(cuMemsetD8Async_ptsz, cuMemsetD8Async);
ALIAS(cuMemsetD16Async_ptsz, cuMemsetD16Async);
ALIAS(cuMemsetD32Async_ptsz, cuMemsetD32Async);
ALIAS(cuMemsetD2D8Async_ptsz, cuMemsetD2D8Async);
ALIAS(cuMemsetD2D16Async_ptsz, cuMemsetD2D16Async);
ALIAS(cuMemsetD2D32Async_ptsz, cuMemsetD2D32Async);
