/* Graph memory nodes (CUDA Programming Guide, "Graph Memory Nodes"; CUDA
 * Runtime API cudaGraphAddMemAllocNode, cudaGraphAddMemFreeNode,
 * cudaGraphLaunch, cudaDeviceGetGraphMemAttribute).
 *
 * An allocation node's address is fixed when the node is made (explicitly,
 * or by cudaMallocAsync in a stream capture) and stays the same across
 * instantiations and launches: ptxc reserves a segment for it then
 * (memory.c shim_reserve: the range holds an inaccessible placeholder) and
 * each run of the node makes the memory at that segment (shim_alloc_at).
 * The memory lives until a free node (of the owning graph or of another
 * graph), cudaFreeAsync or cudaFree frees it; a kernel that touches it
 * before the allocation node ran or after the free faults ("freed
 * allocation #N"). Rules, as CUDA documents them:
 *
 * - cudaGraphAddMemFreeNode: cudaErrorInvalidValue for an address no
 *   allocation node returned, a second free in the owning graph, a free in
 *   the owning graph after one in another graph, or in another graph after
 *   one in the owning graph;
 * - cudaGraphLaunch of an executable graph whose allocations of an earlier
 *   launch are not all freed: cudaErrorInvalidValue, unless it was
 *   instantiated with cudaGraphInstantiateFlagAutoFreeOnLaunch, which frees
 *   them first;
 * - a graph with memory nodes cannot be cloned or used as a child graph
 *   (cudaErrorNotSupported: ptxc has no ownership moves), nor instantiated
 *   while an executable graph made from it exists (cudaErrorInvalidValue).
 *
 * Graph memory counters (cudaDeviceGetGraphMemAttribute): each live graph
 * allocation uses its size rounded up to 2 MiB (CHUNK_BYTES); reserved
 * memory is the most used since the last cudaDeviceGraphMemTrim, which
 * releases what no live allocation uses.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "mempool.h"

/* one graph allocation, shared by its node and the nodes copied from it */
struct galloc {
    uint32_t seg;
    uint64_t size;
    int live;
    cudaGraph_t owner;          /* the graph of the allocation node */
    int freed_in_owner;         /* the owner has a free node for it */
    int freed_elsewhere;        /* another graph has one */
    int execs;                  /* executable graphs made from its graph */
    struct galloc *next;
};

struct graph_mem {
    struct cudaMemAllocNodeParams params;   /* alloc nodes; accessDescs = access */
    struct cudaMemAccessDesc *access;
    struct galloc *a;
    void *ptr;                  /* free nodes: the address */
};

static struct galloc *gallocs;
static uint64_t used, used_high, reserved, reserved_high;

static struct galloc *galloc_at(const void *p)
{
    uint64_t v = (uint64_t)(uintptr_t)p;
    for (struct galloc *a = gallocs; a; a = a->next)
        if (v == (uint64_t)a->seg << 32)
            return a;
    return NULL;
}

static void set_live(struct galloc *a, int live)
{
    uint64_t chunk = round_up(a->size, CHUNK_BYTES);
    a->live = live;
    used = live ? used + chunk : used - chunk;
    if (used > used_high)
        used_high = used;
    if (used > reserved)
        reserved = used;
    if (reserved > reserved_high)
        reserved_high = reserved;
}

/* mempool.c: seg was freed (a free node, cudaFreeAsync, cudaFree) */
int graph_mem_released(uint32_t seg)
{
    struct galloc *a = galloc_at((void *)((uintptr_t)seg << 32));
    if (!a)
        return 0;
    if (a->live)
        set_live(a, 0);
    return 1;
}

/* ---------------------------------------------------------- node objects */
void graph_mem_free(struct graph_mem *m)
{
    if (m) {
        free(m->access);
        free(m);
    }
}

struct graph_mem *graph_mem_copy(const struct graph_mem *m)
{
    struct graph_mem *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    *c = *m;
    c->access = NULL;
    size_t n = m->params.accessDescCount;
    if (n && !(c->access = malloc(n * sizeof *c->access))) {
        free(c);
        return NULL;
    }
    if (n)
        memcpy(c->access, m->access, n * sizeof *c->access);
    c->params.accessDescs = c->access;
    return c;
}

int graph_has_mem_nodes(cudaGraph_t g)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->nodes[i]->mem || (g->nodes[i]->child && graph_has_mem_nodes(g->nodes[i]->child)))
            return 1;
    return 0;
}

