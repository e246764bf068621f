/* Stream capture (CUDA Programming Guide, "CUDA Graphs: Creating a Graph
 * Using Stream Capture"; CUDA Runtime API cudaStreamBeginCapture ...).
 *
 * Between cudaStreamBeginCapture(s) and cudaStreamEndCapture(s), the work
 * issued to s is recorded as graph nodes instead of running: kernel
 * launches, cudaMemcpyAsync/cudaMemcpy2DAsync (memcpy nodes),
 * cudaMemsetAsync/cudaMemset2DAsync (memset nodes), cudaLaunchHostFunc
 * (host nodes), cudaGraphLaunch (child graph nodes) and cudaMallocAsync /
 * cudaFreeAsync (memory alloc and free nodes, graph_mem.c). Each stream taking
 * part in a capture has a dependency set: a recorded operation depends on
 * it and then replaces it. cudaEventRecord(e, s) on a capturing stream
 * remembers s's set in e; cudaStreamWaitEvent(t, e) makes t join the
 * capture (fork) or adds e's set to t's (join). cudaStreamEndCapture(s) on
 * the stream that began the capture returns the graph, provided every
 * stream that joined has been joined back (else cudaErrorStreamCaptureUnjoined).
 * cudaStreamBeginCaptureToGraph records into a graph of the caller's (a
 * conditional node's body, graph_cond.c) instead of a new one; its
 * cudaStreamEndCapture may pass no graph pointer, and a failed capture
 * leaves that graph to its owner.
 *
 * Errors as CUDA documents them: synchronising with a capturing stream
 * (cudaStreamSynchronize, cudaStreamQuery, cudaDeviceSynchronize) returns
 * cudaErrorStreamCaptureUnsupported and invalidates the capture; work on
 * the legacy default stream while a blocking stream captures returns
 * cudaErrorStreamCaptureImplicit (and invalidates that capture); work on a
 * stream whose capture was invalidated returns
 * cudaErrorStreamCaptureInvalidated, and so does cudaStreamEndCapture,
 * which then ends the capture with no graph. Operations capture cannot
 * record here (symbol copies, stream callbacks, 3D sets, cooperative
 * launches) return cudaErrorStreamCaptureUnsupported and
 * invalidate the capture.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "graph.h"

#define NON_BLOCKING 1u             /* cudaStreamNonBlocking */
#define EVENT_WAIT_EXTERNAL 1u      /* cudaEventWaitExternal */

struct capture {
    uint64_t id;
    int status;
    int mode;
    pthread_t thread;
    cudaGraph_t graph;
    cudaStream_t origin;
    int into_user_graph;           /* cudaStreamBeginCaptureToGraph: the graph is the caller's */
};

/* a stream taking part in a capture, or an event recorded in one: its
 * dependency set */
struct member {
    const void *handle;
    int event;                     /* an event, not a stream */
    struct capture *cap;
    cudaGraphNode_t *deps;
    size_t n, room;
};

static struct member *members;
static size_t nmembers, room_members;
static uint64_t next_id = 1;
static char edge_zeros[8 * 64];    /* cudaGraphEdgeData of default edges */

static int is_legacy(cudaStream_t s) { return (uintptr_t)s <= 1; }

static struct member *find(const void *handle)
{
    for (size_t i = 0; i < nmembers; i++)
        if (members[i].handle == handle)
            return &members[i];
    return NULL;
}

static void drop(struct member *m)
{
    free(m->deps);
    *m = members[--nmembers];
}

void capture_forget(const void *handle)
{
    LOCK();
    struct member *m = find(handle);
    if (m)
        drop(m);
    UNLOCK();
}

static cudaError_t set_deps(struct member *m, const cudaGraphNode_t *deps, size_t n)
{
    cudaGraphNode_t *d = malloc((n + 1) * sizeof *d);
    if (!d)
        return cudaErrorMemoryAllocation;
    if (n)
        memcpy(d, deps, n * sizeof *d);
    free(m->deps);
    m->deps = d;
    m->n = m->room = n;
    return cudaSuccess;
}

