/* Executable graphs (CUDA Runtime API "Graph Management"):
 * cudaGraphInstantiate takes a private copy of the graph (after checking it
 * has no cycle), cudaGraphLaunch runs it on the stream (graph.c: one node at
 * a time, in the deterministic topological order), or records it as a child
 * graph node when the stream is capturing. cudaGraphExec*SetParams change
 * the copy's node made from the given node; cudaGraphExecUpdate copies the
 * parameters of a graph of the same topology (nodes paired in the order
 * they were added, dependencies likewise; else cudaErrorGraphExecUpdateFailure
 * with the reason in the result info).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "graph.h"

#define EXEC_MAGIC 0x45584543u

static int exec_ok(cudaGraphExec_t e) { return e && e->magic == EXEC_MAGIC; }

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
    if (graph_mem_instances(g, 0))      /* one executable graph of memory nodes (graph_mem.c) */
        return cudaErrorInvalidValue;
    cudaError_t bodies = cond_bodies_acyclic(g);     /* conditional nodes' bodies too */
    if (bodies)
        return bodies;
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
    graph_mem_instances(e->graph, 1);
    *out = e;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *out, cudaGraph_t g,
                                        unsigned long long flags)
{
    CHILD_GUARD();
    LOCK();
    cudaError_t st = instantiate(out, g, flags);
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *out, cudaGraph_t g,
                                                 unsigned long long flags)
{
    CHILD_GUARD();
    return cudaGraphInstantiate(out, g, flags);
}

EXPORT cudaError_t cudaGraphExecGetFlags(cudaGraphExec_t e, unsigned long long *flags)
{
    CHILD_GUARD();
    if (!exec_ok(e) || !flags)
        return set_error(cudaErrorInvalidValue);
    *flags = e->flags;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e)
{
    CHILD_GUARD();
    if (!exec_ok(e))
        return set_error(cudaErrorInvalidValue);
    LOCK();
    graph_mem_instances(e->graph, -1);
    graph_free(e->graph);
    e->magic = 0;
    free(e);
    UNLOCK();
    return cudaSuccess;
}

/* graph launches that ran (not those recorded into a capture), and the one
 * running now (0: none); the lock held by cudaGraphLaunch covers both */
static uint64_t graph_launches, graph_current;

uint64_t graph_launch_number(void) { return graph_current; }

static cudaError_t launch_graph(cudaGraph_t g, cudaStream_t s)
{
    graph_current = ++graph_launches;
    cond_launch_start(g);         /* conditional handles take their defaults */
    cudaError_t st = graph_run(g, s);
    graph_current = 0;
    return st;
}

EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s)
{
    CHILD_GUARD();
    if (!exec_ok(e))
        return set_error(cudaErrorInvalidValue);
    if (!stream_valid(s))
        return set_error(cudaErrorInvalidResourceHandle);
    LOCK();
    int c = capture_state(s);     /* launched into a capture: a child graph node */
    cudaError_t st = c ? (c < 0 ? capture_graph(s, e->graph) : c)
                   : graph_mem_prelaunch(e->graph, e->flags);   /* unfreed allocations */
    if (!c && !st)
        st = launch_graph(e->graph, s);
    UNLOCK();
    return set_error(st);
}

/* nothing to upload: the graph runs in the shim */
EXPORT cudaError_t cudaGraphUpload(cudaGraphExec_t e, cudaStream_t s)
{
    CHILD_GUARD();
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
    CHILD_GUARD();
    LOCK();
    cudaGraphNode_t m = exec_node(e, n, cudaGraphNodeTypeKernel);
    cudaError_t st = m ? node_set_kernel(m, p) : cudaErrorInvalidValue;
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t n,
                                                    const struct cudaMemcpy3DParms *p)
{
    CHILD_GUARD();
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
    CHILD_GUARD();
    LOCK();
    cudaGraphNode_t m = exec_node(e, n, cudaGraphNodeTypeMemcpy);
    cudaError_t st = m ? node_set_copy1d(m, dst, src, count, kind) : cudaErrorInvalidValue;
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t n,
                                                    const struct cudaMemsetParams *p)
{
    CHILD_GUARD();
    LOCK();
    cudaGraphNode_t m = exec_node(e, n, cudaGraphNodeTypeMemset);
    cudaError_t st = m ? node_set_memset(m, p) : cudaErrorInvalidValue;
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t n,
                                                  const struct cudaHostNodeParams *p)
{
    CHILD_GUARD();
    LOCK();
    cudaGraphNode_t m = exec_node(e, n, cudaGraphNodeTypeHost);
    cudaError_t st = m ? set_host_params(m, p) : cudaErrorInvalidValue;
    UNLOCK();
    return set_error(st);
}


/* why g's node i cannot update e's node i (0: it can): nodes pair up in the
 * order they were added, and their dependencies must pair up the same way */
static int update_mismatch(cudaGraph_t eg, cudaGraph_t g, size_t i)
{
    cudaGraphNode_t a = eg->nodes[i], b = g->nodes[i];
    if (a->type != b->type)
        return cudaGraphExecUpdateErrorNodeTypeChanged;
    if (a->type == cudaGraphNodeTypeConditional && cond_update_mismatch(a, b))
        return cond_update_mismatch(a, b);
    if (a->ndeps != b->ndeps)
        return cudaGraphExecUpdateErrorTopologyChanged;
    for (size_t j = 0; j < b->ndeps; j++)
        if (!has_dep(a, index_node(g, eg, b->deps[j])))
            return cudaGraphExecUpdateErrorTopologyChanged;
    return cudaGraphExecUpdateSuccess;
}

EXPORT cudaError_t cudaGraphExecUpdate(cudaGraphExec_t e, cudaGraph_t g,
                                       struct cudaGraphExecUpdateResultInfo_st *info)
{
    CHILD_GUARD();
    if (!exec_ok(e) || !graph_ok(g))
        return set_error(cudaErrorInvalidValue);
    LOCK();
    struct cudaGraphExecUpdateResultInfo_st r = { cudaGraphExecUpdateSuccess, NULL, NULL };
    cudaGraph_t eg = e->graph;
    if (eg->n != g->n)
        r.result = cudaGraphExecUpdateErrorTopologyChanged;
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
