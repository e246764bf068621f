// reduction: the sum of n ints with three kernels of increasing refinement, each
// applied in passes (partial sums per CTA, then a launch over the partial sums)
// until one value is left.
// Modelled on cuda-samples 2_Concepts_and_Techniques/reduction (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 reduction.cu -o reduction
// Run:   ./reduction [n]   (default n = 20000)
// Checks: the sum of every kernel equals the host sum exactly (ints).
// API: cudaMalloc, cudaMemcpy, cudaMemset, dynamic shared memory (<<<g, b, bytes>>>),
//      __syncthreads, __shfl_down_sync, templates on the block size, cudaFree.
// Launches: per kernel, one pass per level: pass p turns m values into
//           ceil(m / per_cta) values, until m = 1 (per_cta: 256, 512, 512).
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

// Interleaved addressing with a divergent modulo test (the naive tree).
__global__ void reduceInterleaved(const int *in, int *out, int n)
{
    extern __shared__ int sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? in[i] : 0;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

// Sequential addressing; every thread first adds two elements while loading.
__global__ void reduceSequential(const int *in, int *out, int n)
{
    extern __shared__ int sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    int v = i < n ? in[i] : 0;
    if (i + blockDim.x < n)
        v += in[i + blockDim.x];
    sdata[tid] = v;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

// Warp shuffles: each warp reduces its values with __shfl_down_sync, the warp
// sums meet in shared memory and the first warp reduces them again.
template <unsigned int BLOCK>
__global__ void reduceShuffle(const int *in, int *out, int n)
{
    __shared__ int warpSums[BLOCK / 32];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (BLOCK * 2) + tid;
    int v = 0;
    if (i < n) v = in[i];
    if (i + BLOCK < n) v += in[i + BLOCK];
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    if ((tid & 31) == 0)
        warpSums[tid / 32] = v;
    __syncthreads();
    if (tid < 32) {
        v = tid < BLOCK / 32 ? warpSums[tid] : 0;
        for (int offset = 16; offset > 0; offset >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, offset);
        if (tid == 0)
            out[blockIdx.x] = v;
    }
}

typedef void (*ReduceKernel)(const int *, int *, int);

// Repeated passes until one value is left; returns it and counts the launches.
static int reduceOnDevice(ReduceKernel kernel, int perCta, int *dIn, int *dA, int *dB, int n,
                          int *launches)
{
    const int *src = dIn;
    int *dst = dA;
    int m = n;
    while (true) {
        int blocks = (m + perCta - 1) / perCta;
        kernel<<<blocks, THREADS, THREADS * sizeof(int)>>>(src, dst, m);
        CHECK(cudaGetLastError());
        ++*launches;
        m = blocks;
        if (m == 1) break;
        src = dst;
        dst = dst == dA ? dB : dA;
    }
    int result;
    CHECK(cudaMemcpy(&result, dst, sizeof(int), cudaMemcpyDeviceToHost));
    return result;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    if (n <= 0) n = 20000;
    int *h = (int *)malloc(n * sizeof(int));
    long long ref = 0;
    for (int i = 0; i < n; ++i) {
        h[i] = (int)((i * 2654435761u) % 201u) - 100;
        ref += h[i];
    }
    int *dIn, *dA, *dB;
    int partials = (n + THREADS - 1) / THREADS;
    CHECK(cudaMalloc(&dIn, n * sizeof(int)));
    CHECK(cudaMalloc(&dA, partials * sizeof(int)));
    CHECK(cudaMalloc(&dB, partials * sizeof(int)));
    CHECK(cudaMemcpy(dIn, h, n * sizeof(int), cudaMemcpyHostToDevice));

    struct { const char *name; ReduceKernel kernel; int perCta; } variants[] = {
        {"interleaved", reduceInterleaved, THREADS},
        {"sequential", reduceSequential, 2 * THREADS},
        {"shuffle", reduceShuffle<THREADS>, 2 * THREADS},
    };
    int wrong = 0, launches = 0;
    for (int v = 0; v < 3; ++v) {
        CHECK(cudaMemset(dA, 0xff, partials * sizeof(int)));
        int got = reduceOnDevice(variants[v].kernel, variants[v].perCta, dIn, dA, dB, n, &launches);
        printf("[reduction] %-11s sum = %d (host %lld)\n", variants[v].name, got, ref);
        if (got != ref) ++wrong;
    }
    printf("launches: %d\n", launches);
    CHECK(cudaFree(dIn));
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    free(h);
    if (wrong) {
        printf("FAIL (%d kernels wrong)\n", wrong);
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
