// templates: one templated kernel instantiated for int, float and double that
// stages a scaled copy of its CTA's slice in dynamic shared memory (typed through
// a templated accessor) and writes it back reversed; a second template with a
// compile-time window size sums a fully unrolled neighbourhood.
// Modelled on cuda-samples 0_Introduction/simpleTemplates (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 templates.cu -o templates
// Run:   ./templates [ctas]   (default 12 CTAs of 128 threads)
// Checks: out[b*128 + t] == scale * in[b*128 + 127 - t] exactly for each type; the
//         windowed sums equal the host's (ints) for window 3 and 5.
// API: templates (kernels and a __device__ struct), extern __shared__ with a
//      dynamic size (<<<g, b, bytes>>>), __syncthreads, cudaMalloc, cudaMemcpy, cudaFree.
// Launches: 3 (reverse<int, float, double>) + 2 (window<3>, window<5>) = 5.
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

#define THREADS 128

// Typed view of the dynamic shared memory (one raw buffer for every T).
template <class T>
struct SharedArray {
    __device__ T *get()
    {
        extern __shared__ __align__(16) unsigned char dynamicSmem[];
        return reinterpret_cast<T *>(dynamicSmem);
    }
};

template <class T>
__global__ void scaleReverse(const T *in, T *out, T scale)
{
    T *s = SharedArray<T>().get();
    unsigned int t = threadIdx.x, base = blockIdx.x * blockDim.x;
    s[t] = in[base + t] * scale;
    __syncthreads();
    out[base + t] = s[blockDim.x - 1 - t];
}

// out[i] = sum of in[i - R .. i + R] (indices clamped to [0, n)), R = W / 2.
template <int W>
__global__ void windowSum(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int sum = 0;
#pragma unroll
    for (int k = -W / 2; k <= W / 2; ++k) {
        int j = min(max(i + k, 0), n - 1);
        sum += in[j];
    }
    out[i] = sum;
}

template <class T>
static int runReverse(int ctas, T scale, const char *name)
{
    int n = ctas * THREADS;
    T *h = (T *)malloc(n * sizeof(T)), *got = (T *)malloc(n * sizeof(T));
    for (int i = 0; i < n; ++i) h[i] = (T)((i * 37) % 101) - (T)50;
    T *dIn, *dOut;
    CHECK(cudaMalloc(&dIn, n * sizeof(T)));
    CHECK(cudaMalloc(&dOut, n * sizeof(T)));
    CHECK(cudaMemcpy(dIn, h, n * sizeof(T), cudaMemcpyHostToDevice));
    scaleReverse<T><<<ctas, THREADS, THREADS * sizeof(T)>>>(dIn, dOut, scale);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(got, dOut, n * sizeof(T), cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int b = 0; b < ctas; ++b)
        for (int t = 0; t < THREADS; ++t)
            if (got[b * THREADS + t] != h[b * THREADS + THREADS - 1 - t] * scale) ++wrong;
    printf("[templates] scaleReverse<%s>: %d wrong\n", name, wrong);
    CHECK(cudaFree(dIn));
    CHECK(cudaFree(dOut));
    free(h); free(got);
    return wrong;
}

template <int W>
static int runWindow(const int *dIn, int *dOut, const int *h, int n)
{
    windowSum<W><<<(n + THREADS - 1) / THREADS, THREADS>>>(dIn, dOut, n);
    CHECK(cudaGetLastError());
    int *got = (int *)malloc(n * sizeof(int));
    CHECK(cudaMemcpy(got, dOut, n * sizeof(int), cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < n; ++i) {
        int want = 0;
        for (int k = -W / 2; k <= W / 2; ++k) {
            int j = i + k < 0 ? 0 : (i + k >= n ? n - 1 : i + k);
            want += h[j];
        }
        wrong += got[i] != want;
    }
    printf("[templates] windowSum<%d>: %d wrong\n", W, wrong);
    free(got);
    return wrong;
}

int main(int argc, char **argv)
{
    int ctas = argc > 1 ? atoi(argv[1]) : 12;
    if (ctas <= 0) ctas = 12;
    int wrong = 0;
    wrong += runReverse<int>(ctas, 3, "int");
    wrong += runReverse<float>(ctas, 0.5f, "float");
    wrong += runReverse<double>(ctas, -1.25, "double");

    int n = ctas * THREADS - 5;
    int *h = (int *)malloc(n * sizeof(int));
    for (int i = 0; i < n; ++i) h[i] = (i * 13) % 29;
    int *dIn, *dOut;
    CHECK(cudaMalloc(&dIn, n * sizeof(int)));
    CHECK(cudaMalloc(&dOut, n * sizeof(int)));
    CHECK(cudaMemcpy(dIn, h, n * sizeof(int), cudaMemcpyHostToDevice));
    wrong += runWindow<3>(dIn, dOut, h, n);
    wrong += runWindow<5>(dIn, dOut, h, n);
    CHECK(cudaFree(dIn));
    CHECK(cudaFree(dOut));
    free(h);
    if (wrong) {
        printf("FAIL (%d wrong values)\n", wrong);
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