static cudaError_t check_alloc_params(const struct cudaMemAllocNodeParams *p)
{
    const struct cudaMemPoolProps *pp = &p->poolProps;
    if (!p->bytesize || pp->allocType != cudaMemAllocationTypePinned
        || pp->handleTypes != cudaMemHandleTypeNone
        || pp->location.type != cudaMemLocationTypeDevice || (p->accessDescCount && !p->accessDescs))
        return cudaErrorInvalidValue;
    if (pp->location.id != 0)
        return cudaErrorInvalidDevice;
    for (size_t i = 0; i < p->accessDescCount; i++) {
        const struct cudaMemAccessDesc *d = &p->accessDescs[i];
        if (d->location.type != cudaMemLocationTypeDevice)
            return cudaErrorInvalidValue;
        if (d->location.id != 0)
            return cudaErrorInvalidDevice;
        if (d->flags != cudaMemAccessFlagsProtReadWrite)
            return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}

/* node n (a new alloc node) gets its allocation: p->dptr is its address */
static cudaError_t set_alloc(cudaGraphNode_t n, struct cudaMemAllocNodeParams *p)
{
    if (!p)
        return cudaErrorInvalidValue;
    cudaError_t st = check_alloc_params(p);
    struct graph_mem m = { .params = *p, .access = (struct cudaMemAccessDesc *)p->accessDescs };
    struct galloc *a = st ? NULL : calloc(1, sizeof *a);
    if (!st && !a)
        st = cudaErrorMemoryAllocation;
    if (!st)
        st = shim_reserve(p->bytesize, &a->seg);
    if (!st && !(n->mem = graph_mem_copy(&m)))
        st = cudaErrorMemoryAllocation;
    if (st) {
        free(a);
        return st;
    }
    a->size = p->bytesize;
    a->owner = n->graph;
    a->next = gallocs;
    gallocs = a;
    p->dptr = (void *)((uintptr_t)a->seg << 32);
    n->mem->a = a;
    n->mem->params.dptr = p->dptr;
    return cudaSuccess;
}

static cudaError_t set_free(cudaGraphNode_t n, void *ptr)
{
    struct galloc *a = galloc_at(ptr);
    if (!ptr || !a)
        return cudaErrorInvalidValue;
    int own = a->owner == n->graph;
    if (a->freed_in_owner || (own && a->freed_elsewhere))
        return cudaErrorInvalidValue;
    struct graph_mem *m = calloc(1, sizeof *m);
    if (!m)
        return cudaErrorMemoryAllocation;
    m->a = a;
    m->ptr = ptr;
    n->mem = m;
    if (own)
        a->freed_in_owner = 1;
    else
        a->freed_elsewhere = 1;
    return cudaSuccess;
}

/* ------------------------------------------------------------- running */
cudaError_t graph_mem_run(cudaGraphNode_t n)
{
    struct galloc *a = n->mem ? n->mem->a : NULL;
    if (!a)
        return cudaErrorInvalidValue;
    if (n->type == cudaGraphNodeTypeMemAlloc) {
        if (a->live)
            return cudaErrorInvalidValue;
        cudaError_t st = shim_alloc_at(a->seg, a->size, "cudaGraphAddMemAllocNode");
        if (!st)
            set_live(a, 1);
        return st;
    }
    if (!a->live)              /* freed already (or never made) */
        return cudaErrorInvalidValue;
    return shim_release(n->mem->ptr, 0);
}

/* executable graphs of g: delta 0 may one be made (cudaErrorInvalidValue
 * when one exists: a graph with allocation nodes has one at a time), 1 one
 * more, -1 one less */
cudaError_t graph_mem_instances(cudaGraph_t g, int delta)
{
    for (size_t i = 0; i < g->n; i++) {
        cudaGraphNode_t n = g->nodes[i];
        if (n->type == cudaGraphNodeTypeMemAlloc && n->mem && delta == 0 && n->mem->a->execs)
            return cudaErrorInvalidValue;
    }
    for (size_t i = 0; i < g->n; i++) {
        cudaGraphNode_t n = g->nodes[i];
        if (n->type == cudaGraphNodeTypeMemAlloc && n->mem)
            n->mem->a->execs += delta;
    }
    return cudaSuccess;
}

/* before a launch of executable graph g: its allocations of an earlier
 * launch must have been freed, or are freed now (AutoFreeOnLaunch) */
cudaError_t graph_mem_prelaunch(cudaGraph_t g, unsigned long long flags)
{
    for (size_t i = 0; i < g->n; i++) {
        cudaGraphNode_t n = g->nodes[i];
        if (n->type != cudaGraphNodeTypeMemAlloc || !n->mem || !n->mem->a->live)
            continue;
        if (!(flags & cudaGraphInstantiateFlagAutoFreeOnLaunch))
            return cudaErrorInvalidValue;
        cudaError_t st = shim_release(n->mem->params.dptr, 0);
        if (st)
            return st;
    }
    return cudaSuccess;
}

/* ---------------------------------------------------------------- API */
static cudaError_t set_alloc_node(cudaGraphNode_t n, const void *p)
{
    return set_alloc(n, (struct cudaMemAllocNodeParams *)p);   /* writes p->dptr */
}

static cudaError_t set_free_node(cudaGraphNode_t n, const void *p)
{
    return set_free(n, (void *)p);
}

static cudaError_t add_node(cudaGraphNode_t *out, cudaGraph_t g, const cudaGraphNode_t *deps,
                            size_t ndeps, int type, void *params)
{
    if (!out)
        return cudaErrorInvalidValue;
    LOCK();
    cudaError_t st = graph_add_set(g, type, deps, ndeps,
                                   type == cudaGraphNodeTypeMemAlloc ? set_alloc_node : set_free_node,
                                   params, out);
    UNLOCK();
    return st;
}

EXPORT cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *out, cudaGraph_t g,
                                            const cudaGraphNode_t *deps, size_t ndeps,
                                            struct cudaMemAllocNodeParams *p)
{
    CHILD_GUARD();
    return set_error(add_node(out, g, deps, ndeps, cudaGraphNodeTypeMemAlloc, p));
}

