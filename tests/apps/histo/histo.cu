// histo: a saturating histogram (bins clamp at 255, stored as bytes) of a skewed
// 2-D image. Each CTA builds a private histogram in shared memory with shared
// atomics over a grid-stride range of pixels, then adds its non-zero bins to the
// global histogram with global atomics; a second kernel saturates the counts into
// bytes. The whole computation runs twice, clearing the histogram with cudaMemset.
// Modelled on Parboil histo (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 histo.cu -o histo
// Run:   ./histo [side]   (default a 256 x 256 image, 1024 bins)
// Checks: the 32-bit counts and the saturated bytes equal the host histogram
//         exactly, in both rounds.
// API: cudaMalloc, cudaMemcpy, cudaMemset, shared-memory atomicAdd, global
//      atomicAdd, unsigned char output, cudaFree.
// Launches: 2 per round, 2 rounds = 4.
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

#define BINS 1024
#define THREADS 256
#define CTAS 16

__global__ void histogramShared(const unsigned int *pixels, int count, unsigned int *global)
{
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += blockDim.x * gridDim.x)
        atomicAdd(&local[pixels[i] % BINS], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        if (local[b] != 0)
            atomicAdd(&global[b], local[b]);
}

__global__ void saturate(const unsigned int *counts, unsigned char *bytes)
{
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < BINS) {
        unsigned int c = counts[b];
        bytes[b] = c > 255u ? 255 : (unsigned char)c;
    }
}

int main(int argc, char **argv)
{
    int side = argc > 1 ? atoi(argv[1]) : 256;
    if (side <= 0) side = 256;
    int count = side * side;
    unsigned int *pixels = (unsigned int *)malloc(count * sizeof(unsigned int));
    unsigned int seed = 1u;
    for (int i = 0; i < count; ++i) {
        seed = seed * 1664525u + 1013904223u;
        unsigned int r = seed >> 8;
        // Half the pixels fall into 16 hot bins, the rest anywhere (values above
        // BINS too: the kernel folds them with % BINS).
        pixels[i] = (r & 1) ? 512 + (r >> 1) % 16 : (r >> 1) % (4 * BINS);
    }
    unsigned int want[BINS] = {0};
    for (int i = 0; i < count; ++i) ++want[pixels[i] % BINS];

    unsigned int *dPixels, *dCounts;
    unsigned char *dBytes;
    CHECK(cudaMalloc(&dPixels, count * sizeof(unsigned int)));
    CHECK(cudaMalloc(&dCounts, BINS * sizeof(unsigned int)));
    CHECK(cudaMalloc(&dBytes, BINS));
    CHECK(cudaMemcpy(dPixels, pixels, count * sizeof(unsigned int), cudaMemcpyHostToDevice));
    int wrong = 0, saturated = 0;
    for (int round = 0; round < 2; ++round) {
        CHECK(cudaMemset(dCounts, 0, BINS * sizeof(unsigned int)));
        CHECK(cudaMemset(dBytes, 0x5a, BINS));
        histogramShared<<<CTAS, THREADS>>>(dPixels, count, dCounts);
        CHECK(cudaGetLastError());
        saturate<<<(BINS + THREADS - 1) / THREADS, THREADS>>>(dCounts, dBytes);
        CHECK(cudaGetLastError());
        unsigned int counts[BINS];
        unsigned char bytes[BINS];
        CHECK(cudaMemcpy(counts, dCounts, sizeof(counts), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(bytes, dBytes, sizeof(bytes), cudaMemcpyDeviceToHost));
        saturated = 0;
        for (int b = 0; b < BINS; ++b) {
            unsigned char wantByte = want[b] > 255u ? 255 : (unsigned char)want[b];
            saturated += want[b] > 255u;
            if (counts[b] != want[b] || bytes[b] != wantByte) {
                if (wrong < 5) fprintf(stderr, "round %d bin %d: %u / %u, expected %u / %u\n", round, b,
                                       counts[b], bytes[b], want[b], wantByte);
                ++wrong;
            }
        }
    }
    printf("[histo] %d pixels, %d bins, %d saturated\n", count, BINS, saturated);
    CHECK(cudaFree(dPixels));
    CHECK(cudaFree(dCounts));
    CHECK(cudaFree(dBytes));
    free(pixels);
    if (wrong) {
        printf("FAIL (%d wrong bins)\n", wrong);
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
