// bfs: breadth-first search from node 0 of a random graph, one frontier per
// iteration: kernel 1 expands the frontier, kernel 2 promotes the newly reached
// nodes and raises a device flag; the host loop copies the flag back after each
// iteration and stops when no node was reached (data-dependent launch count).
// Modelled on Rodinia bfs (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 bfs.cu -o bfs
// Run:   ./bfs [nodes] [out.bin]   (default 4096 nodes)
// Checks: every node's depth equals the host BFS (-1 for unreachable nodes).
//         out.bin (int32 little-endian): nodes, edges, levels run, then
//         first_edge[nodes], degree[nodes], edge_list[edges], cost[nodes]; the test
//         recomputes the BFS from it with numpy.
// API: cudaMalloc, cudaMemcpy (H2D / D2H of a one-byte flag every iteration),
//      cudaMemset, cudaDeviceSynchronize, cudaFree.
// Launches: 2 per iteration; iterations = (largest finite depth) + 1.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                              \
    do {                                                                         \
        cudaError_t err_ = (call);                                               \
        if (err_ != cudaSuccess) {                                               \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
                    cudaGetErrorString(err_));                                   \
            exit(EXIT_FAILURE);                                                  \
        }                                                                        \
    } while (0)

#define THREADS 256

struct Node {
    int first;   // index of the first edge in the edge list
    int degree;
};

__global__ void expandFrontier(const Node *nodes, const int *edges, bool *frontier,
                               bool *next, const bool *visited, int *cost, int n)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n && frontier[v]) {
        frontier[v] = false;
        int end = nodes[v].first + nodes[v].degree;
        for (int e = nodes[v].first; e < end; ++e) {
            int w = edges[e];
            if (!visited[w]) {
                cost[w] = cost[v] + 1;   // every writer writes the same depth
                next[w] = true;
            }
        }
    }
}

__global__ void promoteNext(bool *frontier, bool *next, bool *visited, bool *changed, int n)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n && next[v]) {
        frontier[v] = true;
        visited[v] = true;
        *changed = true;
        next[v] = false;
    }
}

static unsigned int rng = 2463534242u;
static unsigned int nextRandom()
{
    rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5;
    return rng;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4096;
    if (n < 16) n = 4096;
    const char *outPath = argc > 2 ? argv[2] : NULL;

    // Random directed graph: nodes in the last 1/16 have no in-edges from the rest
    // (they only point into the graph), so some nodes stay unreachable.
    int reachableLimit = n - n / 16;
    Node *nodes = (Node *)malloc(n * sizeof(Node));
    int m = 0;
    for (int v = 0; v < n; ++v) {
        nodes[v].first = m;
        nodes[v].degree = 1 + nextRandom() % 4;
        m += nodes[v].degree;
    }
    int *edges = (int *)malloc(m * sizeof(int));
    for (int e = 0; e < m; ++e) edges[e] = nextRandom() % reachableLimit;

    int *cost = (int *)malloc(n * sizeof(int));
    bool *frontier = (bool *)malloc(n), *visited = (bool *)malloc(n);
    for (int v = 0; v < n; ++v) { cost[v] = -1; frontier[v] = visited[v] = false; }
    cost[0] = 0; frontier[0] = visited[0] = true;

    Node *dNodes; int *dEdges, *dCost; bool *dFrontier, *dNext, *dVisited, *dChanged;
    CHECK(cudaMalloc(&dNodes, n * sizeof(Node)));
    CHECK(cudaMalloc(&dEdges, m * sizeof(int)));
    CHECK(cudaMalloc(&dCost, n * sizeof(int)));
    CHECK(cudaMalloc(&dFrontier, n));
    CHECK(cudaMalloc(&dNext, n));
    CHECK(cudaMalloc(&dVisited, n));
    CHECK(cudaMalloc(&dChanged, 1));
    CHECK(cudaMemcpy(dNodes, nodes, n * sizeof(Node), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dEdges, edges, m * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dCost, cost, n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dFrontier, frontier, n, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dVisited, visited, n, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dNext, 0, n));

    int blocks = (n + THREADS - 1) / THREADS, iterations = 0;
    bool changed;
    do {
        changed = false;
        CHECK(cudaMemcpy(dChanged, &changed, 1, cudaMemcpyHostToDevice));
        expandFrontier<<<blocks, THREADS>>>(dNodes, dEdges, dFrontier, dNext, dVisited, dCost, n);
        CHECK(cudaGetLastError());
        promoteNext<<<blocks, THREADS>>>(dFrontier, dNext, dVisited, dChanged, n);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(&changed, dChanged, 1, cudaMemcpyDeviceToHost));
        ++iterations;
    } while (changed);
    CHECK(cudaDeviceSynchronize());
    int *got = (int *)malloc(n * sizeof(int));
    CHECK(cudaMemcpy(got, dCost, n * sizeof(int), cudaMemcpyDeviceToHost));

    // Host BFS with a queue.
    int *queue = (int *)malloc(n * sizeof(int)), head = 0, tail = 0, maxDepth = 0;
    queue[tail++] = 0;
    while (head < tail) {
        int v = queue[head++];
        for (int e = nodes[v].first; e < nodes[v].first + nodes[v].degree; ++e) {
            int w = edges[e];
            if (cost[w] < 0) {
                cost[w] = cost[v] + 1;
                if (cost[w] > maxDepth) maxDepth = cost[w];
                queue[tail++] = w;
            }
        }
    }
    int wrong = 0;
    for (int v = 0; v < n; ++v)
        if (got[v] != cost[v]) {
            if (wrong < 5) fprintf(stderr, "cost[%d] = %d, expected %d\n", v, got[v], cost[v]);
            ++wrong;
        }
    if (iterations != maxDepth + 1) {
        fprintf(stderr, "%d iterations, expected %d\n", iterations, maxDepth + 1);
        ++wrong;
    }
    printf("[bfs] %d nodes, %d edges, %d reached, depth %d, %d iterations\n", n, m, tail, maxDepth, iterations);

    if (outPath) {
        FILE *f = fopen(outPath, "wb");
        if (!f) { perror(outPath); return EXIT_FAILURE; }
        int header[3] = {n, m, iterations};
        fwrite(header, sizeof(int), 3, f);
        for (int v = 0; v < n; ++v) fwrite(&nodes[v].first, sizeof(int), 1, f);
        for (int v = 0; v < n; ++v) fwrite(&nodes[v].degree, sizeof(int), 1, f);
        fwrite(edges, sizeof(int), m, f);
        fwrite(got, sizeof(int), n, f);
        fclose(f);
    }
    CHECK(cudaFree(dNodes)); CHECK(cudaFree(dEdges)); CHECK(cudaFree(dCost));
    CHECK(cudaFree(dFrontier)); CHECK(cudaFree(dNext)); CHECK(cudaFree(dVisited));
    CHECK(cudaFree(dChanged));
    free(nodes); free(edges); free(cost); free(frontier); free(visited); free(got); free(queue);
    if (wrong) {
        printf("FAIL (%d wrong)\n", wrong);
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
