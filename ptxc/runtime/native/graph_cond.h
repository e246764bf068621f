/* The CUDA 13 types of conditional graph nodes and of cudaGraphAddNode
 * (driver_types.h: cudaConditionalNodeParams, cudaGraphNodeParams and the
 * per-type structs of its union); graph_cond.c implements them.
 * tests/test_runtime_graphs.py checks their layouts and values against the
 * real header when nvcc is installed. The V2 kernel, memset and host structs
 * of the union have the layouts of the V1 ones (graph.h).
 */
#ifndef PTXC_GRAPH_COND_H
#define PTXC_GRAPH_COND_H

#include "graph.h"

enum { cudaGraphCondTypeIf = 0, cudaGraphCondTypeWhile = 1, cudaGraphCondTypeSwitch = 2 };
enum { cudaGraphCondAssignDefault = 1 };
enum { cudaGraphExecUpdateErrorParametersChanged = 5 };

struct cudaConditionalNodeParams {
    uint64_t handle;
    int type;
    unsigned size;
    cudaGraph_t *phGraph_out;
};

struct cudaChildGraphNodeParams { cudaGraph_t graph; int ownership; };
struct cudaMemcpyNodeParams { int flags; int reserved[3]; struct cudaMemcpy3DParms copyParams; };

/* type, 3 reserved ints, a 232-byte union, 8 reserved bytes (256 in all) */
struct cudaGraphNodeParams {
    int type;
    int reserved0[3];
    union {
        long long reserved1[29];
        struct cudaKernelNodeParams kernel;
        struct cudaMemcpyNodeParams memcpy;
        struct cudaMemsetParams memset;
        struct cudaHostNodeParams host;
        struct cudaChildGraphNodeParams graph;
        struct cudaConditionalNodeParams conditional;
    };
    long long reserved2;
};

#endif
