// nw: Needleman-Wunsch global alignment score matrix of two random DNA sequences.
// The (n+1) x (n+1) matrix is cut into 16 x 16 tiles that are processed one tile
// anti-diagonal per launch (upper-left triangle with one kernel, lower-right with
// another); inside a tile 16 threads sweep the cell anti-diagonals in shared
// memory with a barrier between waves.
// Modelled on Rodinia nw (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 nw.cu -o nw
// Run:   ./nw [n] [out.bin]   (n a multiple of 16; default 128)
// Checks: the whole score matrix equals the host DP exactly (ints).
//         out.bin (int32 little-endian): n, penalty, sub[16], a[n], b[n],
//         score[(n+1)^2]; the test recomputes the DP with numpy.
// API: cudaMalloc, cudaMemcpy, two kernels alternating with the host loop,
//      shared memory waves with __syncthreads, cudaFree.
// Launches: 2 * (n / 16) - 1 (n / 16 upper-left, n / 16 - 1 lower-right).
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

#define T 16

// Fills tile (tileRow, tileCol): matrix rows 1 + 16 * tileRow .. + 15, same for
// columns. Row 0 / column 0 of the shared copy hold the neighbouring cells.
__device__ void fillTile(int *score, const int *sim, int width, int tileRow, int tileCol,
                         int penalty)
{
    __shared__ int s[T + 1][T + 1];
    __shared__ int w[T][T];
    int tx = threadIdx.x;
    int r0 = tileRow * T, c0 = tileCol * T;              // the corner cell (r0, c0)
    for (int r = 0; r < T; ++r)
        w[r][tx] = sim[(r0 + 1 + r) * width + c0 + 1 + tx];
    s[0][tx + 1] = score[r0 * width + c0 + 1 + tx];
    s[tx + 1][0] = score[(r0 + 1 + tx) * width + c0];
    if (tx == 0) s[0][0] = score[r0 * width + c0];
    __syncthreads();
    for (int k = 0; k < 2 * T - 1; ++k) {                // cells with row + col == k
        int r = k - tx;
        if (r >= 0 && r < T) {
            int diag = s[r][tx] + w[r][tx];
            int up = s[r][tx + 1] - penalty;
            int left = s[r + 1][tx] - penalty;
            s[r + 1][tx + 1] = max(diag, max(up, left));
        }
        __syncthreads();
    }
    for (int r = 0; r < T; ++r)
        score[(r0 + 1 + r) * width + c0 + 1 + tx] = s[r + 1][tx + 1];
}

// Tile diagonal d < tiles: CTA b takes tile (d - b, b).
__global__ void nwUpperLeft(int *score, const int *sim, int width, int d, int penalty)
{
    fillTile(score, sim, width, d - blockIdx.x, blockIdx.x, penalty);
}

// Tile diagonal d >= tiles: CTA b takes tile (tiles - 1 - b, d - tiles + 1 + b).
__global__ void nwLowerRight(int *score, const int *sim, int width, int d, int tiles, int penalty)
{
    fillTile(score, sim, width, tiles - 1 - blockIdx.x, d - tiles + 1 + blockIdx.x, penalty);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 128;
    if (n <= 0 || n % T) n = 128;
    const char *outPath = argc > 2 ? argv[2] : NULL;
    const int penalty = 2;
    const int sub[16] = {3, -1, -2, -1, -1, 3, -1, -2, -2, -1, 3, -1, -1, -2, -1, 3};
    int width = n + 1;
    size_t cells = (size_t)width * width;
    int *a = (int *)malloc(n * sizeof(int)), *b = (int *)malloc(n * sizeof(int));
    unsigned int seed = 7u;
    for (int i = 0; i < n; ++i) {
        seed = seed * 1664525u + 1013904223u; a[i] = seed >> 30;
        seed = seed * 1664525u + 1013904223u; b[i] = seed >> 30;
    }
    int *sim = (int *)calloc(cells, sizeof(int)), *score = (int *)calloc(cells, sizeof(int));
    for (int i = 1; i <= n; ++i)
        for (int j = 1; j <= n; ++j) sim[i * width + j] = sub[a[i - 1] * 4 + b[j - 1]];
    for (int i = 0; i <= n; ++i) {
        score[i * width] = -i * penalty;
        score[i] = -i * penalty;
    }
    int *dScore, *dSim;
    CHECK(cudaMalloc(&dScore, cells * sizeof(int)));
    CHECK(cudaMalloc(&dSim, cells * sizeof(int)));
    CHECK(cudaMemcpy(dScore, score, cells * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dSim, sim, cells * sizeof(int), cudaMemcpyHostToDevice));

    int tiles = n / T, launches = 0;
    for (int d = 0; d < tiles; ++d, ++launches) {
        nwUpperLeft<<<d + 1, T>>>(dScore, dSim, width, d, penalty);
        CHECK(cudaGetLastError());
    }
    for (int d = tiles; d < 2 * tiles - 1; ++d, ++launches) {
        nwLowerRight<<<2 * tiles - 1 - d, T>>>(dScore, dSim, width, d, tiles, penalty);
        CHECK(cudaGetLastError());
    }
    int *got = (int *)malloc(cells * sizeof(int));
    CHECK(cudaMemcpy(got, dScore, cells * sizeof(int), cudaMemcpyDeviceToHost));

    for (int i = 1; i <= n; ++i)
        for (int j = 1; j <= n; ++j) {
            int best = score[(i - 1) * width + j - 1] + sim[i * width + j];
            int up = score[(i - 1) * width + j] - penalty, left = score[i * width + j - 1] - penalty;
            if (up > best) best = up;
            if (left > best) best = left;
            score[i * width + j] = best;
        }
    int wrong = 0;
    for (size_t c = 0; c < cells; ++c)
        if (got[c] != score[c]) {
            if (wrong < 5) fprintf(stderr, "score[%zu][%zu] = %d, expected %d\n", c / width, c % width, got[c], score[c]);
            ++wrong;
        }
    printf("[nw] %d x %d, %d launches, alignment score %d\n", n, n, launches, got[cells - 1]);
    if (outPath) {
        FILE *f = fopen(outPath, "wb");
        if (!f) { perror(outPath); return EXIT_FAILURE; }
        int header[2] = {n, penalty};
        fwrite(header, sizeof(int), 2, f);
        fwrite(sub, sizeof(int), 16, f);
        fwrite(a, sizeof(int), n, f);
        fwrite(b, sizeof(int), n, f);
        fwrite(got, sizeof(int), cells, f);
        fclose(f);
    }
    CHECK(cudaFree(dScore));
    CHECK(cudaFree(dSim));
    free(a); free(b); free(sim); free(score); free(got);
    if (wrong) {
        printf("FAIL (%d wrong cells)\n", wrong);
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
