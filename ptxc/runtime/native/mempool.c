/* Stream-ordered allocation and memory pools (CUDA Runtime API, "Stream
 * Ordered Memory Allocator"; CUDA Programming Guide, "Stream Ordered Memory
 * Allocator").
 *
 * ptxc's streams are synchronous, so an operation's stream order is the
 * order of the calls: cudaMallocAsync's memory is there when the call
 * returns (later work on any stream may use it) and cudaFreeAsync frees at
 * once, so work issued after it that uses the memory faults ("freed
 * allocation #N"), as the guide's use-after-free rule says it may. Every
 * allocation is its own segment (memory.c), never reused, which is what
 * lets ptxc catch those uses; a pool is bookkeeping: which allocations are
 * its own, its attributes, and the counters that a GPU's pool would show
 * (mempool.h: used bytes rounded up to 512 per allocation, reserved bytes in
 * 2 MiB chunks, kept after frees until a synchronising call releases what is
 * above the release threshold, or cudaMemPoolTrimTo).
 *
 * During a stream capture, cudaMallocAsync and cudaFreeAsync record graph
 * memory nodes instead (graph_mem.c). Access, the calls by location and
 * IPC: mempool_access.c.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "mempool.h"

#define POOL_MAGIC 0x504f4f4cu

struct CUmemPoolHandle_st {
    uint32_t magic;
    int destroyed;                 /* destroyed with live allocations: freed with the last */
    struct cudaMemPoolProps props;
    uint64_t threshold;
    int reuse[3];                  /* the three reuse attributes (1..3) */
    uint64_t used, used_high, reserved, reserved_high;
    size_t live;                   /* allocations not freed */
    struct CUmemPoolHandle_st *next;   /* every pool, from default_pool */
};

static struct CUmemPoolHandle_st default_pool = {
    .magic = POOL_MAGIC,
    .props = { .allocType = cudaMemAllocationTypePinned,
               .location = { cudaMemLocationTypeDevice, 0 } },
    .reuse = { 1, 1, 1 },
};
static cudaMemPool_t current_pool = &default_pool;

/* the allocations of the pools: segment, pool, bytes counted as used */
struct owned { uint32_t seg; cudaMemPool_t pool; uint64_t used; };
static struct owned *owned;
static size_t nowned, room_owned;

uint64_t round_up(uint64_t n, uint64_t grain) { return (n + grain - 1) / grain * grain; }

static int pool_ok(cudaMemPool_t p) { return p && p->magic == POOL_MAGIC && !p->destroyed; }

static void raise_to(uint64_t *v, uint64_t *high, uint64_t to)
{
    *v = to;
    if (to > *high)
        *high = to;
}

static cudaError_t pool_alloc(void **p, size_t size, cudaMemPool_t pool, const char *call)
{
    if (!p)
        return cudaErrorInvalidValue;
    uint64_t used = round_up(size, USED_GRAIN);
    if (pool->props.maxSize && pool->used + used > pool->props.maxSize)
        return cudaErrorMemoryAllocation;
    if (nowned >= room_owned) {
        size_t r = room_owned ? 2 * room_owned : 64;
        struct owned *t = realloc(owned, r * sizeof *t);
        if (!t)
            return cudaErrorMemoryAllocation;
        owned = t;
        room_owned = r;
    }
    cudaError_t st = shim_alloc(p, size, KIND_DEVICE, 0, call);
    if (st || !*p)
        return st;
    owned[nowned++] = (struct owned){ (uint32_t)((uintptr_t)*p >> 32), pool, used };
    pool->live++;
    raise_to(&pool->used, &pool->used_high, pool->used + used);
    uint64_t need = round_up(pool->used, CHUNK_BYTES);
    if (need > pool->reserved)
        raise_to(&pool->reserved, &pool->reserved_high, need);
    return cudaSuccess;
}

/* memory.c: segment seg was freed (by any free call) */
int mempool_released(uint32_t seg)
{
    for (size_t i = 0; i < nowned; i++) {
        if (owned[i].seg != seg)
            continue;
        cudaMemPool_t pool = owned[i].pool;
        pool->used -= owned[i].used;
        pool->live--;
        owned[i] = owned[--nowned];
        if (pool->destroyed && !pool->live) {
            pool->magic = 0;
            free(pool);
        }
        return 0;
    }
    return graph_mem_released(seg);
}

