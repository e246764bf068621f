/* The device: one GPU of the model `ptxc run --gpu` chose (its numbers come
 * from ptxc in the OP_HELLO reply), its properties and attributes, versions
 * and settings that have no effect on a CPU run.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "shim.h"
#include "mempool.h"

#define CUDART_VERSION 13000

static int device_flags;
static size_t limits[8] = { 1024, 1 << 20, 8 << 20, 2, 2048, 0, 0, 0 };

static cudaError_t check_device(int dev) { return dev == 0 ? cudaSuccess : cudaErrorInvalidDevice; }

EXPORT cudaError_t cudaGetDeviceCount(int *n)
{
    CHILD_GUARD();
    if (!n)
        return set_error(cudaErrorInvalidValue);
    *n = 1;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGetDevice(int *dev)
{
    CHILD_GUARD();
    if (!dev)
        return set_error(cudaErrorInvalidValue);
    *dev = 0;
    return cudaSuccess;
}

EXPORT cudaError_t cudaSetDevice(int dev) { CHILD_GUARD(); return set_error(check_device(dev)); }
EXPORT cudaError_t cudaInitDevice(int dev, unsigned a, unsigned b)
{
    CHILD_GUARD();
    (void)a; (void)b;
    return set_error(check_device(dev));
}
EXPORT cudaError_t cudaChooseDevice(int *dev, const void *prop)
{
    CHILD_GUARD();
    (void)prop;
    return cudaGetDevice(dev);
}
EXPORT cudaError_t cudaSetValidDevices(int *devs, int n)
{
    CHILD_GUARD();
    for (int i = 0; devs && i < n; i++)
        if (devs[i] != 0)
            return set_error(cudaErrorInvalidDevice);
    return cudaSuccess;
}

EXPORT cudaError_t cudaSetDeviceFlags(unsigned flags)
{
    CHILD_GUARD();
    device_flags = (int)flags;
    return cudaSuccess;
}
EXPORT cudaError_t cudaGetDeviceFlags(unsigned *flags)
{
    CHILD_GUARD();
    if (!flags)
        return set_error(cudaErrorInvalidValue);
    *flags = (unsigned)device_flags;
    return cudaSuccess;
}

/* constants: they work in a forked child too (no CHILD_GUARD) */
EXPORT cudaError_t cudaDriverGetVersion(int *v)
{
    if (!v)
        return set_error(cudaErrorInvalidValue);
    *v = CUDART_VERSION;
    return cudaSuccess;
}
EXPORT cudaError_t cudaRuntimeGetVersion(int *v)
{
#if defined(PTXC_CUDART_MAJOR) && PTXC_CUDART_MAJOR == 12
    if (!v)                /* the libcudart.so.12 build (build_shim.py) */
        return set_error(cudaErrorInvalidValue);
    *v = 12080;
    return cudaSuccess;
#else
    return cudaDriverGetVersion(v);
#endif
}

/* launches run to completion: there is never anything to wait for */
EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    CHILD_GUARD();
    cudaError_t c = capture_sync(NULL, 1);
    if (!c)
        mempool_sync();                         /* pools release memory (mempool.c) */
    return set_error(c ? c : device_sync());     /* device_sync: devout.c */
}
EXPORT cudaError_t cudaDeviceReset(void) { CHILD_GUARD(); device_reset(); return cudaSuccess; }
EXPORT cudaError_t cudaDeviceSetCacheConfig(int c) { CHILD_GUARD(); (void)c; return cudaSuccess; }
EXPORT cudaError_t cudaDeviceGetCacheConfig(int *c)
{
    CHILD_GUARD();
    if (c)
        *c = 0;
    return cudaSuccess;
}
EXPORT cudaError_t cudaDeviceSetSharedMemConfig(int c)
{
    CHILD_GUARD();
    (void)c;
    return cudaSuccess;
}
EXPORT cudaError_t cudaDeviceGetSharedMemConfig(int *c)
{
    CHILD_GUARD();
    if (c)
        *c = 1;
    return cudaSuccess;
}
EXPORT cudaError_t cudaProfilerStart(void) { CHILD_GUARD(); return cudaSuccess; }
EXPORT cudaError_t cudaProfilerStop(void) { CHILD_GUARD(); return cudaSuccess; }

#define LIMIT_STACK_SIZE 0         /* cudaLimitStackSize */
#define LIMIT_MALLOC_HEAP_SIZE 2   /* cudaLimitMallocHeapSize */
#define LIMIT_PENDING_LAUNCHES 4   /* cudaLimitDevRuntimePendingLaunchCount */

