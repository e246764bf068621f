/* Memory pools: access, the calls by memory location, and IPC (CUDA
 * Runtime API, "Stream Ordered Memory Allocator"); the pools are mempool.c's.
 *
 * One device: a pool of device 0 is read-write there and that cannot be
 * changed; the host has no access. IPC of pools is not supported: the device
 * reports no pool handle types (cudaDevAttrMemoryPoolSupportedHandleTypes 0),
 * and the export/import calls return cudaErrorNotSupported, as on such a
 * device, and say so on stderr (one line naming the call).
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "mempool.h"

/* CUDA 13's calls by location: the device's pinned pools only */
static cudaError_t device_location(const struct cudaMemLocation *loc, int type)
{
    if (!loc || type != cudaMemAllocationTypePinned || loc->type != cudaMemLocationTypeDevice)
        return cudaErrorInvalidValue;
    return loc->id == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}

EXPORT cudaError_t cudaMemGetDefaultMemPool(cudaMemPool_t *out, struct cudaMemLocation *loc,
                                            int type)
{
    CHILD_GUARD();
    cudaError_t st = out ? device_location(loc, type) : cudaErrorInvalidValue;
    return st ? set_error(st) : cudaDeviceGetDefaultMemPool(out, 0);
}

EXPORT cudaError_t cudaMemGetMemPool(cudaMemPool_t *out, struct cudaMemLocation *loc, int type)
{
    CHILD_GUARD();
    cudaError_t st = out ? device_location(loc, type) : cudaErrorInvalidValue;
    return st ? set_error(st) : cudaDeviceGetMemPool(out, 0);
}

EXPORT cudaError_t cudaMemSetMemPool(struct cudaMemLocation *loc, int type, cudaMemPool_t pool)
{
    CHILD_GUARD();
    cudaError_t st = device_location(loc, type);
    return st ? set_error(st) : cudaDeviceSetMemPool(0, pool);
}

/* ------------------------------------------------------------- access */
/* one device: its own pools are read-write there and cannot be changed */
EXPORT cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const struct cudaMemAccessDesc *d,
                                        size_t count)
{
    CHILD_GUARD();
    if (!mempool_valid(pool) || (count && !d))
        return set_error(cudaErrorInvalidValue);
    for (size_t i = 0; i < count; i++) {
        if (d[i].location.type != cudaMemLocationTypeDevice)
            return set_error(cudaErrorInvalidValue);
        if (d[i].location.id != 0)
            return set_error(cudaErrorInvalidDevice);
        if (d[i].flags != cudaMemAccessFlagsProtReadWrite)
            return set_error(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemPoolGetAccess(int *flags, cudaMemPool_t pool, struct cudaMemLocation *loc)
{
    CHILD_GUARD();
    if (!flags || !mempool_valid(pool) || !loc)
        return set_error(cudaErrorInvalidValue);
    if (loc->type == cudaMemLocationTypeDevice && loc->id != 0)
        return set_error(cudaErrorInvalidDevice);
    *flags = loc->type == cudaMemLocationTypeDevice ? cudaMemAccessFlagsProtReadWrite
                                                    : cudaMemAccessFlagsProtNone;
    return cudaSuccess;
}

/* ---------------------------------------------------------------- IPC */
cudaError_t mempool_ipc_refused(const char *call)
{
    fflush(NULL);
    fprintf(stderr, "ptxc: %s: memory pool IPC is not supported (the device has no pool handle "
            "types); returns cudaErrorNotSupported\n", call);
    return cudaErrorNotSupported;
}

EXPORT cudaError_t cudaMemPoolExportToShareableHandle(void *h, cudaMemPool_t pool, int type,
                                                      unsigned flags)
{
    CHILD_GUARD();
    (void)h, (void)pool, (void)type, (void)flags;
    return set_error(mempool_ipc_refused("cudaMemPoolExportToShareableHandle"));
}
EXPORT cudaError_t cudaMemPoolImportFromShareableHandle(cudaMemPool_t *pool, void *h, int type,
                                                        unsigned flags)
{
    CHILD_GUARD();
    (void)h, (void)pool, (void)type, (void)flags;
    return set_error(mempool_ipc_refused("cudaMemPoolImportFromShareableHandle"));
}
EXPORT cudaError_t cudaMemPoolExportPointer(void *data, void *p)
{
    CHILD_GUARD();
    (void)data, (void)p;
    return set_error(mempool_ipc_refused("cudaMemPoolExportPointer"));
}
EXPORT cudaError_t cudaMemPoolImportPointer(void **p, cudaMemPool_t pool, void *data)
{
    CHILD_GUARD();
    (void)data, (void)p, (void)pool;
    return set_error(mempool_ipc_refused("cudaMemPoolImportPointer"));
}