/* release the reserved chunks above `keep` bytes that no allocation uses */
static void trim(cudaMemPool_t pool, uint64_t keep)
{
    uint64_t floor = round_up(pool->used, CHUNK_BYTES);
    uint64_t to = keep > floor ? keep : floor;
    if (pool->reserved > to)
        pool->reserved = to;
}

/* a stream, event or device synchronisation: each pool keeps at most its
 * release threshold (whole chunks) beyond the chunks its allocations use */
void mempool_sync(void)
{
    LOCK();
    for (cudaMemPool_t p = &default_pool; p; p = p->next)
        if (!p->destroyed)
            trim(p, p->threshold / CHUNK_BYTES * CHUNK_BYTES);
    UNLOCK();
}

/* ---------------------------------------------------------- allocation */
EXPORT cudaError_t cudaMallocFromPoolAsync(void **p, size_t size, cudaMemPool_t pool,
                                           cudaStream_t s)
{
    CHILD_GUARD();
    if (!p || !pool_ok(pool))
        return set_error(cudaErrorInvalidValue);
    if (!stream_valid(s))
        return set_error(cudaErrorInvalidResourceHandle);
    int c = capture_state(s);      /* a capture records an allocation node */
    if (c)
        return set_error(c < 0 ? capture_mem_alloc(s, p, size, &pool->props) : c);
    if (size == 0) {
        *p = NULL;
        return cudaSuccess;
    }
    LOCK();
    cudaError_t st = pool_alloc(p, size, pool, "cudaMallocAsync");
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t s)
{
    CHILD_GUARD();
    return cudaMallocFromPoolAsync(p, size, current_pool, s);
}

EXPORT cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    CHILD_GUARD();
    if (!stream_valid(s))
        return set_error(cudaErrorInvalidResourceHandle);
    int c = capture_state(s);      /* a capture records a free node */
    if (c)
        return set_error(c < 0 ? capture_mem_free(s, p) : c);
    return set_error(shim_release_checked("cudaFreeAsync", p));
}

/* --------------------------------------------------------------- pools */
static cudaError_t check_props(const struct cudaMemPoolProps *pp, const char *call)
{
    if (!pp || pp->allocType != cudaMemAllocationTypePinned)
        return cudaErrorInvalidValue;
    if (pp->handleTypes != cudaMemHandleTypeNone)
        return mempool_ipc_refused(call);
    if (pp->location.type == cudaMemLocationTypeHost
        || pp->location.type == cudaMemLocationTypeHostNuma) {
        fflush(NULL);
        fprintf(stderr, "ptxc: %s: memory pools of host memory are not supported "
                "(returns cudaErrorNotSupported)\n", call);
        return cudaErrorNotSupported;
    }
    if (pp->location.type != cudaMemLocationTypeDevice)
        return cudaErrorInvalidValue;
    return pp->location.id == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}

EXPORT cudaError_t cudaMemPoolCreate(cudaMemPool_t *out, const struct cudaMemPoolProps *pp)
{
    CHILD_GUARD();
    if (!out)
        return set_error(cudaErrorInvalidValue);
    cudaError_t st = check_props(pp, "cudaMemPoolCreate");
    if (st)
        return set_error(st);
    struct CUmemPoolHandle_st *pool = calloc(1, sizeof *pool);
    if (!pool)
        return set_error(cudaErrorMemoryAllocation);
    pool->magic = POOL_MAGIC;
    pool->props = *pp;
    pool->reuse[0] = pool->reuse[1] = pool->reuse[2] = 1;
    LOCK();
    pool->next = default_pool.next;
    default_pool.next = pool;
    *out = pool;
    UNLOCK();
    return cudaSuccess;
}