/* The heap's size goes to the server, which makes the heap when a kernel
   first calls malloc/free; after that it cannot change (cudaErrorInvalidValue,
   as cudaDeviceSetLimit documents). The stack size goes to the server too:
   every later launch gives each thread that much call stack (recursion).
   So does the pending launch count of device-side launches (dynamic
   parallelism: docs/runtime.md, "Device-side launches"). */
static cudaError_t send_limit(int op, size_t value)
{
    char req[8];
    put64(req, (uint64_t)value);
    struct reply r;
    LOCK();
    shim_call(op, req, 8, NULL, 0, &r);
    UNLOCK();
    cudaError_t st = (cudaError_t)r.status;
    reply_free(&r);
    return st;
}

EXPORT cudaError_t cudaDeviceSetLimit(int limit, size_t value)
{
    CHILD_GUARD();
    if (limit < 0 || limit >= 8)
        return set_error(cudaErrorInvalidValue);
    if (limit == LIMIT_MALLOC_HEAP_SIZE || limit == LIMIT_STACK_SIZE ||
        limit == LIMIT_PENDING_LAUNCHES) {
        int op = limit == LIMIT_STACK_SIZE ? OP_SET_STACK_LIMIT
                 : limit == LIMIT_PENDING_LAUNCHES ? OP_SET_PENDING_LIMIT : OP_SET_HEAP_LIMIT;
        cudaError_t st = send_limit(op, value);
        if (st != cudaSuccess)
            return set_error(st);
    }
    limits[limit] = value;
    return cudaSuccess;
}
EXPORT cudaError_t cudaDeviceGetLimit(size_t *value, int limit)
{
    CHILD_GUARD();
    if (!value || limit < 0 || limit >= 8)
        return set_error(cudaErrorInvalidValue);
    *value = limits[limit];
    return cudaSuccess;
}
EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    CHILD_GUARD();
    if (least)
        *least = 0;
    if (greatest)
        *greatest = -5;
    return cudaSuccess;
}
EXPORT cudaError_t cudaDeviceCanAccessPeer(int *can, int dev, int peer)
{
    CHILD_GUARD();
    (void)dev; (void)peer;
    if (!can)
        return set_error(cudaErrorInvalidValue);
    *can = 0;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int dev)
{
    CHILD_GUARD();
    if (!p)
        return set_error(cudaErrorInvalidValue);
    if (dev != 0)
        return set_error(cudaErrorInvalidDevice);
    const uint64_t *g = gpu_info();
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", gpu_name());
    memcpy(p->uuid, "ptxc-cpu-device", 16);
    p->totalGlobalMem = g[GPU_TOTAL_MEM];
    p->sharedMemPerBlock = g[GPU_SHARED_PER_BLOCK];
    p->regsPerBlock = (int)g[GPU_REGS_PER_BLOCK];
    p->warpSize = 32;
    p->memPitch = 2147483647;
    p->maxThreadsPerBlock = (int)g[GPU_MAX_THREADS_PER_BLOCK];
    p->maxThreadsDim[0] = 1024;
    p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 2147483647;
    p->maxGridSize[1] = 65535;
    p->maxGridSize[2] = 65535;
    p->totalConstMem = g[GPU_CONST_MEM];
    p->major = (int)g[GPU_MAJOR];
    p->minor = (int)g[GPU_MINOR];
    p->textureAlignment = 512;
    p->texturePitchAlignment = 32;
    p->multiProcessorCount = (int)g[GPU_SM_COUNT];
    p->canMapHostMemory = 1;
    p->maxTexture1D = 131072;
    p->surfaceAlignment = 512;
    p->concurrentKernels = 1;
    p->asyncEngineCount = 2;
    p->unifiedAddressing = 1;
    p->memoryBusWidth = (int)g[GPU_MEM_BUS_WIDTH];
    p->l2CacheSize = (int)g[GPU_L2_SIZE];
    p->persistingL2CacheMaxSize = (int)g[GPU_PERSISTING_L2_MAX];
    p->maxThreadsPerMultiProcessor = (int)g[GPU_MAX_THREADS_PER_SM];
    p->streamPrioritiesSupported = 1;
    p->globalL1CacheSupported = 1;
    p->localL1CacheSupported = 1;
    p->sharedMemPerMultiprocessor = g[GPU_SHARED_PER_SM];
    p->regsPerMultiprocessor = (int)g[GPU_REGS_PER_SM];
    p->managedMemory = 1;
    p->concurrentManagedAccess = 1;
    p->computePreemptionSupported = 1;
    p->cooperativeLaunch = 1;
    p->sharedMemPerBlockOptin = g[GPU_SHARED_PER_BLOCK_OPTIN];
    p->maxBlocksPerMultiProcessor = (int)g[GPU_MAX_BLOCKS_PER_SM];
    p->reservedSharedMemPerBlock = g[GPU_RESERVED_SHARED_PER_BLOCK];
    p->hostNumaId = -1;
    p->deviceNumaId = -1;
    return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceGetAttribute(int *value, int attr, int dev)
{
    CHILD_GUARD();
    if (!value)
        return set_error(cudaErrorInvalidValue);
    if (dev != 0)
        return set_error(cudaErrorInvalidDevice);
    const uint64_t *g = gpu_info();
    long v;
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: v = (long)g[GPU_MAX_THREADS_PER_BLOCK]; break;
    case cudaDevAttrMaxBlockDimX: case cudaDevAttrMaxBlockDimY: v = 1024; break;
    case cudaDevAttrMaxBlockDimZ: v = 64; break;
    case cudaDevAttrMaxGridDimX: v = 2147483647; break;
    case cudaDevAttrMaxGridDimY: case cudaDevAttrMaxGridDimZ: v = 65535; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: v = (long)g[GPU_SHARED_PER_BLOCK]; break;
    case cudaDevAttrTotalConstantMemory: v = (long)g[GPU_CONST_MEM]; break;
    case cudaDevAttrWarpSize: v = 32; break;
    case cudaDevAttrMaxPitch: v = 2147483647; break;
    case cudaDevAttrMaxRegistersPerBlock: v = (long)g[GPU_REGS_PER_BLOCK]; break;
    case cudaDevAttrClockRate: v = (long)g[GPU_CLOCK_KHZ]; break;
    case cudaDevAttrTextureAlignment: v = 512; break;
    case cudaDevAttrGpuOverlap: v = 1; break;
    case cudaDevAttrMultiProcessorCount: v = (long)g[GPU_SM_COUNT]; break;
    case cudaDevAttrCanMapHostMemory: v = 1; break;
    case cudaDevAttrSurfaceAlignment: v = 512; break;
    case cudaDevAttrConcurrentKernels: v = 1; break;
    case cudaDevAttrMemoryClockRate: v = (long)g[GPU_MEM_CLOCK_KHZ]; break;
    case cudaDevAttrGlobalMemoryBusWidth: v = (long)g[GPU_MEM_BUS_WIDTH]; break;
    case cudaDevAttrL2CacheSize: v = (long)g[GPU_L2_SIZE]; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: v = (long)g[GPU_MAX_THREADS_PER_SM]; break;
    case cudaDevAttrAsyncEngineCount: v = 2; break;
    case cudaDevAttrUnifiedAddressing: v = 1; break;
    case cudaDevAttrTexturePitchAlignment: v = 32; break;
    case cudaDevAttrComputeCapabilityMajor: v = (long)g[GPU_MAJOR]; break;
    case cudaDevAttrComputeCapabilityMinor: v = (long)g[GPU_MINOR]; break;
    case cudaDevAttrStreamPrioritiesSupported: case cudaDevAttrGlobalL1CacheSupported: case cudaDevAttrLocalL1CacheSupported: v = 1; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: v = (long)g[GPU_SHARED_PER_SM]; break;
    case cudaDevAttrMaxRegistersPerMultiprocessor: v = (long)g[GPU_REGS_PER_SM]; break;
    case cudaDevAttrManagedMemory: v = 1; break;
    case cudaDevAttrSingleToDoublePrecisionPerfRatio: v = 2; break;
    case cudaDevAttrConcurrentManagedAccess: case cudaDevAttrComputePreemptionSupported: case cudaDevAttrCooperativeLaunch: v = 1; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: v = (long)g[GPU_SHARED_PER_BLOCK_OPTIN]; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: v = (long)g[GPU_MAX_BLOCKS_PER_SM]; break;
    case cudaDevAttrMaxPersistingL2CacheSize: v = (long)g[GPU_PERSISTING_L2_MAX]; break;
    case cudaDevAttrReservedSharedMemoryPerBlock: v = (long)g[GPU_RESERVED_SHARED_PER_BLOCK]; break;
    case cudaDevAttrMemoryPoolsSupported: v = 1; break;
    case cudaDevAttrNumaId: case cudaDevAttrHostNumaId: v = -1; break;
    default: v = 0; break;
    }
    *value = (int)v;
    return cudaSuccess;
}
