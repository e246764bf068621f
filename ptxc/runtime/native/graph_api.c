/* The exported graph-building and graph-query calls of the CUDA Runtime
 * API ("Graph Management"): cudaGraphCreate, cudaGraphAdd*Node,
 * cudaGraphAddDependencies, cudaGraphGetNodes ..., and the get/set calls of
 * node parameters. The objects and their semantics are graph.c's.
 *
 * Lists (nodes, root nodes, dependencies, edges) are in the order the nodes
 * were added to the graph.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "graph.h"

/* ---------------------------------------------------- graph functions */
EXPORT cudaError_t cudaGraphCreate(cudaGraph_t *g, unsigned flags)
{
    CHILD_GUARD();
    if (!g || flags)
        return set_error(cudaErrorInvalidValue);
    LOCK();
    cudaError_t st = graph_new(g);
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t g)
{
    CHILD_GUARD();
    LOCK();
    /* a conditional node's body belongs to the node (graph_cond.c) */
    cudaError_t st = graph_ok(g) && !g->owner ? cudaSuccess : cudaErrorInvalidValue;
    if (!st)
        graph_free(g);
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphClone(cudaGraph_t *out, cudaGraph_t g)
{
    CHILD_GUARD();
    LOCK();
    /* graphs with conditional nodes cannot be cloned (CUDA Runtime API cudaGraphClone) */
    cudaError_t st = !out || !graph_ok(g) || graph_has_cond(g) ? cudaErrorInvalidValue
                   : graph_has_mem_nodes(g) ? cudaErrorNotSupported     /* graph_mem.c */
                   : graph_clone(g, out);
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t *out, cudaGraphNode_t orig,
                                            cudaGraph_t clone)
{
    CHILD_GUARD();
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
    CHILD_GUARD();
    ADD_NODE(cudaGraphNodeTypeKernel, node_set_kernel(n_, p));
}

EXPORT cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *out, cudaGraph_t g,
                                          const cudaGraphNode_t *deps, size_t ndeps,
                                          const struct cudaMemcpy3DParms *p)
{
    CHILD_GUARD();
    ADD_NODE(cudaGraphNodeTypeMemcpy, node_set_copy(n_, p));
}

EXPORT cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *out, cudaGraph_t g,
                                            const cudaGraphNode_t *deps, size_t ndeps, void *dst,
                                            const void *src, size_t count, int kind)
{
    CHILD_GUARD();
    ADD_NODE(cudaGraphNodeTypeMemcpy, node_set_copy1d(n_, dst, src, count, kind));
}

EXPORT cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *out, cudaGraph_t g,
                                          const cudaGraphNode_t *deps, size_t ndeps,
                                          const struct cudaMemsetParams *p)
{
    CHILD_GUARD();
    ADD_NODE(cudaGraphNodeTypeMemset, node_set_memset(n_, p));
}

EXPORT cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *out, cudaGraph_t g,
                                        const cudaGraphNode_t *deps, size_t ndeps,
                                        const struct cudaHostNodeParams *p)
{
    CHILD_GUARD();
    ADD_NODE(cudaGraphNodeTypeHost, set_host_params(n_, p));
}

EXPORT cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *out, cudaGraph_t g,
                                         const cudaGraphNode_t *deps, size_t ndeps)
{
    CHILD_GUARD();
    ADD_NODE(cudaGraphNodeTypeEmpty, cudaSuccess);
}

static cudaError_t set_child(cudaGraphNode_t n, cudaGraph_t child)
{
    /* a graph with conditional nodes cannot be a child (cudaGraphAddChildGraphNode) */
    if (!graph_ok(child) || graph_has_cond(child))
        return cudaErrorInvalidValue;
    return graph_has_mem_nodes(child) ? cudaErrorNotSupported : graph_clone(child, &n->child);
}

EXPORT cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *out, cudaGraph_t g,
                                              const cudaGraphNode_t *deps, size_t ndeps,
                                              cudaGraph_t child)
{
    CHILD_GUARD();
    ADD_NODE(cudaGraphNodeTypeGraph, set_child(n_, child));
}

EXPORT cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t n, cudaGraph_t *out)
{
    CHILD_GUARD();
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
    CHILD_GUARD();
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
    CHILD_GUARD();
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
    CHILD_GUARD();
    if (!graph_ok(g))
        return set_error(cudaErrorInvalidValue);
    LOCK();
    cudaError_t st = give_list(nodes, count, g->nodes, g->n);
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphGetRootNodes(cudaGraph_t g, cudaGraphNode_t *nodes, size_t *count)
{
    CHILD_GUARD();
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
    CHILD_GUARD();
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
    CHILD_GUARD();
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
    CHILD_GUARD();
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
    CHILD_GUARD();
    if (!node_ok(n) || !type)
        return set_error(cudaErrorInvalidValue);
    *type = n->type;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphDestroyNode(cudaGraphNode_t n)
{
    CHILD_GUARD();
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
    CHILD_GUARD();
    if (!NODE_OF(n, cudaGraphNodeTypeKernel) || !p)
        return set_error(cudaErrorInvalidValue);
    *p = n->kernel;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t n,
                                                const struct cudaKernelNodeParams *p)
{
    CHILD_GUARD();
    if (!NODE_OF(n, cudaGraphNodeTypeKernel))
        return set_error(cudaErrorInvalidValue);
    LOCK();
    cudaError_t st = node_set_kernel(n, p);
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t n, struct cudaMemcpy3DParms *p)
{
    CHILD_GUARD();
    if (!NODE_OF(n, cudaGraphNodeTypeMemcpy) || !p)
        return set_error(cudaErrorInvalidValue);
    *p = n->copy;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphMemcpyNodeSetParams(cudaGraphNode_t n, const struct cudaMemcpy3DParms *p)
{
    CHILD_GUARD();
    if (!NODE_OF(n, cudaGraphNodeTypeMemcpy))
        return set_error(cudaErrorInvalidValue);
    return set_error(node_set_copy(n, p));
}

EXPORT cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t n, void *dst, const void *src,
                                                  size_t count, int kind)
{
    CHILD_GUARD();
    if (!NODE_OF(n, cudaGraphNodeTypeMemcpy))
        return set_error(cudaErrorInvalidValue);
    return set_error(node_set_copy1d(n, dst, src, count, kind));
}

EXPORT cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t n, struct cudaMemsetParams *p)
{
    CHILD_GUARD();
    if (!NODE_OF(n, cudaGraphNodeTypeMemset) || !p)
        return set_error(cudaErrorInvalidValue);
    *p = n->set;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphMemsetNodeSetParams(cudaGraphNode_t n, const struct cudaMemsetParams *p)
{
    CHILD_GUARD();
    if (!NODE_OF(n, cudaGraphNodeTypeMemset))
        return set_error(cudaErrorInvalidValue);
    return set_error(node_set_memset(n, p));
}

EXPORT cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t n, struct cudaHostNodeParams *p)
{
    CHILD_GUARD();
    if (!NODE_OF(n, cudaGraphNodeTypeHost) || !p)
        return set_error(cudaErrorInvalidValue);
    *p = n->host;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t n, const struct cudaHostNodeParams *p)
{
    CHILD_GUARD();
    if (!NODE_OF(n, cudaGraphNodeTypeHost))
        return set_error(cudaErrorInvalidValue);
    return set_error(set_host_params(n, p));
}
