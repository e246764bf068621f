/* CUDA graphs built explicitly (cudaGraphCreate, cudaGraphAdd*Node,
 * cudaGraphAddDependencies ...), instantiated and launched.
 *
 * Semantics (CUDA Runtime API, "Graph Management"): a graph is a DAG of
 * nodes; a launch runs every node after the nodes it depends on. ptxc runs
 * the nodes one at a time in a deterministic topological order: among the
 * nodes whose dependencies have all run, the one added to the graph first
 * (Kahn's algorithm with the addition order as priority), so a captured
 * graph runs its operations in the order the application issued them. Each
 * node runs as the equivalent stream operation on the launch's stream: a
 * kernel node as cudaLaunchKernel (the launch is measured and reported like
 * any other), a memcpy node as a pitched 3D copy, a memset node as a 2D set
 * of 1-, 2- or 4-byte elements, a host node calls its function, a child
 * graph node runs its graph, an empty node does nothing, memory alloc
 * and free nodes make and free their allocation (graph_mem.c), a
 * conditional node runs its body graphs as its handle's value says
 * (graph_cond.c).
 *
 * Parameters are copied when a node is added or set (kernel arguments
 * included: kernelParams[i] points at argument i, whose bytes are copied
 * then, as CUDA does). cudaGraphInstantiate takes a private copy of the
 * graph, so later changes to the graph do not change the executable graph;
 * cudaGraphExec*SetParams and cudaGraphExecUpdate change the copy.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "graph.h"

#define GRAPH_MAGIC 0x47524150u
#define NODE_MAGIC 0x4e4f4445u

int graph_ok(cudaGraph_t g) { return g && g->magic == GRAPH_MAGIC; }
int node_ok(cudaGraphNode_t n) { return n && n->magic == NODE_MAGIC; }

static int grow(void **p, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 1;
    size_t c = *cap ? *cap * 2 : 8;
    void *t = realloc(*p, c * elem);
    if (!t)
        return 0;
    *p = t;
    *cap = c;
    return 1;
}

/* ------------------------------------------------------------ objects */
cudaError_t graph_new(cudaGraph_t *out)
{
    struct CUgraph_st *g = calloc(1, sizeof *g);
    if (!g)
        return cudaErrorMemoryAllocation;
    g->magic = GRAPH_MAGIC;
    *out = g;
    return cudaSuccess;
}

void node_free(cudaGraphNode_t n)
{
    free(n->deps);
    free(n->args.bytes);
    free(n->args.argv);
    if (n->child)
        graph_free(n->child);
    graph_mem_free(n->mem);
    if (n->cond)
        cond_free(n);
    n->magic = 0;
    free(n);
}

void graph_free(cudaGraph_t g)
{
    for (size_t i = 0; i < g->n; i++)
        node_free(g->nodes[i]);
    free(g->nodes);
    g->magic = 0;
    free(g);
}

int has_dep(cudaGraphNode_t n, cudaGraphNode_t d)
{
    for (size_t i = 0; i < n->ndeps; i++)
        if (n->deps[i] == d)
            return 1;
    return 0;
}

cudaError_t add_dep(cudaGraphNode_t n, cudaGraphNode_t d)
{
    if (!node_ok(d) || d->graph != n->graph || d == n)
        return cudaErrorInvalidValue;
    if (has_dep(n, d))
        return cudaSuccess;
    if (!grow((void **)&n->deps, &n->cap_deps, n->ndeps, sizeof *n->deps))
        return cudaErrorMemoryAllocation;
    n->deps[n->ndeps++] = d;
    return cudaSuccess;
}