EXPORT cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *out, cudaGraph_t g,
                                           const cudaGraphNode_t *deps, size_t ndeps, void *dptr)
{
    CHILD_GUARD();
    return set_error(add_node(out, g, deps, ndeps, cudaGraphNodeTypeMemFree, dptr));
}

/* poolProps and accessDescs stay the node's */
EXPORT cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t n,
                                                  struct cudaMemAllocNodeParams *out)
{
    CHILD_GUARD();
    if (!out || !node_ok(n) || n->type != cudaGraphNodeTypeMemAlloc)
        return set_error(cudaErrorInvalidValue);
    *out = n->mem->params;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t n, void *dptr_out)
{
    CHILD_GUARD();
    if (!dptr_out || !node_ok(n) || n->type != cudaGraphNodeTypeMemFree)
        return set_error(cudaErrorInvalidValue);
    *(void **)dptr_out = n->mem->ptr;
    return cudaSuccess;
}

/* ------------------------------------------------ stream capture hooks */
struct alloc_req { void **out; struct cudaMemAllocNodeParams params; };

static cudaError_t capture_set_alloc(cudaGraphNode_t n, const void *p)
{
    struct alloc_req *r = (struct alloc_req *)p;
    cudaError_t st = set_alloc(n, &r->params);
    if (!st)
        *r->out = r->params.dptr;
    return st;
}

/* cudaMallocAsync in a capture: an allocation node with the pool's properties */
cudaError_t capture_mem_alloc(cudaStream_t s, void **p, size_t size,
                              const struct cudaMemPoolProps *props)
{
    struct alloc_req r = { p, { .poolProps = *props, .bytesize = size } };
    return capture_record(s, cudaGraphNodeTypeMemAlloc, capture_set_alloc, &r);
}

/* cudaFreeAsync in a capture: a free node of a graph allocation */
cudaError_t capture_mem_free(cudaStream_t s, void *p)
{
    return capture_record(s, cudaGraphNodeTypeMemFree, set_free_node, p);
}

/* ------------------------------------------------ device-wide counters */
EXPORT cudaError_t cudaDeviceGraphMemTrim(int device)
{
    CHILD_GUARD();
    if (device != 0)
        return set_error(cudaErrorInvalidDevice);
    LOCK();
    reserved = used;
    UNLOCK();
    return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceGetGraphMemAttribute(int device, int attr, void *value)
{
    CHILD_GUARD();
    if (device != 0)
        return set_error(cudaErrorInvalidDevice);
    if (!value)
        return set_error(cudaErrorInvalidValue);
    LOCK();
    uint64_t v = attr == cudaGraphMemAttrUsedMemCurrent ? used
               : attr == cudaGraphMemAttrUsedMemHigh ? used_high
               : attr == cudaGraphMemAttrReservedMemCurrent ? reserved : reserved_high;
    UNLOCK();
    if (attr < cudaGraphMemAttrUsedMemCurrent || attr > cudaGraphMemAttrReservedMemHigh)
        return set_error(cudaErrorInvalidValue);
    *(uint64_t *)value = v;
    return cudaSuccess;
}

/* only the high watermarks, only reset (to the current value) by 0 */
EXPORT cudaError_t cudaDeviceSetGraphMemAttribute(int device, int attr, void *value)
{
    CHILD_GUARD();
    if (device != 0)
        return set_error(cudaErrorInvalidDevice);
    if (!value)
        return set_error(cudaErrorInvalidValue);
    LOCK();
    cudaError_t st = attr == cudaGraphMemAttrUsedMemHigh ? pool_stats_set(&used, &used_high, value)
                   : attr == cudaGraphMemAttrReservedMemHigh
                       ? pool_stats_set(&reserved, &reserved_high, value)
                       : cudaErrorInvalidValue;
    UNLOCK();
    return set_error(st);
}
