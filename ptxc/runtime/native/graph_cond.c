/* Conditional graph nodes (CUDA Programming Guide, "Conditional Graph
 * Nodes"; CUDA Runtime API cudaGraphConditionalHandleCreate,
 * cudaConditionalNodeParams; CUDA 13 driver_types.h
 * cudaGraphNodeTypeConditional).
 *
 * A conditional handle is a 32-bit value the graph's kernels set with
 * cudaGraphSetConditional(handle, value). In ptxc the handle IS the device
 * address of that value: a 4-byte slot in a table of device memory that the
 * runtime owns (one allocation of COND_CHUNK slots, made when the first
 * handle is created, more when it fills). The device function is the store
 * `st.u32 [handle], value` (ptxc/runtime/driver_funcs_ptx.py links it into
 * modules that call it, as the CUDA driver resolves the call at load time),
 * so what a kernel sets is what the host reads when the node is evaluated:
 * launches are synchronous in ptxc, so every kernel upstream of the node
 * has finished by then.
 *
 * Semantics (cudaConditionalNodeParams): an IF node runs body 0 once when
 * the value is non-zero, else body 1 if size == 2; a WHILE node reads the
 * value before each iteration and runs body 0 while it is non-zero; a
 * SWITCH node runs body n when the value is n < size, else nothing. The
 * value is set to the handle's default at the start of each launch of the
 * graph when the handle was created with cudaGraphCondAssignDefault;
 * otherwise it keeps what the last launch left (it starts at the default).
 * Body graphs are created with the node, owned by it (phGraph_out) and may
 * hold kernel, empty, child graph, memset, memcpy and conditional nodes
 * only, recursively; they are filled with the graph API or by
 * cudaStreamBeginCaptureToGraph (capture.c). A graph holding conditional
 * nodes cannot be cloned or embedded as a child graph node (cudaGraphClone,
 * cudaGraphAddChildGraphNode: cudaErrorInvalidValue). The handle must be
 * used in the graph it was created for or in a body nested in it.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "graph_cond.h"

#define COND_CHUNK 4096          /* handles (4-byte slots) per device allocation */
#define SWITCH_MAX 4096          /* bodies of one SWITCH node (ptxc's bound) */

struct cond_handle {
    cudaGraph_t graph;           /* the graph it was created for */
    unsigned dflt, flags;
};

struct chunk {
    uint32_t *slots;             /* device memory, mapped here at the same address */
    struct cond_handle h[COND_CHUNK];
    size_t used;
};

static struct chunk **chunks;
static size_t nchunks;

struct cond_node {
    uint64_t handle;
    int type;
    unsigned size;
    cudaGraph_t *bodies;         /* size graphs, owned (the phGraph_out array) */
};

/* memory.c: device memory that the runtime itself owns */
cudaError_t shim_alloc_runtime(void **p, size_t size, const char *why);

/* ------------------------------------------------------------- handles */
static struct cond_handle *handle_of(uint64_t v, volatile uint32_t **slot)
{
    for (size_t i = 0; i < nchunks; i++) {
        uint64_t base = (uint64_t)(uintptr_t)chunks[i]->slots;
        if (v < base || v >= base + 4 * (uint64_t)chunks[i]->used || (v - base) % 4)
            continue;
        if (slot)
            *slot = (volatile uint32_t *)(uintptr_t)v;
        return &chunks[i]->h[(v - base) / 4];
    }
    return NULL;
}