/* a new node of `type` depending on deps[0..ndeps) */
cudaError_t graph_add(cudaGraph_t g, int type, const cudaGraphNode_t *deps, size_t ndeps,
                      cudaGraphNode_t *out)
{
    if (!graph_ok(g) || !out || (ndeps && !deps))
        return cudaErrorInvalidValue;
    for (size_t i = 0; i < ndeps; i++)
        if (!node_ok(deps[i]) || deps[i]->graph != g)
            return cudaErrorInvalidValue;
    cudaError_t allowed = cond_allows(g, type);  /* a conditional body's rules */
    if (allowed)
        return allowed;
    struct CUgraphNode_st *n = calloc(1, sizeof *n);
    if (!n || !grow((void **)&g->nodes, &g->cap, g->n, sizeof *g->nodes)) {
        free(n);
        return cudaErrorMemoryAllocation;
    }
    n->magic = NODE_MAGIC;
    n->type = type;
    n->graph = g;
    for (size_t i = 0; i < ndeps; i++)
        if (add_dep(n, deps[i])) {
            node_free(n);
            return cudaErrorMemoryAllocation;
        }
    g->nodes[g->n++] = n;
    *out = n;
    return cudaSuccess;
}

/* graph_add, then set(n, params) fills the new node's parameters; when that
 * fails the node is taken out again (the caller holds the lock) */
cudaError_t graph_add_set(cudaGraph_t g, int type, const cudaGraphNode_t *deps, size_t ndeps,
                          node_setter set, const void *params, cudaGraphNode_t *out)
{
    cudaGraphNode_t n = NULL;
    cudaError_t st = graph_add(g, type, deps, ndeps, &n);
    if (!st) {
        st = set(n, params);
        if (st) {
            g->n--;
            node_free(n);
        } else {
            *out = n;
        }
    }
    return st;
}

/* -------------------------------------------------------- parameters */
/* CUDA's `extra` launch format: {1 (buffer pointer), buf, 2 (buffer size), &size, 0} */
#define EXTRA_BUFFER_POINTER ((void *)1)
#define EXTRA_BUFFER_SIZE ((void *)2)

static cudaError_t copy_args(struct kargs *a, const void *func, void **params, void **extra)
{
    uint32_t n = 0, nbytes = 0;
    const uint32_t *offsets = NULL, *sizes = NULL;
    cudaError_t st = kernel_param_layout(func, &n, &nbytes, &offsets, &sizes);
    if (st)
        return st;
    const char *buf = NULL;
    size_t bufsize = 0;
    for (size_t i = 0; extra && extra[i]; i += 2) {
        if (extra[i] == EXTRA_BUFFER_POINTER)
            buf = extra[i + 1];
        else if (extra[i] == EXTRA_BUFFER_SIZE && extra[i + 1])
            bufsize = *(size_t *)extra[i + 1];
        else
            return cudaErrorInvalidValue;
    }
    if (n && !params && (!buf || bufsize < nbytes))
        return cudaErrorInvalidValue;
    char *bytes = calloc(1, nbytes + 1);
    void **argv = calloc(n + 1, sizeof *argv);
    if (!bytes || !argv) {
        free(bytes);
        free(argv);
        return cudaErrorMemoryAllocation;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (offsets[i] + (uint64_t)sizes[i] > nbytes)
            continue;
        memcpy(bytes + offsets[i], params ? params[i] : buf + offsets[i], sizes[i]);
        argv[i] = bytes + offsets[i];
    }
    free(a->bytes);
    free(a->argv);
    *a = (struct kargs){ bytes, nbytes, n, argv };
    return cudaSuccess;
}

cudaError_t node_set_kernel(cudaGraphNode_t n, const struct cudaKernelNodeParams *p)
{
    if (!p || !p->func)
        return cudaErrorInvalidValue;
    if (p->kernelParams && p->extra)
        return cudaErrorInvalidValue;
    cudaError_t st = copy_args(&n->args, p->func, p->kernelParams, p->extra);
    if (st)
        return st;
    n->kernel = *p;
    n->kernel.kernelParams = n->args.argv;
    n->kernel.extra = NULL;
    return cudaSuccess;
}

