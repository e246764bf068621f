/* Stream-ordered allocation and memory pools (mempool.c) and graph memory
 * nodes (graph_mem.c): the types of CUDA 13's driver_types.h they use and
 * what the other files call.
 *
 * tests/test_runtime_mempool.py checks the layouts and enum values against
 * the real headers when nvcc is installed.
 */
#ifndef PTXC_MEMPOOL_H
#define PTXC_MEMPOOL_H

#include "shim.h"

typedef struct CUmemPoolHandle_st *cudaMemPool_t;

enum {
    cudaMemPoolReuseFollowEventDependencies = 1, cudaMemPoolReuseAllowOpportunistic = 2,
    cudaMemPoolReuseAllowInternalDependencies = 3, cudaMemPoolAttrReleaseThreshold = 4,
    cudaMemPoolAttrReservedMemCurrent = 5, cudaMemPoolAttrReservedMemHigh = 6,
    cudaMemPoolAttrUsedMemCurrent = 7, cudaMemPoolAttrUsedMemHigh = 8,
};
enum { cudaMemLocationTypeInvalid = 0, cudaMemLocationTypeDevice = 1, cudaMemLocationTypeHost = 2,
       cudaMemLocationTypeHostNuma = 3, cudaMemLocationTypeHostNumaCurrent = 4 };
enum { cudaMemAccessFlagsProtNone = 0, cudaMemAccessFlagsProtRead = 1,
       cudaMemAccessFlagsProtReadWrite = 3 };
enum { cudaMemAllocationTypeInvalid = 0, cudaMemAllocationTypePinned = 1,
       cudaMemAllocationTypeManaged = 2 };
enum { cudaMemHandleTypeNone = 0 };
enum { cudaGraphMemAttrUsedMemCurrent = 0, cudaGraphMemAttrUsedMemHigh = 1,
       cudaGraphMemAttrReservedMemCurrent = 2, cudaGraphMemAttrReservedMemHigh = 3 };
enum { cudaGraphInstantiateFlagAutoFreeOnLaunch = 1 };

struct cudaMemLocation { int type; int id; };
struct cudaMemAccessDesc { struct cudaMemLocation location; int flags; };
struct cudaMemPoolProps {
    int allocType;
    int handleTypes;
    struct cudaMemLocation location;
    void *win32SecurityAttributes;
    size_t maxSize;
    unsigned short usage;
    unsigned char reserved[54];
};
struct cudaMemAllocNodeParams {
    struct cudaMemPoolProps poolProps;
    const struct cudaMemAccessDesc *accessDescs;
    size_t accessDescCount;
    size_t bytesize;
    void *dptr;
};

/* The accounting of a pool (docs/runtime.md, "Memory pools"): used bytes
 * are the live allocations, each rounded up to USED_GRAIN; reserved bytes
 * are chunks of CHUNK_BYTES, at least the used bytes rounded up to a chunk;
 * freed chunks stay reserved until a synchronising call releases those
 * above the release threshold, or cudaMemPoolTrimTo. */
#define USED_GRAIN 512ull
#define CHUNK_BYTES (2ull << 20)

/* mempool.c, mempool_access.c */
cudaError_t pool_stats_set(uint64_t *current, uint64_t *high, const void *value);
void mempool_sync(void);                       /* a synchronising call: release pool memory */
int mempool_released(uint32_t seg);            /* memory.c: seg freed; 1: a graph allocation */
uint64_t round_up(uint64_t n, uint64_t grain);
cudaError_t mempool_ipc_refused(const char *call);     /* says so; cudaErrorNotSupported */
cudaMemPool_t mempool_current(void);
int mempool_valid(cudaMemPool_t p);

/* the exported calls (mempool.c) that drv_mempool.c and mempool_access.c use */
cudaError_t cudaMallocFromPoolAsync(void **p, size_t size, cudaMemPool_t pool, cudaStream_t s);
cudaError_t cudaFreeAsync(void *p, cudaStream_t s);
cudaError_t cudaMemPoolCreate(cudaMemPool_t *out, const struct cudaMemPoolProps *pp);
cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool);
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *out, int device);
cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *out, int device);
cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool);
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, int attr, void *value);
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, int attr, void *value);
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep);
cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const struct cudaMemAccessDesc *d, size_t n);
cudaError_t cudaMemPoolGetAccess(int *flags, cudaMemPool_t pool, struct cudaMemLocation *loc);

/* graph_mem.c */
int graph_mem_released(uint32_t seg);          /* 1: seg is a graph allocation */

/* graph_mem.c: cudaMallocAsync / cudaFreeAsync in a capture record memory nodes */
cudaError_t capture_mem_alloc(cudaStream_t s, void **p, size_t size,
                              const struct cudaMemPoolProps *props);
cudaError_t capture_mem_free(cudaStream_t s, void *p);

/* memory.c */
cudaError_t shim_alloc(void **p, size_t size, int kind, unsigned flags, const char *call);
cudaError_t shim_release(void *p, int host);
cudaError_t shim_release_checked(const char *call, void *p);  /* a device free (ptxc check) */
cudaError_t shim_reserve(uint64_t size, uint32_t *seg);       /* a fixed address, no memory */
cudaError_t shim_alloc_at(uint32_t seg, uint64_t size, const char *call);

#endif