static cudaError_t new_handle(cudaGraph_t g, unsigned dflt, unsigned flags, uint64_t *out)
{
    struct chunk *c = nchunks ? chunks[nchunks - 1] : NULL;
    if (!c || c->used == COND_CHUNK) {
        struct chunk **t = realloc(chunks, (nchunks + 1) * sizeof *t);
        if (!t)
            return cudaErrorMemoryAllocation;
        chunks = t;
        c = calloc(1, sizeof *c);
        if (!c)
            return cudaErrorMemoryAllocation;
        void *p = NULL;
        cudaError_t st = shim_alloc_runtime(&p, 4 * COND_CHUNK, "cudaGraphConditionalHandleCreate");
        if (st) {
            free(c);
            return st;
        }
        c->slots = p;
        chunks[nchunks++] = c;
    }
    c->h[c->used] = (struct cond_handle){ g, dflt, flags };
    c->slots[c->used] = dflt;
    *out = (uint64_t)(uintptr_t)&c->slots[c->used];
    c->used++;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphConditionalHandleCreate(uint64_t *out, cudaGraph_t g, unsigned dflt,
                                                    unsigned flags)
{
    CHILD_GUARD();
    if (!out || !graph_ok(g) || (flags & ~(unsigned)cudaGraphCondAssignDefault))
        return set_error(cudaErrorInvalidValue);
    LOCK();
    cudaError_t st = new_handle(g, dflt, flags, out);
    UNLOCK();
    return set_error(st);
}

/* is the handle's graph g or a graph that g's body is nested in? */
static int handle_reaches(const struct cond_handle *h, cudaGraph_t g)
{
    for (int depth = 0; g && depth < 4096; depth++) {
        if (h->graph == g)
            return 1;
        g = g->owner ? g->owner->graph : NULL;
    }
    return 0;
}

/* ---------------------------------------------------------------- nodes */
int graph_has_cond(cudaGraph_t g)
{
    for (size_t i = 0; i < g->n; i++) {
        cudaGraphNode_t n = g->nodes[i];
        if (n->type == cudaGraphNodeTypeConditional
            || (n->type == cudaGraphNodeTypeGraph && n->child && graph_has_cond(n->child)))
            return 1;
    }
    return 0;
}

/* may a node of `type` go into g? Only some kinds may go into a body. */
cudaError_t cond_allows(cudaGraph_t g, int type)
{
    if (!g->owner)
        return cudaSuccess;
    switch (type) {
    case cudaGraphNodeTypeKernel: case cudaGraphNodeTypeMemcpy: case cudaGraphNodeTypeMemset:
    case cudaGraphNodeTypeGraph: case cudaGraphNodeTypeEmpty: case cudaGraphNodeTypeConditional:
        return cudaSuccess;
    default:
        return cudaErrorInvalidValue;
    }
}

static void free_bodies(struct cond_node *c)
{
    for (unsigned i = 0; c->bodies && i < c->size; i++)
        if (c->bodies[i])
            graph_free(c->bodies[i]);
    free(c->bodies);
    c->bodies = NULL;
}

void cond_free(cudaGraphNode_t n)
{
    free_bodies(n->cond);
    free(n->cond);
    n->cond = NULL;
}

/* n's parameters: `size` empty bodies (or clones of `from`'s) */
static cudaError_t set_cond(cudaGraphNode_t n, uint64_t handle, int type, unsigned size,
                            const cudaGraph_t *from)
{
    struct cond_node *c = n->cond ? n->cond : calloc(1, sizeof *c);
    cudaGraph_t *bodies = calloc(size + 1, sizeof *bodies);
    if (!c || !bodies) {
        if (!n->cond)
            free(c);
        free(bodies);
        return cudaErrorMemoryAllocation;
    }
    cudaError_t st = cudaSuccess;
    for (unsigned i = 0; i < size && !st; i++)
        st = from ? graph_clone(from[i], &bodies[i]) : graph_new(&bodies[i]);
    for (unsigned i = 0; i < size; i++)
        if (bodies[i])
            bodies[i]->owner = n;
    if (st) {
        struct cond_node tmp = { 0, 0, size, bodies };
        free_bodies(&tmp);
        if (!n->cond)
            free(c);
        return st;
    }
    if (n->cond)
        free_bodies(c);
    *c = (struct cond_node){ handle, type, size, bodies };
    n->cond = c;
    return cudaSuccess;
}

cudaError_t cond_copy(cudaGraphNode_t to, cudaGraphNode_t from)
{
    struct cond_node *c = from->cond;
    return set_cond(to, c->handle, c->type, c->size, c->bodies);
}

/* a new conditional node's parameters; p->phGraph_out gets its bodies */
static cudaError_t node_set_cond(cudaGraphNode_t n, struct cudaConditionalNodeParams *p)
{
    struct cond_handle *h = handle_of(p->handle, NULL);
    if (!h || !handle_reaches(h, n->graph))
        return cudaErrorInvalidValue;
    int ok = (p->type == cudaGraphCondTypeIf && (p->size == 1 || p->size == 2))
          || (p->type == cudaGraphCondTypeWhile && p->size == 1)
          || (p->type == cudaGraphCondTypeSwitch && p->size >= 1 && p->size <= SWITCH_MAX);
    if (!ok)
        return cudaErrorInvalidValue;
    cudaError_t st = set_cond(n, p->handle, p->type, p->size, NULL);
    if (!st)
        p->phGraph_out = n->cond->bodies;
    return st;
}

/* ---------------------------------------------------------------- running */
cudaError_t cond_run(cudaGraphNode_t n, cudaStream_t s)
{
    struct cond_node *c = n->cond;
    volatile uint32_t *slot = NULL;
    if (!handle_of(c->handle, &slot))
        return cudaErrorInvalidValue;
    uint32_t v = *slot;
    switch (c->type) {
    case cudaGraphCondTypeIf:
        if (v)
            return graph_run(c->bodies[0], s);
        return c->size == 2 ? graph_run(c->bodies[1], s) : cudaSuccess;
    case cudaGraphCondTypeWhile:
        for (; v; v = *slot) {          /* evaluated before every iteration */
            cudaError_t st = graph_run(c->bodies[0], s);
            if (st)
                return st;
        }
        return cudaSuccess;
    case cudaGraphCondTypeSwitch:
        return v < c->size ? graph_run(c->bodies[v], s) : cudaSuccess;
    }
    return cudaErrorInvalidValue;
}

/* cudaGraphInstantiate: a cycle in a body (at any depth) is
 * cudaErrorInvalidValue, as one in the graph itself is */
cudaError_t cond_bodies_acyclic(cudaGraph_t g)
{
    for (size_t i = 0; i < g->n; i++) {
        struct cond_node *c = g->nodes[i]->type == cudaGraphNodeTypeConditional
                            ? g->nodes[i]->cond : NULL;
        for (unsigned b = 0; c && b < c->size; b++) {
            int cycle;
            cudaGraphNode_t *order = run_order(c->bodies[b], &cycle);
            if (!order)
                return cycle ? cudaErrorInvalidValue : cudaErrorMemoryAllocation;
            free(order);
            cudaError_t st = cond_bodies_acyclic(c->bodies[b]);
            if (st)
                return st;
        }
    }
    return cudaSuccess;
}

/* the start of a launch of g: handles with cudaGraphCondAssignDefault take
 * their default value (those of every conditional node, bodies included) */
void cond_launch_start(cudaGraph_t g)
{
    for (size_t i = 0; i < g->n; i++) {
        cudaGraphNode_t n = g->nodes[i];
        if (n->type == cudaGraphNodeTypeGraph && n->child)
            cond_launch_start(n->child);
        if (n->type != cudaGraphNodeTypeConditional)
            continue;
        volatile uint32_t *slot = NULL;
        struct cond_handle *h = handle_of(n->cond->handle, &slot);
        if (h && (h->flags & cudaGraphCondAssignDefault))
            *slot = h->dflt;
        for (unsigned b = 0; b < n->cond->size; b++)
            cond_launch_start(n->cond->bodies[b]);
    }
}

/* ------------------------------------------------------ executable update */
/* can graph b update graph a (same nodes in the same order, same types and
 * dependencies, recursively through conditional bodies)? 0 or the reason */
static int same_shape(cudaGraph_t a, cudaGraph_t b)
{
    if (a->n != b->n)
        return cudaGraphExecUpdateErrorTopologyChanged;
    for (size_t i = 0; i < b->n; i++) {
        cudaGraphNode_t x = a->nodes[i], y = b->nodes[i];
        if (x->type != y->type)
            return cudaGraphExecUpdateErrorNodeTypeChanged;
        if (x->ndeps != y->ndeps)
            return cudaGraphExecUpdateErrorTopologyChanged;
        for (size_t j = 0; j < y->ndeps; j++)
            if (!has_dep(x, index_node(b, a, y->deps[j])))
                return cudaGraphExecUpdateErrorTopologyChanged;
        int r = x->type == cudaGraphNodeTypeConditional ? cond_update_mismatch(x, y) : 0;
        if (r)
            return r;
    }
    return 0;
}

/* cudaGraphExecUpdate of conditional node a (executable) from b: the node's
 * type and size may not change (its handle may: the new graph's handle and
 * its default value are what the update takes); the bodies must pair up */
int cond_update_mismatch(cudaGraphNode_t a, cudaGraphNode_t b)
{
    struct cond_node *x = a->cond, *y = b->cond;
    if (x->type != y->type || x->size != y->size)
        return cudaGraphExecUpdateErrorParametersChanged;
    for (unsigned i = 0; i < y->size; i++) {
        int r = same_shape(x->bodies[i], y->bodies[i]);
        if (r)
            return r;
    }
    return 0;
}

/* --------------------------------------------------------- cudaGraphAddNode */
static cudaError_t set_params(cudaGraphNode_t n, const void *params)
{
    struct cudaGraphNodeParams *p = (struct cudaGraphNodeParams *)params;   /* the node's outputs go back to p */
    switch (p->type) {
    case cudaGraphNodeTypeKernel:
        return node_set_kernel(n, &p->kernel);
    case cudaGraphNodeTypeMemcpy:
        return p->memcpy.flags ? cudaErrorInvalidValue : node_set_copy(n, &p->memcpy.copyParams);
    case cudaGraphNodeTypeMemset:
        return node_set_memset(n, &p->memset);
    case cudaGraphNodeTypeHost:
        return set_host_params(n, &p->host);
    case cudaGraphNodeTypeGraph:
        if (!graph_ok(p->graph.graph) || graph_has_cond(p->graph.graph))
            return cudaErrorInvalidValue;
        return graph_clone(p->graph.graph, &n->child);
    case cudaGraphNodeTypeEmpty:
        return cudaSuccess;
    case cudaGraphNodeTypeConditional:
        return node_set_cond(n, &p->conditional);
    default:            /* event, semaphore, memory nodes: not through this call yet */
        return cudaErrorNotSupported;
    }
}

/* edge data: NULL or default edges (all bytes zero) */
static int default_edges(const void *edges, size_t n)
{
    const unsigned char *e = edges;
    for (size_t i = 0; e && i < 8 * n; i++)
        if (e[i])
            return 0;
    return 1;
}

static cudaError_t add_node(cudaGraphNode_t *out, cudaGraph_t g, const cudaGraphNode_t *deps,
                            const void *edges, size_t ndeps, struct cudaGraphNodeParams *p)
{
    if (!out || !p || !default_edges(edges, ndeps))
        return cudaErrorInvalidValue;
    LOCK();
    cudaError_t st = graph_add_set(g, p->type, deps, ndeps, set_params, p, out);
    UNLOCK();
    return st;
}

#if defined(PTXC_CUDART_MAJOR) && PTXC_CUDART_MAJOR == 12
/* CUDA 12: cudaGraphAddNode has no edge data; cudaGraphAddNode_v2 (12.3) has */
EXPORT cudaError_t cudaGraphAddNode(cudaGraphNode_t *out, cudaGraph_t g,
                                    const cudaGraphNode_t *deps, size_t ndeps,
                                    struct cudaGraphNodeParams *p)
{
    CHILD_GUARD();
    return set_error(add_node(out, g, deps, NULL, ndeps, p));
}

EXPORT cudaError_t cudaGraphAddNode_v2(cudaGraphNode_t *out, cudaGraph_t g,
                                       const cudaGraphNode_t *deps, const void *edges,
                                       size_t ndeps, struct cudaGraphNodeParams *p)
{
    CHILD_GUARD();
    return set_error(add_node(out, g, deps, edges, ndeps, p));
}
#else
EXPORT cudaError_t cudaGraphAddNode(cudaGraphNode_t *out, cudaGraph_t g,
                                    const cudaGraphNode_t *deps, const void *edges, size_t ndeps,
                                    struct cudaGraphNodeParams *p)
{
    CHILD_GUARD();
    return set_error(add_node(out, g, deps, edges, ndeps, p));
}
#endif
