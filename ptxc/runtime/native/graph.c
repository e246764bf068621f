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
 * graph node runs its graph, an empty node does nothing.
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
#define EXEC_MAGIC 0x45584543u

struct CUgraphExec_st {
    uint32_t magic;
    cudaGraph_t graph;       /* the private copy that runs */
    unsigned long long flags;
};

int graph_ok(cudaGraph_t g) { return g && g->magic == GRAPH_MAGIC; }
int node_ok(cudaGraphNode_t n) { return n && n->magic == NODE_MAGIC; }
static int exec_ok(cudaGraphExec_t e) { return e && e->magic == EXEC_MAGIC; }

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

static void node_free(cudaGraphNode_t n)
{
    free(n->deps);
    free(n->args.bytes);
    free(n->args.argv);
    if (n->child)
        graph_free(n->child);
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

static int has_dep(cudaGraphNode_t n, cudaGraphNode_t d)
{
    for (size_t i = 0; i < n->ndeps; i++)
        if (n->deps[i] == d)
            return 1;
    return 0;
}

static cudaError_t add_dep(cudaGraphNode_t n, cudaGraphNode_t d)
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

/* ----------------------------------------------------------- running */
cudaError_t shim_copy(void *dst, const void *src, size_t n, int kind);   /* memory.c */

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
    default:
        return cudaSuccess;
    }
}

/* the nodes of g in the order they run (Kahn's algorithm, earliest added
 * first among the ready ones); NULL and *cycle = 1 if g has a cycle */
static cudaGraphNode_t *run_order(cudaGraph_t g, int *cycle)
{
    size_t n = g->n;
    cudaGraphNode_t *order = calloc(n + 1, sizeof *order);
    char *done = calloc(n + 1, 1);
    *cycle = 0;
    if (!order || !done) {
        free(order);
        free(done);
        return NULL;
    }
    for (size_t k = 0; k < n; k++) {
        size_t pick = n;
        for (size_t i = 0; i < n && pick == n; i++) {
            if (done[i])
                continue;
            int ready = 1;
            for (size_t j = 0; j < g->nodes[i]->ndeps && ready; j++)
                for (size_t m = 0; m < n; m++)
                    if (g->nodes[m] == g->nodes[i]->deps[j]) {
                        ready = done[m];
                        break;
                    }
            if (ready)
                pick = i;
        }
        if (pick == n) {
            *cycle = 1;
            free(order);
            free(done);
            return NULL;
        }
        done[pick] = 1;
        order[k] = g->nodes[pick];
    }
    free(done);
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
static cudaError_t node_copy_params(cudaGraphNode_t to, cudaGraphNode_t from)
{
    to->copy = from->copy;
    to->set = from->set;
    to->host = from->host;
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
    return cudaSuccess;
}

static cudaGraphNode_t index_node(cudaGraph_t from, cudaGraph_t to, cudaGraphNode_t n)
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

/* ---------------------------------------------------- graph functions */
EXPORT cudaError_t cudaGraphCreate(cudaGraph_t *g, unsigned flags)
{
    if (!g || flags)
        return set_error(cudaErrorInvalidValue);
    LOCK();
    cudaError_t st = graph_new(g);
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t g)
{
    LOCK();
    cudaError_t st = graph_ok(g) ? cudaSuccess : cudaErrorInvalidValue;
    if (!st)
        graph_free(g);
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphClone(cudaGraph_t *out, cudaGraph_t g)
{
    LOCK();
    cudaError_t st = !out || !graph_ok(g) ? cudaErrorInvalidValue : graph_clone(g, out);
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t *out, cudaGraphNode_t orig,
                                            cudaGraph_t clone)
{
    LOCK();
    cudaError_t st = cudaErrorInvalidValue;
    if (out && graph_ok(clone))
        for (size_t i = 0; i < clone->n && st; i++)
            if (clone->nodes[i]->origin == orig) {
                *out = clone->nodes[i];
                st = cudaSuccess;
            }
    UNLOCK();
    return set_error(st);
}

/* add a node of `type` and set its parameters with `set` (NULL: none) */
#define ADD_NODE(type, SET)                                          \
    do {                                                             \
        if (!out)                                                    \
            return set_error(cudaErrorInvalidValue);                 \
        LOCK();                                                      \
        cudaGraphNode_t n_ = NULL;                                   \
        cudaError_t st_ = graph_add(g, type, deps, ndeps, &n_);      \
        if (!st_) {                                                  \
            st_ = SET;                                               \
            if (st_) {                                               \
                g->n--;                                              \
                node_free(n_);                                       \
            } else {                                                 \
                *out = n_;                                           \
            }                                                        \
        }                                                            \
        UNLOCK();                                                    \
        return set_error(st_);                                       \
    } while (0)

EXPORT cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *out, cudaGraph_t g,
                                          const cudaGraphNode_t *deps, size_t ndeps,
                                          const struct cudaKernelNodeParams *p)
{
    ADD_NODE(cudaGraphNodeTypeKernel, node_set_kernel(n_, p));
}

EXPORT cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *out, cudaGraph_t g,
                                          const cudaGraphNode_t *deps, size_t ndeps,
                                          const struct cudaMemcpy3DParms *p)
{
    ADD_NODE(cudaGraphNodeTypeMemcpy, node_set_copy(n_, p));
}

