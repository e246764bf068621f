/* The driver API's stream-ordered allocator and memory pools (CUDA Driver
 * API, "Stream Ordered Memory Allocator"): cuMemAllocAsync, cuMemFreeAsync,
 * cuMemAllocFromPoolAsync, cuMemPool*, cuDeviceGet/SetMemPool. They are the
 * runtime's calls (mempool.c) with the driver's context check and error
 * codes: CUmemPoolProps, CUmemAccessDesc, CUmemLocation and the attribute
 * numbers are laid out as the runtime's structs and enums in cuda.h.
 */
#define _GNU_SOURCE
#include "driver.h"
#include "mempool.h"

/* the runtime call's CUresult after the context check (RT: driver.h) */
#define CALL(expr) do { CUresult st_ = drv_ctx_check(); return st_ ? st_ : RT(expr); } while (0)

static CUresult pool_alloc(CUdeviceptr *d, size_t size, cudaMemPool_t pool, CUstream s)
{
    if (!d || !size)
        return CUDA_ERROR_INVALID_VALUE;
    void *p = NULL;
    CUresult st = RT(cudaMallocFromPoolAsync(&p, size, pool, s));
    if (st == (CUresult)cudaErrorInvalidResourceHandle)
        st = CUDA_ERROR_INVALID_HANDLE;
    if (!st)
        *d = (CUdeviceptr)(uintptr_t)p;
    return st;
}

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *d, size_t size, CUstream s)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    return st ? st : pool_alloc(d, size, mempool_current(), s);
}
EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *d, size_t size, cudaMemPool_t pool, CUstream s)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    return st ? st : pool_alloc(d, size, pool, s);
}
EXPORT CUresult cuMemFreeAsync(CUdeviceptr d, CUstream s)
{
    DRV_CHILD_GUARD();
    CALL(cudaFreeAsync((void *)(uintptr_t)d, s));
}
EXPORT CUresult cuMemPoolCreate(cudaMemPool_t *out, const struct cudaMemPoolProps *pp)
{
    DRV_CHILD_GUARD();
    CALL(cudaMemPoolCreate(out, pp));
}
EXPORT CUresult cuMemPoolDestroy(cudaMemPool_t pool)
{
    DRV_CHILD_GUARD();
    CALL(cudaMemPoolDestroy(pool));
}
EXPORT CUresult cuDeviceGetDefaultMemPool(cudaMemPool_t *out, CUdevice dev)
{
    DRV_CHILD_GUARD();
    CALL(cudaDeviceGetDefaultMemPool(out, dev));
}
EXPORT CUresult cuDeviceGetMemPool(cudaMemPool_t *out, CUdevice dev)
{
    DRV_CHILD_GUARD();
    CALL(cudaDeviceGetMemPool(out, dev));
}
EXPORT CUresult cuDeviceSetMemPool(CUdevice dev, cudaMemPool_t pool)
{
    DRV_CHILD_GUARD();
    CALL(cudaDeviceSetMemPool(dev, pool));
}
EXPORT CUresult cuMemPoolSetAttribute(cudaMemPool_t pool, int attr, void *value)
{
    DRV_CHILD_GUARD();
    CALL(cudaMemPoolSetAttribute(pool, attr, value));
}
EXPORT CUresult cuMemPoolGetAttribute(cudaMemPool_t pool, int attr, void *value)
{
    DRV_CHILD_GUARD();
    CALL(cudaMemPoolGetAttribute(pool, attr, value));
}
EXPORT CUresult cuMemPoolTrimTo(cudaMemPool_t pool, size_t keep)
{
    DRV_CHILD_GUARD();
    CALL(cudaMemPoolTrimTo(pool, keep));
}
EXPORT CUresult cuMemPoolSetAccess(cudaMemPool_t pool, const struct cudaMemAccessDesc *d, size_t n)
{
    DRV_CHILD_GUARD();
    CALL(cudaMemPoolSetAccess(pool, d, n));
}
EXPORT CUresult cuMemPoolGetAccess(int *flags, cudaMemPool_t pool, struct cudaMemLocation *loc)
{
    DRV_CHILD_GUARD();
    CALL(cudaMemPoolGetAccess(flags, pool, loc));
}

ALIAS(cuMemAllocAsync_ptsz, cuMemAllocAsync);
ALIAS(cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync);
ALIAS(cuMemFreeAsync_ptsz, cuMemFreeAsync);
