/* CUDA graphs in the shim: the graph and node objects that graph.c (explicit
 * building, instantiation, launch) and capture.c (stream capture) share.
 *
 * Layouts of the CUDA parameter structs are those of CUDA 13's
 * driver_types.h (cudaKernelNodeParams, cudaMemcpy3DParms, cudaMemsetParams,
 * cudaHostNodeParams); tests/test_runtime_native.py checks their sizes
 * against the real header when nvcc is installed.
 */
#ifndef PTXC_GRAPH_H
#define PTXC_GRAPH_H

#include "shim.h"

typedef struct CUgraph_st *cudaGraph_t;
typedef struct CUgraphNode_st *cudaGraphNode_t;
typedef struct CUgraphExec_st *cudaGraphExec_t;
typedef void (*cudaHostFn_t)(void *);

enum {
    cudaErrorIllegalState = 401,
    cudaErrorStreamCaptureUnsupported = 900, cudaErrorStreamCaptureInvalidated = 901,
    cudaErrorStreamCaptureMerge = 902,
    cudaErrorStreamCaptureUnmatched = 903, cudaErrorStreamCaptureUnjoined = 904,
    cudaErrorStreamCaptureIsolation = 905, cudaErrorStreamCaptureImplicit = 906,
    cudaErrorStreamCaptureWrongThread = 908, cudaErrorGraphExecUpdateFailure = 910,
};

enum {
    cudaStreamCaptureStatusNone = 0, cudaStreamCaptureStatusActive = 1,
    cudaStreamCaptureStatusInvalidated = 2,
};
enum {
    cudaStreamCaptureModeGlobal = 0, cudaStreamCaptureModeThreadLocal = 1,
    cudaStreamCaptureModeRelaxed = 2,
};
enum { cudaGraphExecUpdateSuccess = 0, cudaGraphExecUpdateErrorTopologyChanged = 2,
       cudaGraphExecUpdateErrorNodeTypeChanged = 3 };

struct cudaGraphExecUpdateResultInfo_st {
    int result;
    struct CUgraphNode_st *errorNode;
    struct CUgraphNode_st *errorFromNode;
};

enum { cudaGraphNodeTypeMemAlloc = 10, cudaGraphNodeTypeMemFree = 11 };   /* graph_mem.c */
enum {
    cudaGraphNodeTypeKernel = 0, cudaGraphNodeTypeMemcpy = 1, cudaGraphNodeTypeMemset = 2,
    cudaGraphNodeTypeHost = 3, cudaGraphNodeTypeGraph = 4, cudaGraphNodeTypeEmpty = 5,
    cudaGraphNodeTypeConditional = 13,
};

struct cudaPos { size_t x, y, z; };
struct cudaMemcpy3DParms {
    void *srcArray;
    struct cudaPos srcPos;
    struct cudaPitchedPtr srcPtr;
    void *dstArray;
    struct cudaPos dstPos;
    struct cudaPitchedPtr dstPtr;
    struct cudaExtent extent;
    int kind;
};
struct cudaMemsetParams {
    void *dst;
    size_t pitch;
    unsigned value;
    unsigned elementSize;
    size_t width;
    size_t height;
};
struct cudaHostNodeParams { cudaHostFn_t fn; void *userData; };
struct cudaKernelNodeParams {
    void *func;
    dim3 gridDim;
    dim3 blockDim;
    unsigned sharedMemBytes;
    void **kernelParams;
    void **extra;
};

/* a kernel node's own copy of its argument bytes (copied when the node is
 * added or its parameters set, as CUDA does) */
struct kargs {
    char *bytes;          /* the packed .param bytes */
    uint32_t nbytes;
    uint32_t nparams;
    void **argv;          /* argv[i] = bytes + offset of parameter i */
};

struct CUgraphNode_st {
    uint32_t magic;
    int type;
    struct CUgraph_st *graph;
    struct CUgraphNode_st *origin;    /* the node this one was cloned from (or NULL) */
    struct CUgraphNode_st *paired;    /* an executable graph's: the node cudaGraphExecUpdate took */
    struct CUgraphNode_st **deps;     /* the nodes this one depends on */
    size_t ndeps, cap_deps;
    struct cudaKernelNodeParams kernel;    /* kernelParams = args.argv */
    struct kargs args;
    struct cudaMemcpy3DParms copy;
    struct cudaMemsetParams set;
    struct cudaHostNodeParams host;
    struct CUgraph_st *child;          /* cudaGraphNodeTypeGraph: owned copy */
    struct graph_mem *mem;             /* memory alloc and free nodes (graph_mem.c) */
    struct cond_node *cond;            /* cudaGraphNodeTypeConditional (graph_cond.c) */
};