static cudaError_t add_deps(struct member *m, const cudaGraphNode_t *deps, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int have = 0;
        for (size_t j = 0; j < m->n && !have; j++)
            have = m->deps[j] == deps[i];
        if (have)
            continue;
        if (m->n >= m->room) {
            size_t r = m->room ? 2 * m->room : 4;
            cudaGraphNode_t *d = realloc(m->deps, r * sizeof *d);
            if (!d)
                return cudaErrorMemoryAllocation;
            m->deps = d;
            m->room = r;
        }
        m->deps[m->n++] = deps[i];
    }
    return cudaSuccess;
}

static struct member *join(const void *handle, struct capture *cap, int event)
{
    if (nmembers >= room_members) {
        size_t r = room_members ? 2 * room_members : 16;
        struct member *t = realloc(members, r * sizeof *t);
        if (!t)
            return NULL;
        members = t;
        room_members = r;
    }
    struct member *m = &members[nmembers++];
    memset(m, 0, sizeof *m);
    m->handle = handle;
    m->cap = cap;
    m->event = event;
    return m;
}

/* end a capture: its streams and events leave it; the graph is the caller's */
static void finish(struct capture *cap)
{
    for (size_t i = nmembers; i-- > 0;)
        if (members[i].cap == cap)
            drop(&members[i]);
    free(cap);
}

static void invalidate(struct capture *cap)
{
    cap->status = cudaStreamCaptureStatusInvalidated;
}

/* a capture that the legacy stream would implicitly wait for: one with a
 * blocking stream (created without cudaStreamNonBlocking) */
static struct capture *blocking_capture(void)
{
    for (size_t i = 0; i < nmembers; i++) {
        struct member *m = &members[i];
        if (!m->event && !(stream_flags((cudaStream_t)m->handle) & NON_BLOCKING)
            && m->cap->status == cudaStreamCaptureStatusActive)
            return m->cap;
    }
    return NULL;
}

/* is handle a stream taking part in a capture (not an event)? */
static struct member *stream_member(cudaStream_t s)
{
    struct member *m = find(s);
    return m && !m->event ? m : NULL;
}

int capture_state(cudaStream_t s)
{
    LOCK();
    int r = 0;
    if (nmembers && is_legacy(s)) {
        struct capture *cap = blocking_capture();
        if (cap) {
            invalidate(cap);
            r = cudaErrorStreamCaptureImplicit;
        }
    } else if (nmembers) {
        struct member *m = stream_member(s);
        if (m)
            r = m->cap->status == cudaStreamCaptureStatusActive ? -1
                                                              : cudaErrorStreamCaptureInvalidated;
    }
    UNLOCK();
    return r;
}

cudaError_t capture_refuse(cudaStream_t s)
{
    LOCK();
    struct member *m = stream_member(s);
    if (m)
        invalidate(m->cap);
    UNLOCK();
    return cudaErrorStreamCaptureUnsupported;
}

cudaError_t capture_sync(cudaStream_t s, int device)
{
    LOCK();
    cudaError_t st = cudaSuccess;
    for (size_t i = 0; device && i < nmembers; i++)
        if (members[i].cap->status == cudaStreamCaptureStatusActive) {
            invalidate(members[i].cap);
            st = cudaErrorStreamCaptureUnsupported;
        }
    UNLOCK();
    if (device)
        return st;
    int c = capture_state(s);
    if (c < 0)
        return capture_refuse(s);
    return c;
}

/* ------------------------------------------------------ recording work */
/* the node recorded for an operation on s: it depends on s's set, which
 * becomes {node}; `set` fills its parameters (an error invalidates the
 * capture and removes the node) */
static cudaError_t record(cudaStream_t s, int type, node_setter set, const void *params)
{
    LOCK();
    struct member *m = stream_member(s);
    cudaGraphNode_t n = NULL;
    cudaError_t st = m ? graph_add(m->cap->graph, type, m->deps, m->n, &n) : cudaErrorUnknown;
    if (m && st && cond_allows(m->cap->graph, type))   /* not allowed in a conditional body */
        st = cudaErrorStreamCaptureUnsupported;
    if (!st && set)
        st = set(n, params);
    if (!st)
        st = set_deps(m, &n, 1);
    if (st && n)
        cudaGraphDestroyNode(n);
    if (st && m)
        invalidate(m->cap);
    UNLOCK();
    return st;
}

cudaError_t capture_record(cudaStream_t s, int type, node_setter set, const void *params)
{
    return record(s, type, set, params);
}

