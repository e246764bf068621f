// symbols: constant memory and __device__ variables set and read by the host:
// polynomial coefficients in __constant__ memory (written in two parts, the
// second at an offset), a device table written through its symbol address, a
// statically initialised device array, and a device counter that keeps its
// value from one launch to the next.
// Modelled on cuda-samples' use of __constant__ / cudaMemcpyToSymbol (e.g. the
// filter taps of convolutionSeparable) (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 symbols.cu -o symbols
// Run:   ./symbols [n]   (default n = 2048)
// Checks: y[i] == poly(x[i]) + table[i % 64] + init[i % 4] exactly (small integers
//         in f32); the hit counter equals the host count after launch 1 and twice
//         it after launch 2; the __device__ result array read back with
//         cudaMemcpyFromSymbol (with and without offset) holds the per-block maxima.
// API: cudaMemcpyToSymbol (offset 0 and > 0), cudaMemcpyFromSymbol (offset 0 and > 0),
//      cudaGetSymbolAddress, cudaGetSymbolSize, cudaMemcpy to a symbol address,
//      __constant__, __device__ (initialised and not), atomicAdd / atomicMax on globals.
// Launches: 2.
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

#define DEGREE 7
#define TABLE 64
#define BLOCKS 16

__constant__ float c_coef[DEGREE + 1];
__constant__ float c_threshold;
__device__ float d_table[TABLE];
__device__ int d_init[4] = {3, -1, 4, -2};
__device__ int d_hits;
__device__ int d_blockMax[BLOCKS];

__global__ void evalPoly(const float *x, float *y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float v = c_coef[DEGREE];
        for (int k = DEGREE - 1; k >= 0; --k)
            v = v * x[i] + c_coef[k];
        v += d_table[i % TABLE] + (float)d_init[i % 4];
        y[i] = v;
        if (v > c_threshold)
            atomicAdd(&d_hits, 1);
        atomicMax(&d_blockMax[blockIdx.x], (int)v);
    }
}

static float hostPoly(const float *coef, float x)
{
    float v = coef[DEGREE];
    for (int k = DEGREE - 1; k >= 0; --k) v = v * x + coef[k];
    return v;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2048;
    if (n <= 0) n = 2048;
    float coef[DEGREE + 1] = {2, -1, 0, 1, -1, 0, 1, -1};   // exact for |x| <= 2
    float threshold = 10.0f, table[TABLE];
    int init[4] = {3, -1, 4, -2};
    for (int k = 0; k < TABLE; ++k) table[k] = (float)(k % 9 - 4);
    float *x = (float *)malloc(n * sizeof(float)), *y = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; ++i) x[i] = (float)(i % 5) - 2.0f;

    CHECK(cudaMemcpyToSymbol(c_coef, coef, 4 * sizeof(float)));
    CHECK(cudaMemcpyToSymbol(c_coef, coef + 4, 4 * sizeof(float), 4 * sizeof(float)));
    CHECK(cudaMemcpyToSymbol(c_threshold, &threshold, sizeof(float)));
    float *tablePtr;
    size_t tableSize = 0;
    CHECK(cudaGetSymbolAddress((void **)&tablePtr, d_table));
    CHECK(cudaGetSymbolSize(&tableSize, d_table));
    CHECK(cudaMemcpy(tablePtr, table, sizeof(table), cudaMemcpyHostToDevice));
    int zero = 0, minInit[BLOCKS];
    for (int b = 0; b < BLOCKS; ++b) minInit[b] = -1000000;
    CHECK(cudaMemcpyToSymbol(d_hits, &zero, sizeof(int)));
    CHECK(cudaMemcpyToSymbol(d_blockMax, minInit, sizeof(minInit)));

    float *dx, *dy;
    CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CHECK(cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice));

    int wrong = 0, hostHits = 0, hostMax[BLOCKS];
    for (int b = 0; b < BLOCKS; ++b) hostMax[b] = -1000000;
    const int threads = 64;
    for (int i = 0; i < n; ++i) {
        float v = hostPoly(coef, x[i]) + table[i % TABLE] + (float)init[i % 4];
        if (v > threshold) ++hostHits;
        int b = (i / threads) % BLOCKS;
        if ((int)v > hostMax[b]) hostMax[b] = (int)v;
    }
    int hits[2];
    for (int launch = 0; launch < 2; ++launch) {
        evalPoly<<<BLOCKS, threads>>>(dx, dy, n);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpyFromSymbol(&hits[launch], d_hits, sizeof(int)));
    }
    CHECK(cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) {
        float want = hostPoly(coef, x[i]) + table[i % TABLE] + (float)init[i % 4];
        if (y[i] != want) {
            if (wrong < 5) fprintf(stderr, "y[%d] = %f, expected %f\n", i, y[i], want);
            ++wrong;
        }
    }
    int blockMax[BLOCKS], lastHalf[BLOCKS / 2];
    CHECK(cudaMemcpyFromSymbol(blockMax, d_blockMax, sizeof(blockMax)));
    CHECK(cudaMemcpyFromSymbol(lastHalf, d_blockMax, sizeof(lastHalf), sizeof(lastHalf)));
    for (int b = 0; b < BLOCKS; ++b)
        if (blockMax[b] != hostMax[b] || (b >= BLOCKS / 2 && lastHalf[b - BLOCKS / 2] != hostMax[b])) {
            if (wrong < 5) fprintf(stderr, "blockMax[%d] = %d, expected %d\n", b, blockMax[b], hostMax[b]);
            ++wrong;
        }
    if (hits[0] != hostHits || hits[1] != 2 * hostHits) {
        fprintf(stderr, "hits %d, %d; expected %d, %d\n", hits[0], hits[1], hostHits, 2 * hostHits);
        ++wrong;
    }
    if (tableSize != sizeof(table)) {
        fprintf(stderr, "cudaGetSymbolSize(d_table) = %zu, expected %zu\n", tableSize, sizeof(table));
        ++wrong;
    }
    printf("[symbols] %d values, %d above %.1f per launch\n", n, hostHits, threshold);
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    free(x); free(y);
    if (wrong) {
        printf("FAIL (%d wrong values)\n", wrong);
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
