// vectorAdd: C = A + B on n floats, one thread per element.
// Modelled on cuda-samples 0_Introduction/vectorAdd (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 vectorAdd.cu -o vectorAdd
// Run:   ./vectorAdd [n]          (default n = 5000; grid = ceil(n / 256) CTAs of 256)
// Checks: every C[i] equals the host's A[i] + B[i] exactly (one f32 add each);
//         a launch with 2048 threads per block must fail with an error that
//         cudaGetLastError reports once (then cleared) and cudaGetErrorString names.
// API: cudaMalloc, cudaMemcpy (H2D, D2H), <<<>>>, cudaGetLastError, cudaPeekAtLastError,
//      cudaGetErrorString, cudaFree.
// Launches: 1 (the invalid launch never runs).
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

__global__ void vectorAdd(const float *A, const float *B, float *C, int n)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n)
        C[i] = A[i] + B[i];
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 5000;
    if (n <= 0) n = 5000;
    size_t bytes = n * sizeof(float);
    float *hA = (float *)malloc(bytes), *hB = (float *)malloc(bytes), *hC = (float *)malloc(bytes);
    unsigned int seed = 12345u;
    for (int i = 0; i < n; ++i) {
        seed = seed * 1664525u + 1013904223u;
        hA[i] = (seed >> 8) / 16777216.0f;
        seed = seed * 1664525u + 1013904223u;
        hB[i] = (seed >> 8) / 16777216.0f;
    }
    float *dA, *dB, *dC;
    CHECK(cudaMalloc(&dA, bytes));
    CHECK(cudaMalloc(&dB, bytes));
    CHECK(cudaMalloc(&dC, bytes));
    CHECK(cudaMemcpy(dA, hA, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, hB, bytes, cudaMemcpyHostToDevice));

    int threads = 256, blocks = (n + threads - 1) / threads;
    printf("[vectorAdd] %d elements, %d blocks of %d threads\n", n, blocks, threads);
    vectorAdd<<<blocks, threads>>>(dA, dB, dC, n);
    CHECK(cudaGetLastError());

    // An invalid configuration: the launch fails, the error is sticky until read once.
    vectorAdd<<<1, 2048>>>(dA, dB, dC, n);
    cudaError_t bad = cudaPeekAtLastError();
    cudaError_t read = cudaGetLastError();
    cudaError_t after = cudaGetLastError();
    const char *msg = cudaGetErrorString(bad);
    bool errors_ok = bad != cudaSuccess && read == bad && after == cudaSuccess &&
                     msg != NULL && strlen(msg) > 0;
    printf("invalid launch: %s (%d)\n", msg ? msg : "(null)", (int)bad);

    CHECK(cudaMemcpy(hC, dC, bytes, cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < n; ++i)
        if (hC[i] != hA[i] + hB[i]) {
            if (wrong < 5) fprintf(stderr, "C[%d] = %f, expected %f\n", i, hC[i], hA[i] + hB[i]);
            ++wrong;
        }
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    free(hA); free(hB); free(hC);
    if (wrong || !errors_ok) {
        printf("FAIL (%d wrong elements%s)\n", wrong, errors_ok ? "" : ", error reporting wrong");
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