static cudaError_t set_kernel(cudaGraphNode_t n, const void *p) { return node_set_kernel(n, p); }
static cudaError_t set_copy(cudaGraphNode_t n, const void *p) { return node_set_copy(n, p); }
static cudaError_t set_memset(cudaGraphNode_t n, const void *p) { return node_set_memset(n, p); }
static cudaError_t set_host(cudaGraphNode_t n, const void *p) { return set_host_params(n, p); }
static cudaError_t set_child(cudaGraphNode_t n, const void *g)
{
    if (graph_has_cond((cudaGraph_t)g))     /* no child graph node of conditional nodes */
        return cudaErrorInvalidValue;
    return graph_clone((cudaGraph_t)g, &n->child);
}

cudaError_t capture_kernel(cudaStream_t s, const void *func, dim3 grid, dim3 block, void **args,
                           size_t shared)
{
    struct cudaKernelNodeParams p = { (void *)func, grid, block, (unsigned)shared, args, NULL };
    return record(s, cudaGraphNodeTypeKernel, set_kernel, &p);
}

cudaError_t capture_copy(cudaStream_t s, void *dst, size_t dpitch, const void *src, size_t spitch,
                         size_t width, size_t height, int kind)
{
    struct cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = (struct cudaPitchedPtr){ (void *)src, spitch, width, height };
    p.dstPtr = (struct cudaPitchedPtr){ dst, dpitch, width, height };
    p.extent = (struct cudaExtent){ width, height, 1 };
    p.kind = kind;
    return record(s, cudaGraphNodeTypeMemcpy, set_copy, &p);
}

cudaError_t capture_memset(cudaStream_t s, void *ptr, size_t pitch, int value, size_t width,
                           size_t height)
{
    struct cudaMemsetParams p = { ptr, pitch, (unsigned char)value, 1, width, height };
    if (!width || !height)      /* nothing to set: CUDA records no node either */
        return cudaSuccess;
    return record(s, cudaGraphNodeTypeMemset, set_memset, &p);
}

cudaError_t capture_host(cudaStream_t s, void (*fn)(void *), void *data)
{
    struct cudaHostNodeParams p = { fn, data };
    return record(s, cudaGraphNodeTypeHost, set_host, &p);
}

cudaError_t capture_graph(cudaStream_t s, cudaGraph_t g)
{
    return record(s, cudaGraphNodeTypeGraph, set_child, g);
}

/* ------------------------------------------------------------- events */
cudaError_t capture_event_record(cudaEvent_t e, cudaStream_t s)
{
    int c = capture_state(s);
    LOCK();
    struct member *ev = find(e);
    cudaError_t st = c;
    if (c == 0 && ev)                   /* recorded outside a capture now */
        drop(ev);
    if (c < 0) {
        struct member *m = stream_member(s);
        if (ev && ev->cap != m->cap)
            drop(ev), ev = NULL;
        if (!ev)
            ev = join(e, m->cap, 1);
        st = ev ? set_deps(ev, m->deps, m->n) : cudaErrorMemoryAllocation;
        if (!st)
            st = -1;
    }
    UNLOCK();
    return st;
}

cudaError_t capture_event_wait(cudaStream_t s, cudaEvent_t e, unsigned flags)
{
    LOCK();
    struct member *ev = find(e);
    cudaError_t st = cudaSuccess;
    if (!ev) {                           /* an event of ordinary, finished work */
        int c = capture_state(s);
        st = c > 0 ? c : c < 0 && !(flags & EVENT_WAIT_EXTERNAL)
                               ? cudaErrorStreamCaptureIsolation : cudaSuccess;
        if (st == cudaErrorStreamCaptureIsolation)
            capture_refuse(s);
    } else if (is_legacy(s)) {
        invalidate(ev->cap);
        st = cudaErrorStreamCaptureImplicit;
    } else {
        struct member *m = stream_member(s);
        if (m && m->cap != ev->cap) {
            invalidate(m->cap);
            st = cudaErrorStreamCaptureMerge;
        } else if (ev->cap->status != cudaStreamCaptureStatusActive) {
            st = cudaErrorStreamCaptureInvalidated;
        } else if (!m) {                 /* s joins the capture: a fork */
            size_t at = (size_t)(ev - members);
            m = join(s, ev->cap, 0);
            ev = &members[at];           /* join may move the table */
            st = m ? set_deps(m, ev->deps, ev->n) : cudaErrorMemoryAllocation;
        } else {                         /* a join: s also waits for e's work */
            st = add_deps(m, ev->deps, ev->n);
        }
    }
    UNLOCK();
    return st;
}

