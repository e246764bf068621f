// pathfinder: the cheapest top-to-bottom path through a grid of weights, where
// each step moves down to one of the three nearest columns (dynamic programming
// row by row). One launch advances PYRAMID rows: each CTA loads 256 columns of
// the previous row into shared memory and works down the rows in place,
// ping-ponging between two shared buffers; every row it loses one valid column
// on each side, so CTAs overlap by 2 * PYRAMID columns (the "pyramid" tiling).
// Modelled on Rodinia pathfinder (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 pathfinder.cu -o pathfinder
// Run:   ./pathfinder [cols] [out.bin]   (default 2000 columns, 100 rows)
// Checks: the last row of costs equals the host DP exactly (ints).
//         out.bin (int32 little-endian): rows, cols, pyramid, wall[rows * cols],
//         result[cols]; the test recomputes the DP with numpy.
// API: cudaMalloc, cudaMemcpy, __syncthreads with shared ping-pong, cudaFree.
// Launches: ceil((rows - 1) / PYRAMID) = 5 for 100 rows.
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

#define TILE 256
#define PYRAMID 20
#define ROWS 100

// Advances `steps` rows starting at wall row firstRow: src is the cost of row
// firstRow - 1, dst receives the cost of row firstRow + steps - 1.
__global__ void pathStep(const int *wall, const int *src, int *dst, int cols,
                         int firstRow, int steps)
{
    __shared__ int cur[2][TILE];
    int tx = threadIdx.x;
    int keep = TILE - 2 * steps;                  // columns this CTA is responsible for
    int col0 = blockIdx.x * keep - steps;         // global column of shared slot 0
    int col = col0 + tx;
    bool inside = col >= 0 && col < cols;
    if (inside) cur[0][tx] = src[col];
    __syncthreads();

    int in = 0;
    for (int s = 0; s < steps; ++s) {
        // Slot tx is still exact after step s if it is at least s + 1 slots from
        // either end of the tile (or its missing neighbour lies outside the grid).
        bool exact = tx > s && tx < TILE - 1 - s;
        if (inside && exact) {
            int best = cur[in][tx];
            if (col > 0) best = min(best, cur[in][tx - 1]);
            if (col < cols - 1) best = min(best, cur[in][tx + 1]);
            cur[1 - in][tx] = best + wall[(firstRow + s) * cols + col];
        }
        __syncthreads();
        in = 1 - in;
    }
    if (inside && tx >= steps && tx < TILE - steps)
        dst[col] = cur[in][tx];
}

int main(int argc, char **argv)
{
    int cols = argc > 1 ? atoi(argv[1]) : 2000;
    if (cols <= 0) cols = 2000;
    const char *outPath = argc > 2 ? argv[2] : NULL;
    int rows = ROWS;
    int *wall = (int *)malloc((size_t)rows * cols * sizeof(int));
    unsigned int seed = 9u;
    for (int i = 0; i < rows * cols; ++i) {
        seed = seed * 1103515245u + 12345u;
        wall[i] = (seed >> 16) % 10;
    }
    int *dWall, *dBuf[2];
    CHECK(cudaMalloc(&dWall, (size_t)rows * cols * sizeof(int)));
    CHECK(cudaMalloc(&dBuf[0], cols * sizeof(int)));
    CHECK(cudaMalloc(&dBuf[1], cols * sizeof(int)));
    CHECK(cudaMemcpy(dWall, wall, (size_t)rows * cols * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dBuf[0], wall, cols * sizeof(int), cudaMemcpyHostToDevice));   // row 0

    int src = 0, launches = 0;
    for (int row = 1; row < rows; row += PYRAMID) {
        int steps = rows - row < PYRAMID ? rows - row : PYRAMID;
        int keep = TILE - 2 * steps;
        int blocks = (cols + keep - 1) / keep;
        pathStep<<<blocks, TILE>>>(dWall, dBuf[src], dBuf[1 - src], cols, row, steps);
        CHECK(cudaGetLastError());
        src = 1 - src;
        ++launches;
    }
    int *result = (int *)malloc(cols * sizeof(int));
    CHECK(cudaMemcpy(result, dBuf[src], cols * sizeof(int), cudaMemcpyDeviceToHost));

    int *ref = (int *)malloc(cols * sizeof(int)), *tmp = (int *)malloc(cols * sizeof(int));
    for (int c = 0; c < cols; ++c) ref[c] = wall[c];
    for (int r = 1; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) {
            int best = ref[c];
            if (c > 0 && ref[c - 1] < best) best = ref[c - 1];
            if (c < cols - 1 && ref[c + 1] < best) best = ref[c + 1];
            tmp[c] = best + wall[r * cols + c];
        }
        int *t = ref; ref = tmp; tmp = t;
    }
    int wrong = 0;
    for (int c = 0; c < cols; ++c)
        if (result[c] != ref[c]) {
            if (wrong < 5) fprintf(stderr, "result[%d] = %d, expected %d\n", c, result[c], ref[c]);
            ++wrong;
        }
    printf("[pathfinder] %d rows x %d cols, %d launches\n", rows, cols, launches);
    if (outPath) {
        FILE *f = fopen(outPath, "wb");
        if (!f) { perror(outPath); return EXIT_FAILURE; }
        int header[3] = {rows, cols, PYRAMID};
        fwrite(header, sizeof(int), 3, f);
        fwrite(wall, sizeof(int), (size_t)rows * cols, f);
        fwrite(result, sizeof(int), cols, f);
        fclose(f);
    }
    CHECK(cudaFree(dWall));
    CHECK(cudaFree(dBuf[0]));
    CHECK(cudaFree(dBuf[1]));
    free(wall); free(result); free(ref); free(tmp);
    if (wrong) {
        printf("FAIL (%d wrong columns)\n", wrong);
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