EXPORT cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *out, cudaGraph_t g,
                                            const cudaGraphNode_t *deps, size_t ndeps, void *dst,
                                            const void *src, size_t count, int kind)
{
    ADD_NODE(cudaGraphNodeTypeMemcpy, node_set_copy1d(n_, dst, src, count, kind));
}

EXPORT cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *out, cudaGraph_t g,
                                          const cudaGraphNode_t *deps, size_t ndeps,
                                          const struct cudaMemsetParams *p)
{
    ADD_NODE(cudaGraphNodeTypeMemset, node_set_memset(n_, p));
}

static cudaError_t set_host(cudaGraphNode_t n, const struct cudaHostNodeParams *p)
{
    if (!p || !p->fn)
        return cudaErrorInvalidValue;
    n->host = *p;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *out, cudaGraph_t g,
                                        const cudaGraphNode_t *deps, size_t ndeps,
                                        const struct cudaHostNodeParams *p)
{
    ADD_NODE(cudaGraphNodeTypeHost, set_host(n_, p));
}

EXPORT cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *out, cudaGraph_t g,
                                         const cudaGraphNode_t *deps, size_t ndeps)
{
    ADD_NODE(cudaGraphNodeTypeEmpty, cudaSuccess);
}

static cudaError_t set_child(cudaGraphNode_t n, cudaGraph_t child)
{
    return graph_ok(child) ? graph_clone(child, &n->child) : cudaErrorInvalidValue;
}

EXPORT cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *out, cudaGraph_t g,
                                              const cudaGraphNode_t *deps, size_t ndeps,
                                              cudaGraph_t child)
{
    ADD_NODE(cudaGraphNodeTypeGraph, set_child(n_, child));
}

EXPORT cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t n, cudaGraph_t *out)
{
    if (!node_ok(n) || n->type != cudaGraphNodeTypeGraph || !out)
        return set_error(cudaErrorInvalidValue);
    *out = n->child;
    return cudaSuccess;
}