cudaError_t node_set_copy(cudaGraphNode_t n, const struct cudaMemcpy3DParms *p)
{
    if (!p)
        return cudaErrorInvalidValue;
    if (p->srcArray || p->dstArray)     /* ptxc has no CUDA arrays */
        return cudaErrorInvalidValue;
    if (p->kind < cudaMemcpyHostToHost || p->kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    n->copy = *p;
    return cudaSuccess;
}

cudaError_t node_set_copy1d(cudaGraphNode_t n, void *dst, const void *src, size_t count, int kind)
{
    struct cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = (struct cudaPitchedPtr){ (void *)src, count, count, 1 };
    p.dstPtr = (struct cudaPitchedPtr){ dst, count, count, 1 };
    p.extent = (struct cudaExtent){ count, 1, 1 };
    p.kind = kind;
    return node_set_copy(n, &p);
}

cudaError_t node_set_memset(cudaGraphNode_t n, const struct cudaMemsetParams *p)
{
    if (!p || !p->dst)
        return cudaErrorInvalidValue;
    if (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4)
        return cudaErrorInvalidValue;
    if (p->height > 1 && p->pitch < p->width * p->elementSize)
        return cudaErrorInvalidValue;
    n->set = *p;
    return cudaSuccess;
}

cudaError_t set_host_params(cudaGraphNode_t n, const struct cudaHostNodeParams *p)
{
    if (!p || !p->fn)
        return cudaErrorInvalidValue;
    n->host = *p;
    return cudaSuccess;
}

/* ----------------------------------------------------------- running */
cudaError_t shim_copy(void *dst, const void *src, size_t n, int kind);   /* memory.c */
void shim_note_write(const void *dst, const void *src, size_t width, size_t rows, size_t dpitch,
                     size_t spitch);                                     /* memory.c */

static cudaError_t run_copy(const struct cudaMemcpy3DParms *p)
{
    const struct cudaPitchedPtr *s = &p->srcPtr, *d = &p->dstPtr;
    size_t w = p->extent.width, h = p->extent.height, depth = p->extent.depth;
    if (!w || !h || !depth)
        return cudaSuccess;
    if (w > s->pitch || w > d->pitch)
        return cudaErrorInvalidPitchValue;
    size_t sslice = s->pitch * s->ysize, dslice = d->pitch * d->ysize;
    for (size_t z = 0; z < depth; z++)
        for (size_t y = 0; y < h; y++) {
            const char *from = (const char *)s->ptr + (p->srcPos.z + z) * sslice
                             + (p->srcPos.y + y) * s->pitch + p->srcPos.x;
            char *to = (char *)d->ptr + (p->dstPos.z + z) * dslice
                     + (p->dstPos.y + y) * d->pitch + p->dstPos.x;
            cudaError_t st = shim_copy(to, from, w, p->kind);
            if (st)
                return st;
        }
    return cudaSuccess;
}

static cudaError_t run_memset(const struct cudaMemsetParams *p)
{
    size_t es = p->elementSize, row = p->width * es, h = p->height;
    if (!row || !h)
        return cudaSuccess;
    size_t pitch = h > 1 ? p->pitch : row;
    if (!is_mapped_range(p->dst, pitch * (h - 1) + row))
        return cudaErrorInvalidValue;
    for (size_t y = 0; y < h; y++) {
        char *at = (char *)p->dst + y * pitch;
        for (size_t x = 0; x < p->width; x++)
            memcpy(at + x * es, &p->value, es);   /* the low bytes (little-endian) */
    }
    shim_note_write(p->dst, NULL, row, h, pitch, 0);
    return cudaSuccess;
}

static cudaError_t run_node(cudaGraphNode_t n, cudaStream_t s)
{
    switch (n->type) {
    case cudaGraphNodeTypeKernel:
        return cudaLaunchKernel(n->kernel.func, n->kernel.gridDim, n->kernel.blockDim,
                                n->args.argv, n->kernel.sharedMemBytes, s);
    case cudaGraphNodeTypeMemcpy:
        return run_copy(&n->copy);
    case cudaGraphNodeTypeMemset:
        return run_memset(&n->set);
    case cudaGraphNodeTypeHost:
        n->host.fn(n->host.userData);
        return cudaSuccess;
    case cudaGraphNodeTypeGraph:
        return graph_run(n->child, s);
    case cudaGraphNodeTypeMemAlloc:
    case cudaGraphNodeTypeMemFree:
        return graph_mem_run(n);
    case cudaGraphNodeTypeConditional:
        return cond_run(n, s);
    default:
        return cudaSuccess;
    }
}

/* the nodes of g in the order they run (Kahn's algorithm, earliest added
 * first among the ready ones); NULL and *cycle = 1 if g has a cycle */
cudaGraphNode_t *run_order(cudaGraph_t g, int *cycle)
{
    size_t n = g->n;
    cudaGraphNode_t *order = calloc(n + 1, sizeof *order);
    size_t *waiting = calloc(n + 1, sizeof *waiting);   /* dependencies not run yet */
    *cycle = 0;
    if (!order || !waiting) {
        free(order);
        free(waiting);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        waiting[i] = g->nodes[i]->ndeps;        /* deps are distinct (add_dep) */
    for (size_t k = 0; k < n; k++) {
        size_t pick = 0;
        while (pick < n && waiting[pick])       /* the earliest added ready node */
            pick++;
        if (pick == n) {
            *cycle = 1;
            free(order);
            free(waiting);
            return NULL;
        }
        waiting[pick] = SIZE_MAX;               /* run */
        order[k] = g->nodes[pick];
        for (size_t i = 0; i < n; i++)          /* its dependents wait for one less */
            if (waiting[i] != SIZE_MAX && has_dep(g->nodes[i], order[k]))
                waiting[i]--;
    }
    free(waiting);
    return order;
}

cudaError_t graph_run(cudaGraph_t g, cudaStream_t s)
{
    int cycle;
    cudaGraphNode_t *order = run_order(g, &cycle);
    if (!order)
        return cycle ? cudaErrorInvalidValue : cudaErrorMemoryAllocation;
    cudaError_t st = cudaSuccess;
    for (size_t i = 0; i < g->n && !st; i++)
        st = run_node(order[i], s);
    free(order);
    return st;
}

/* ------------------------------------------------------------ cloning */
cudaError_t node_copy_params(cudaGraphNode_t to, cudaGraphNode_t from)
{
    to->copy = from->copy;
    to->set = from->set;
    to->host = from->host;
    if (from->mem) {
        graph_mem_free(to->mem);
        if (!(to->mem = graph_mem_copy(from->mem)))
            return cudaErrorMemoryAllocation;
    }
    if (from->type == cudaGraphNodeTypeKernel) {
        struct cudaKernelNodeParams p = from->kernel;
        p.kernelParams = from->args.argv;
        cudaError_t st = node_set_kernel(to, &p);
        if (st)
            return st;
    }
    if (from->type == cudaGraphNodeTypeGraph) {
        cudaGraph_t c;
        cudaError_t st = graph_clone(from->child, &c);
        if (st)
            return st;
        if (to->child)
            graph_free(to->child);
        to->child = c;
    }
    if (from->type == cudaGraphNodeTypeConditional)
        return cond_copy(to, from);
    return cudaSuccess;
}

cudaGraphNode_t index_node(cudaGraph_t from, cudaGraph_t to, cudaGraphNode_t n)
{
    for (size_t i = 0; i < from->n; i++)
        if (from->nodes[i] == n)
            return to->nodes[i];
    return NULL;
}

cudaError_t graph_clone(cudaGraph_t g, cudaGraph_t *out)
{
    cudaGraph_t c = NULL;
    cudaError_t st = graph_new(&c);
    for (size_t i = 0; i < g->n && !st; i++) {
        cudaGraphNode_t n;
        st = graph_add(c, g->nodes[i]->type, NULL, 0, &n);
        if (!st) {
            n->origin = g->nodes[i];
            st = node_copy_params(n, g->nodes[i]);
        }
    }
    for (size_t i = 0; i < g->n && !st; i++)
        for (size_t j = 0; j < g->nodes[i]->ndeps && !st; j++)
            st = add_dep(c->nodes[i], index_node(g, c, g->nodes[i]->deps[j]));
    if (st) {
        if (c)
            graph_free(c);
        return st;
    }
    *out = c;
    return cudaSuccess;
}