/* a pool with live allocations goes when the last of them is freed */
EXPORT cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool)
{
    CHILD_GUARD();
    LOCK();
    cudaError_t st = !pool_ok(pool) || pool == &default_pool ? cudaErrorInvalidValue : cudaSuccess;
    if (!st) {
        for (cudaMemPool_t *at = &default_pool.next; *at; at = &(*at)->next)
            if (*at == pool) {
                *at = pool->next;
                break;
            }
        if (current_pool == pool)
            current_pool = &default_pool;
        pool->destroyed = 1;
        if (!pool->live) {
            pool->magic = 0;
            free(pool);
        }
    }
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *out, int device)
{
    CHILD_GUARD();
    if (!out)
        return set_error(cudaErrorInvalidValue);
    if (device != 0)
        return set_error(cudaErrorInvalidDevice);
    *out = &default_pool;
    return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *out, int device)
{
    CHILD_GUARD();
    if (!out)
        return set_error(cudaErrorInvalidValue);
    if (device != 0)
        return set_error(cudaErrorInvalidDevice);
    LOCK();
    *out = current_pool;
    UNLOCK();
    return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool)
{
    CHILD_GUARD();
    if (device != 0)
        return set_error(cudaErrorInvalidDevice);
    LOCK();
    cudaError_t st = pool_ok(pool) ? cudaSuccess : cudaErrorInvalidValue;
    if (!st)
        current_pool = pool;
    UNLOCK();
    return set_error(st);
}

/* ---------------------------------------------------------- attributes */
/* the high watermarks can only be reset: to the current value, by 0 */
cudaError_t pool_stats_set(uint64_t *current, uint64_t *high, const void *value)
{
    if (*(const uint64_t *)value != 0)
        return cudaErrorInvalidValue;
    *high = *current;
    return cudaSuccess;
}

static cudaError_t set_attr(cudaMemPool_t pool, int attr, const void *value)
{
    switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies:
    case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies:
        pool->reuse[attr - 1] = *(const int *)value != 0;
        return cudaSuccess;
    case cudaMemPoolAttrReleaseThreshold:
        pool->threshold = *(const uint64_t *)value;
        return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh:
        return pool_stats_set(&pool->reserved, &pool->reserved_high, value);
    case cudaMemPoolAttrUsedMemHigh:
        return pool_stats_set(&pool->used, &pool->used_high, value);
    default:                       /* the current values are read-only */
        return cudaErrorInvalidValue;
    }
}

static cudaError_t get_attr(cudaMemPool_t pool, int attr, void *value)
{
    uint64_t v;
    switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies:
    case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies:
        *(int *)value = pool->reuse[attr - 1];
        return cudaSuccess;
    case cudaMemPoolAttrReleaseThreshold: v = pool->threshold; break;
    case cudaMemPoolAttrReservedMemCurrent: v = pool->reserved; break;
    case cudaMemPoolAttrReservedMemHigh: v = pool->reserved_high; break;
    case cudaMemPoolAttrUsedMemCurrent: v = pool->used; break;
    case cudaMemPoolAttrUsedMemHigh: v = pool->used_high; break;
    default: return cudaErrorInvalidValue;
    }
    *(uint64_t *)value = v;
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, int attr, void *value)
{
    CHILD_GUARD();
    LOCK();
    cudaError_t st = pool_ok(pool) && value ? set_attr(pool, attr, value) : cudaErrorInvalidValue;
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, int attr, void *value)
{
    CHILD_GUARD();
    LOCK();
    cudaError_t st = pool_ok(pool) && value ? get_attr(pool, attr, value) : cudaErrorInvalidValue;
    UNLOCK();
    return set_error(st);
}

/* no-op below keep bytes; else at least keep bytes (whole chunks) stay */
EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep)
{
    CHILD_GUARD();
    LOCK();
    cudaError_t st = pool_ok(pool) ? cudaSuccess : cudaErrorInvalidValue;
    if (!st && pool->reserved > keep)
        trim(pool, round_up(keep, CHUNK_BYTES));
    UNLOCK();
    return set_error(st);
}

/* ---------------------------------------------- for the driver (drv_mempool.c) */
cudaMemPool_t mempool_current(void) { return current_pool; }
int mempool_valid(cudaMemPool_t p) { return pool_ok(p); }

ALIAS(cudaMallocAsync_ptsz, cudaMallocAsync);
ALIAS(cudaFreeAsync_ptsz, cudaFreeAsync);
ALIAS(cudaMallocFromPoolAsync_ptsz, cudaMallocFromPoolAsync);