struct CUgraph_st {
    uint32_t magic;
    struct CUgraphNode_st **nodes;     /* in the order they were added */
    size_t n, cap;
    struct CUgraphNode_st *owner;      /* a conditional node's body graph: that node */
};

struct CUgraphExec_st {
    uint32_t magic;
    cudaGraph_t graph;       /* the private copy that runs */
    unsigned long long flags;
};

/* graph.c */
int graph_ok(cudaGraph_t g);
int node_ok(cudaGraphNode_t n);
cudaError_t graph_new(cudaGraph_t *out);
void graph_free(cudaGraph_t g);
cudaError_t graph_clone(cudaGraph_t g, cudaGraph_t *out);
cudaError_t graph_add(cudaGraph_t g, int type, const cudaGraphNode_t *deps, size_t ndeps,
                      cudaGraphNode_t *out);
typedef cudaError_t (*node_setter)(cudaGraphNode_t n, const void *params);
cudaError_t graph_add_set(cudaGraph_t g, int type, const cudaGraphNode_t *deps, size_t ndeps,
                          node_setter set, const void *params, cudaGraphNode_t *out);
cudaError_t node_set_kernel(cudaGraphNode_t n, const struct cudaKernelNodeParams *p);
cudaError_t node_set_copy(cudaGraphNode_t n, const struct cudaMemcpy3DParms *p);
cudaError_t node_set_copy1d(cudaGraphNode_t n, void *dst, const void *src, size_t count, int kind);
cudaError_t node_set_memset(cudaGraphNode_t n, const struct cudaMemsetParams *p);
cudaError_t graph_run(cudaGraph_t g, cudaStream_t s);
void node_free(cudaGraphNode_t n);
int has_dep(cudaGraphNode_t n, cudaGraphNode_t d);
cudaError_t add_dep(cudaGraphNode_t n, cudaGraphNode_t d);
cudaGraphNode_t *run_order(cudaGraph_t g, int *cycle);
cudaError_t node_copy_params(cudaGraphNode_t to, cudaGraphNode_t from);
cudaGraphNode_t index_node(cudaGraph_t from, cudaGraph_t to, cudaGraphNode_t n);
cudaError_t set_host_params(cudaGraphNode_t n, const struct cudaHostNodeParams *p);
cudaError_t cudaGraphDestroyNode(cudaGraphNode_t n);

/* graph_mem.c: memory allocation and free nodes */
cudaError_t graph_mem_run(cudaGraphNode_t n);
void graph_mem_free(struct graph_mem *m);
struct graph_mem *graph_mem_copy(const struct graph_mem *m);
int graph_has_mem_nodes(cudaGraph_t g);
cudaError_t graph_mem_prelaunch(cudaGraph_t g, unsigned long long flags);
cudaError_t graph_mem_instances(cudaGraph_t g, int delta);

/* register.c: the parameter layout of the kernel whose host stub is func */
cudaError_t kernel_param_layout(const void *func, uint32_t *nparams, uint32_t *nbytes,
                                const uint32_t **offsets, const uint32_t **sizes);
cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shared,
                             cudaStream_t stream);

/* graph_cond.c: conditional nodes (IF, WHILE, SWITCH) and their handles */
cudaError_t cond_allows(cudaGraph_t g, int type);
cudaError_t cond_copy(cudaGraphNode_t to, cudaGraphNode_t from);
void cond_free(cudaGraphNode_t n);
cudaError_t cond_run(cudaGraphNode_t n, cudaStream_t s);
int graph_has_cond(cudaGraph_t g);
void cond_launch_start(cudaGraph_t g);
int cond_update_mismatch(cudaGraphNode_t a, cudaGraphNode_t b);
cudaError_t cond_bodies_acyclic(cudaGraph_t g);

/* capture.c: cudaGraphLaunch into a capturing stream adds a child graph node */
cudaError_t capture_graph(cudaStream_t s, cudaGraph_t g);
/* capture.c: record a node of `type` on capturing stream s, set by `set` */
cudaError_t capture_record(cudaStream_t s, int type, node_setter set, const void *params);

#endif