/* -------------------------------------------------------- capture calls */
/* begin capturing s into `into` (NULL: a new graph) after deps[0..ndeps) of it */
static cudaError_t begin_capture(cudaStream_t s, int mode, cudaGraph_t into,
                                 const cudaGraphNode_t *deps, size_t ndeps)
{
    if (is_legacy(s))
        return cudaErrorStreamCaptureUnsupported;
    if (!stream_valid(s))
        return cudaErrorInvalidResourceHandle;
    if (mode < cudaStreamCaptureModeGlobal || mode > cudaStreamCaptureModeRelaxed)
        return cudaErrorInvalidValue;
    LOCK();
    cudaError_t st = stream_member(s) ? cudaErrorIllegalState : cudaSuccess;
    struct capture *cap = st ? NULL : calloc(1, sizeof *cap);
    struct member *m = NULL;
    if (!st && cap)
        cap->graph = into;
    if (!st && (!cap || (!into && graph_new(&cap->graph)) || !(m = join(s, cap, 0))
                || set_deps(m, deps, ndeps))) {
        if (m)
            drop(m);
        if (cap && cap->graph && !into)
            graph_free(cap->graph);
        free(cap);
        st = cudaErrorMemoryAllocation;
    }
    if (!st) {
        cap->id = next_id++;
        cap->status = cudaStreamCaptureStatusActive;
        cap->mode = mode;
        cap->thread = pthread_self();
        cap->origin = s;
        cap->into_user_graph = into != NULL;
    }
    UNLOCK();
    return st;
}

EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t s, int mode)
{
    CHILD_GUARD();
    return set_error(begin_capture(s, mode, NULL, NULL, 0));
}

/* capture into an existing graph (a conditional node's body, say), the
 * first operation depending on deps[0..n) of it; edge data must be default */
EXPORT cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t s, cudaGraph_t g,
                                                 const cudaGraphNode_t *deps, const void *edges,
                                                 size_t n, int mode)
{
    CHILD_GUARD();
    const unsigned char *e = edges;
    for (size_t i = 0; e && i < 8 * n; i++)
        if (e[i])
            return set_error(cudaErrorInvalidValue);
    if (!graph_ok(g) || (n && !deps))
        return set_error(cudaErrorInvalidValue);
    for (size_t i = 0; i < n; i++)
        if (!node_ok(deps[i]) || deps[i]->graph != g)
            return set_error(cudaErrorInvalidValue);
    return set_error(begin_capture(s, mode, g, deps, n));
}

/* is node d one of `set` or an ancestor of one of them? */
static int reaches(cudaGraphNode_t d, cudaGraphNode_t *set, size_t n, int depth)
{
    for (size_t i = 0; i < n; i++) {
        if (set[i] == d)
            return 1;
        if (depth < 4096 && reaches(d, set[i]->deps, set[i]->ndeps, depth + 1))
            return 1;
    }
    return 0;
}

/* has every stream that joined cap been joined back into its origin? */
static int all_joined(struct capture *cap, struct member *origin)
{
    for (size_t i = 0; i < nmembers; i++) {
        struct member *m = &members[i];
        if (m->cap != cap || m == origin || m->event)
            continue;
        for (size_t j = 0; j < m->n; j++)
            if (!reaches(m->deps[j], origin->deps, origin->n, 0))
                return 0;
    }
    return 1;
}

EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *out)
{
    CHILD_GUARD();
    LOCK();
    struct member *m = is_legacy(s) ? NULL : stream_member(s);
    if (!out && !(m && m->cap->into_user_graph)) {   /* optional for cudaStreamBeginCaptureToGraph */
        UNLOCK();
        return set_error(cudaErrorInvalidValue);
    }
    cudaError_t st = cudaSuccess;
    if (!m)
        st = cudaErrorIllegalState;
    else if (m->cap->origin != s)
        st = cudaErrorStreamCaptureUnmatched;
    else if (m->cap->mode != cudaStreamCaptureModeRelaxed
             && !pthread_equal(m->cap->thread, pthread_self()))
        st = cudaErrorStreamCaptureWrongThread;
    if (st == cudaErrorStreamCaptureUnmatched)
        invalidate(m->cap);
    if (!st) {
        struct capture *cap = m->cap;
        if (cap->status != cudaStreamCaptureStatusActive)
            st = cudaErrorStreamCaptureInvalidated;
        else if (!all_joined(cap, m))
            st = cudaErrorStreamCaptureUnjoined;
        if (st && !cap->into_user_graph)
            graph_free(cap->graph);
        if (out)
            *out = st ? NULL : cap->graph;
        finish(cap);
    }
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t s, int *status)
{
    CHILD_GUARD();
    if (!status)
        return set_error(cudaErrorInvalidValue);
    LOCK();
    cudaError_t st = cudaSuccess;
    struct member *m = is_legacy(s) ? NULL : stream_member(s);
    if (is_legacy(s) && blocking_capture())
        st = cudaErrorStreamCaptureImplicit;
    else
        *status = m ? m->cap->status : cudaStreamCaptureStatusNone;
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t s, int *status, unsigned long long *id,
                                            cudaGraph_t *graph, const cudaGraphNode_t **deps,
                                            const void **edge_data, size_t *ndeps)
{
    CHILD_GUARD();
    if (!status || (edge_data && !deps))
        return set_error(cudaErrorInvalidValue);
    cudaError_t st = cudaStreamIsCapturing(s, status);
    if (st || *status != cudaStreamCaptureStatusActive)
        return st;
    LOCK();
    struct member *m = stream_member(s);
    if (id)
        *id = m->cap->id;
    if (graph)
        *graph = m->cap->graph;
    if (deps)
        *deps = m->deps;
    if (edge_data)      /* default edges: all zero (up to 64 of them here) */
        *edge_data = m->n <= sizeof edge_zeros / 8 ? edge_zeros : NULL;
    if (ndeps)
        *ndeps = m->n;
    UNLOCK();
    return cudaSuccess;
}

/* flags: cudaStreamAddCaptureDependencies (0) or cudaStreamSetCaptureDependencies (1) */
EXPORT cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t s, cudaGraphNode_t *deps,
                                                       const void *edge_data, size_t n,
                                                       unsigned flags)
{
    CHILD_GUARD();
    (void)edge_data;
    if (flags > 1 || (n && !deps))
        return set_error(cudaErrorInvalidValue);
    LOCK();
    struct member *m = is_legacy(s) ? NULL : stream_member(s);
    cudaError_t st = !m ? cudaErrorIllegalState
                   : m->cap->status != cudaStreamCaptureStatusActive ? cudaErrorStreamCaptureInvalidated
                   : cudaSuccess;
    for (size_t i = 0; !st && i < n; i++)
        if (!node_ok(deps[i]) || deps[i]->graph != m->cap->graph)
            st = cudaErrorInvalidValue;
    if (!st)
        st = flags ? set_deps(m, deps, n) : add_deps(m, deps, n);
    UNLOCK();
    return set_error(st);
}

/* the capture mode of this thread: stored and returned (ptxc checks no
 * unsafe calls across threads) */
static __thread int thread_mode = cudaStreamCaptureModeGlobal;

EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(int *mode)
{
    CHILD_GUARD();
    if (!mode || *mode < cudaStreamCaptureModeGlobal || *mode > cudaStreamCaptureModeRelaxed)
        return set_error(cudaErrorInvalidValue);
    int old = thread_mode;
    thread_mode = *mode;
    *mode = old;
    return cudaSuccess;
}

ALIAS(cudaStreamBeginCapture_ptsz, cudaStreamBeginCapture);
ALIAS(cudaStreamBeginCaptureToGraph_ptsz, cudaStreamBeginCaptureToGraph);
ALIAS(cudaStreamEndCapture_ptsz, cudaStreamEndCapture);
ALIAS(cudaStreamIsCapturing_ptsz, cudaStreamIsCapturing);
ALIAS(cudaStreamGetCaptureInfo_ptsz, cudaStreamGetCaptureInfo);
ALIAS(cudaStreamUpdateCaptureDependencies_ptsz, cudaStreamUpdateCaptureDependencies);