/* edges from[i] -> to[i] (to[i] depends on from[i]); edge data must be default */
EXPORT cudaError_t cudaGraphAddDependencies(cudaGraph_t g, const cudaGraphNode_t *from,
                                            const cudaGraphNode_t *to, const void *edge_data,
                                            size_t n)
{
    (void)edge_data;
    if (!graph_ok(g) || (n && (!from || !to)))
        return set_error(cudaErrorInvalidValue);
    LOCK();
    cudaError_t st = cudaSuccess;
    for (size_t i = 0; i < n && !st; i++)
        st = node_ok(to[i]) && to[i]->graph == g ? add_dep(to[i], from[i]) : cudaErrorInvalidValue;
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphRemoveDependencies(cudaGraph_t g, const cudaGraphNode_t *from,
                                               const cudaGraphNode_t *to, const void *edge_data,
                                               size_t n)
{
    (void)edge_data;
    if (!graph_ok(g) || (n && (!from || !to)))
        return set_error(cudaErrorInvalidValue);
    LOCK();
    cudaError_t st = cudaSuccess;
    for (size_t i = 0; i < n && !st; i++) {
        cudaGraphNode_t t = to[i];
        st = node_ok(t) && t->graph == g && has_dep(t, from[i]) ? cudaSuccess
                                                                : cudaErrorInvalidValue;
        for (size_t j = 0; !st && j < t->ndeps; j++)
            if (t->deps[j] == from[i]) {
                t->deps[j] = t->deps[--t->ndeps];
                break;
            }
    }
    UNLOCK();
    return set_error(st);
}

/* the list-returning calls: with out NULL, *count = the number; otherwise
 * up to *count entries are written and *count becomes the number written
 * (the entries past the end of a longer array are set to NULL) */
static cudaError_t give_list(cudaGraphNode_t *out, size_t *count, cudaGraphNode_t *items, size_t n)
{
    if (!count)
        return cudaErrorInvalidValue;
    if (out) {
        for (size_t i = 0; i < *count; i++)
            out[i] = i < n ? items[i] : NULL;
        if (n < *count)
            *count = n;
    } else {
        *count = n;
    }
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphGetNodes(cudaGraph_t g, cudaGraphNode_t *nodes, size_t *count)
{
    if (!graph_ok(g))
        return set_error(cudaErrorInvalidValue);
    LOCK();
    cudaError_t st = give_list(nodes, count, g->nodes, g->n);
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphGetRootNodes(cudaGraph_t g, cudaGraphNode_t *nodes, size_t *count)
{
    if (!graph_ok(g))
        return set_error(cudaErrorInvalidValue);
    LOCK();
    cudaGraphNode_t *roots = calloc(g->n + 1, sizeof *roots);
    size_t nroots = 0;
    for (size_t i = 0; roots && i < g->n; i++)
        if (!g->nodes[i]->ndeps)
            roots[nroots++] = g->nodes[i];
    cudaError_t st = roots ? give_list(nodes, count, roots, nroots) : cudaErrorMemoryAllocation;
    free(roots);
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t n, cudaGraphNode_t *deps,
                                                void *edge_data, size_t *count)
{
    if (!node_ok(n) || edge_data)
        return set_error(cudaErrorInvalidValue);
    LOCK();
    cudaError_t st = give_list(deps, count, n->deps, n->ndeps);
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t n, cudaGraphNode_t *nodes,
                                                  void *edge_data, size_t *count)
{
    if (!node_ok(n) || edge_data)
        return set_error(cudaErrorInvalidValue);
    LOCK();
    cudaGraph_t g = n->graph;
    cudaGraphNode_t *users = calloc(g->n + 1, sizeof *users);
    size_t nusers = 0;
    for (size_t i = 0; users && i < g->n; i++)
        if (has_dep(g->nodes[i], n))
            users[nusers++] = g->nodes[i];
    cudaError_t st = users ? give_list(nodes, count, users, nusers) : cudaErrorMemoryAllocation;
    free(users);
    UNLOCK();
    return set_error(st);
}

/* the edges, in the order of the nodes they lead to, then of their dependencies */
EXPORT cudaError_t cudaGraphGetEdges(cudaGraph_t g, cudaGraphNode_t *from, cudaGraphNode_t *to,
                                     void *edge_data, size_t *count)
{
    if (!graph_ok(g) || !count || edge_data || (!from != !to))
        return set_error(cudaErrorInvalidValue);
    LOCK();
    size_t k = 0;
    for (size_t i = 0; i < g->n; i++)
        for (size_t j = 0; j < g->nodes[i]->ndeps; j++, k++)
            if (from && k < *count) {
                from[k] = g->nodes[i]->deps[j];
                to[k] = g->nodes[i];
            }
    if (from)
        for (size_t i = k; i < *count; i++)
            from[i] = to[i] = NULL;
    if (!from || k < *count)
        *count = k;
    UNLOCK();
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphNodeGetType(cudaGraphNode_t n, int *type)
{
    if (!node_ok(n) || !type)
        return set_error(cudaErrorInvalidValue);
    *type = n->type;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphDestroyNode(cudaGraphNode_t n)
{
    if (!node_ok(n))
        return set_error(cudaErrorInvalidValue);
    LOCK();
    cudaGraph_t g = n->graph;
    size_t k = 0;
    for (size_t i = 0; i < g->n; i++) {
        cudaGraphNode_t m = g->nodes[i];
        for (size_t j = 0; j < m->ndeps; j++)
            if (m->deps[j] == n)
                m->deps[j--] = m->deps[--m->ndeps];
        if (m != n)
            g->nodes[k++] = m;
    }
    g->n = k;
    node_free(n);
    UNLOCK();
    return cudaSuccess;
}

/* ---------------------------------------------- node parameter access */
#define NODE_OF(n, t) (node_ok(n) && (n)->type == (t))

EXPORT cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t n, struct cudaKernelNodeParams *p)
{
    if (!NODE_OF(n, cudaGraphNodeTypeKernel) || !p)
        return set_error(cudaErrorInvalidValue);
    *p = n->kernel;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t n,
                                                const struct cudaKernelNodeParams *p)
{
    if (!NODE_OF(n, cudaGraphNodeTypeKernel))
        return set_error(cudaErrorInvalidValue);
    LOCK();
    cudaError_t st = node_set_kernel(n, p);
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t n, struct cudaMemcpy3DParms *p)
{
    if (!NODE_OF(n, cudaGraphNodeTypeMemcpy) || !p)
        return set_error(cudaErrorInvalidValue);
    *p = n->copy;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphMemcpyNodeSetParams(cudaGraphNode_t n, const struct cudaMemcpy3DParms *p)
{
    if (!NODE_OF(n, cudaGraphNodeTypeMemcpy))
        return set_error(cudaErrorInvalidValue);
    return set_error(node_set_copy(n, p));
}

EXPORT cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t n, void *dst, const void *src,
                                                  size_t count, int kind)
{
    if (!NODE_OF(n, cudaGraphNodeTypeMemcpy))
        return set_error(cudaErrorInvalidValue);
    return set_error(node_set_copy1d(n, dst, src, count, kind));
}

EXPORT cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t n, struct cudaMemsetParams *p)
{
    if (!NODE_OF(n, cudaGraphNodeTypeMemset) || !p)
        return set_error(cudaErrorInvalidValue);
    *p = n->set;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphMemsetNodeSetParams(cudaGraphNode_t n, const struct cudaMemsetParams *p)
{
    if (!NODE_OF(n, cudaGraphNodeTypeMemset))
        return set_error(cudaErrorInvalidValue);
    return set_error(node_set_memset(n, p));
}

EXPORT cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t n, struct cudaHostNodeParams *p)
{
    if (!NODE_OF(n, cudaGraphNodeTypeHost) || !p)
        return set_error(cudaErrorInvalidValue);
    *p = n->host;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t n, const struct cudaHostNodeParams *p)
{
    if (!NODE_OF(n, cudaGraphNodeTypeHost))
        return set_error(cudaErrorInvalidValue);
    return set_error(set_host(n, p));
}

/* ---------------------------------------------------- executable graphs */
static cudaError_t instantiate(cudaGraphExec_t *out, cudaGraph_t g, unsigned long long flags)
{
    if (!out || !graph_ok(g))
        return cudaErrorInvalidValue;
    int cycle;
    cudaGraphNode_t *order = run_order(g, &cycle);
    if (!order)
        return cycle ? cudaErrorInvalidValue : cudaErrorMemoryAllocation;
    free(order);
    struct CUgraphExec_st *e = calloc(1, sizeof *e);
    if (!e)
        return cudaErrorMemoryAllocation;
    cudaError_t st = graph_clone(g, &e->graph);
    if (st) {
        free(e);
        return st;
    }
    e->magic = EXEC_MAGIC;
    e->flags = flags;
    *out = e;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *out, cudaGraph_t g,
                                        unsigned long long flags)
{
    LOCK();
    cudaError_t st = instantiate(out, g, flags);
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *out, cudaGraph_t g,
                                                 unsigned long long flags)
{
    return cudaGraphInstantiate(out, g, flags);
}

EXPORT cudaError_t cudaGraphExecGetFlags(cudaGraphExec_t e, unsigned long long *flags)
{
    if (!exec_ok(e) || !flags)
        return set_error(cudaErrorInvalidValue);
    *flags = e->flags;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e)
{
    if (!exec_ok(e))
        return set_error(cudaErrorInvalidValue);
    LOCK();
    graph_free(e->graph);
    e->magic = 0;
    free(e);
    UNLOCK();
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s)
{
    if (!exec_ok(e))
        return set_error(cudaErrorInvalidValue);
    if (!stream_valid(s))
        return set_error(cudaErrorInvalidResourceHandle);
    LOCK();
    int c = capture_state(s);     /* launched into a capture: a child graph node */
    cudaError_t st = c ? (c < 0 ? capture_graph(s, e->graph) : c) : graph_run(e->graph, s);
    UNLOCK();
    return set_error(st);
}

/* nothing to upload: the graph runs in the shim */
EXPORT cudaError_t cudaGraphUpload(cudaGraphExec_t e, cudaStream_t s)
{
    if (!exec_ok(e))
        return set_error(cudaErrorInvalidValue);
    return stream_valid(s) ? cudaSuccess : set_error(cudaErrorInvalidResourceHandle);
}

/* the executable graph's node made from node n of the graph it came from */
static cudaGraphNode_t exec_node(cudaGraphExec_t e, cudaGraphNode_t n, int type)
{
    if (!exec_ok(e) || !node_ok(n) || n->type != type)
        return NULL;
    for (size_t i = 0; i < e->graph->n; i++)
        if (e->graph->nodes[i]->origin == n || e->graph->nodes[i]->paired == n)
            return e->graph->nodes[i];
    return NULL;
}

EXPORT cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t n,
                                                    const struct cudaKernelNodeParams *p)
{
    LOCK();
    cudaGraphNode_t m = exec_node(e, n, cudaGraphNodeTypeKernel);
    cudaError_t st = m ? node_set_kernel(m, p) : cudaErrorInvalidValue;
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t n,
                                                    const struct cudaMemcpy3DParms *p)
{
    LOCK();
    cudaGraphNode_t m = exec_node(e, n, cudaGraphNodeTypeMemcpy);
    cudaError_t st = m ? node_set_copy(m, p) : cudaErrorInvalidValue;
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t e, cudaGraphNode_t n,
                                                      void *dst, const void *src, size_t count,
                                                      int kind)
{
    LOCK();
    cudaGraphNode_t m = exec_node(e, n, cudaGraphNodeTypeMemcpy);
    cudaError_t st = m ? node_set_copy1d(m, dst, src, count, kind) : cudaErrorInvalidValue;
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t n,
                                                    const struct cudaMemsetParams *p)
{
    LOCK();
    cudaGraphNode_t m = exec_node(e, n, cudaGraphNodeTypeMemset);
    cudaError_t st = m ? node_set_memset(m, p) : cudaErrorInvalidValue;
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t n,
                                                  const struct cudaHostNodeParams *p)
{
    LOCK();
    cudaGraphNode_t m = exec_node(e, n, cudaGraphNodeTypeHost);
    cudaError_t st = m ? set_host(m, p) : cudaErrorInvalidValue;
    UNLOCK();
    return set_error(st);
}

struct cudaGraphExecUpdateResultInfo { int result; cudaGraphNode_t errorNode, errorFromNode; };
enum { updateSuccess = 0, updateTopologyChanged = 2, updateNodeTypeChanged = 3 };

/* why g's node i cannot update e's node i (0: it can): nodes pair up in the
 * order they were added, and their dependencies must pair up the same way */
static int update_mismatch(cudaGraph_t eg, cudaGraph_t g, size_t i)
{
    cudaGraphNode_t a = eg->nodes[i], b = g->nodes[i];
    if (a->type != b->type)
        return updateNodeTypeChanged;
    if (a->ndeps != b->ndeps)
        return updateTopologyChanged;
    for (size_t j = 0; j < b->ndeps; j++)
        if (!has_dep(a, index_node(g, eg, b->deps[j])))
            return updateTopologyChanged;
    return updateSuccess;
}

EXPORT cudaError_t cudaGraphExecUpdate(cudaGraphExec_t e, cudaGraph_t g,
                                       struct cudaGraphExecUpdateResultInfo *info)
{
    if (!exec_ok(e) || !graph_ok(g))
        return set_error(cudaErrorInvalidValue);
    LOCK();
    struct cudaGraphExecUpdateResultInfo r = { updateSuccess, NULL, NULL };
    cudaGraph_t eg = e->graph;
    if (eg->n != g->n)
        r.result = updateTopologyChanged;
    for (size_t i = 0; i < g->n && !r.result; i++)
        if ((r.result = update_mismatch(eg, g, i)))
            r.errorNode = g->nodes[i];
    cudaError_t st = cudaSuccess;
    for (size_t i = 0; i < g->n && !r.result && !st; i++) {
        st = node_copy_params(eg->nodes[i], g->nodes[i]);
        eg->nodes[i]->paired = g->nodes[i];
    }
    UNLOCK();
    if (info)
        *info = r;
    return set_error(r.result ? cudaErrorGraphExecUpdateFailure : st);
}

ALIAS(cudaGraphLaunch_ptsz, cudaGraphLaunch);
ALIAS(cudaGraphUpload_ptsz, cudaGraphUpload);
