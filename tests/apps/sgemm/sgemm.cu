// sgemm: C = alpha * A * B + beta * C in column-major order with B given
// transposed, register tiled: a CTA of 128 threads owns a 128 x 16 block of C,
// each thread keeps its row of 16 accumulators in registers, and the CTA stages
// 16 x 16 pieces of B in shared memory.
// Modelled on Parboil sgemm (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 sgemm.cu -o sgemm
// Run:   ./sgemm [s]   (M = 256 s, N = 128, K = 96; default s = 1)
// Checks: every C element equals the host result exactly (small integer-valued
//         floats: every partial sum is exact in f32).
// API: cudaMalloc, cudaMemcpy, 2-D grid, shared memory + register tiling,
//      events for timing, cudaFree.
// Launches: 1.
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

#define TILE_M 128
#define TILE_N 16
#define TILE_K 16

// A: M x K (A[m + k*M]); Bt: N x K (Bt[n + k*N] = B[k][n]); C: M x N (C[m + n*M]).
__global__ void sgemmTiled(const float *A, const float *Bt, float *C, int M, int N, int K,
                           float alpha, float beta)
{
    __shared__ float bTile[TILE_K][TILE_N];
    int t = threadIdx.x;
    int m = blockIdx.x * TILE_M + t;
    int n0 = blockIdx.y * TILE_N;
    float acc[TILE_N];
#pragma unroll
    for (int j = 0; j < TILE_N; ++j) acc[j] = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE_K) {
        for (int idx = t; idx < TILE_K * TILE_N; idx += TILE_M)
            bTile[idx / TILE_N][idx % TILE_N] = Bt[n0 + idx % TILE_N + (k0 + idx / TILE_N) * N];
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE_K; ++kk) {
            float a = A[m + (k0 + kk) * M];
#pragma unroll
            for (int j = 0; j < TILE_N; ++j)
                acc[j] += a * bTile[kk][j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int j = 0; j < TILE_N; ++j)
        C[m + (n0 + j) * M] = alpha * acc[j] + beta * C[m + (n0 + j) * M];
}

int main(int argc, char **argv)
{
    int s = argc > 1 ? atoi(argv[1]) : 1;
    if (s <= 0) s = 1;
    int M = 256 * s, N = 128, K = 96;
    float alpha = 2.0f, beta = -1.0f;
    float *A = (float *)malloc((size_t)M * K * sizeof(float));
    float *Bt = (float *)malloc((size_t)N * K * sizeof(float));
    float *C = (float *)malloc((size_t)M * N * sizeof(float));
    float *got = (float *)malloc((size_t)M * N * sizeof(float));
    for (int i = 0; i < M * K; ++i) A[i] = (float)((i * 13) % 9 - 4);
    for (int i = 0; i < N * K; ++i) Bt[i] = (float)((i * 7) % 9 - 4);
    for (int i = 0; i < M * N; ++i) C[i] = (float)(i % 5);
    float *dA, *dBt, *dC;
    CHECK(cudaMalloc(&dA, (size_t)M * K * sizeof(float)));
    CHECK(cudaMalloc(&dBt, (size_t)N * K * sizeof(float)));
    CHECK(cudaMalloc(&dC, (size_t)M * N * sizeof(float)));
    CHECK(cudaMemcpy(dA, A, (size_t)M * K * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dBt, Bt, (size_t)N * K * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dC, C, (size_t)M * N * sizeof(float), cudaMemcpyHostToDevice));

    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    dim3 grid(M / TILE_M, N / TILE_N);
    CHECK(cudaEventRecord(start));
    sgemmTiled<<<grid, TILE_M>>>(dA, dBt, dC, M, N, K, alpha, beta);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaMemcpy(got, dC, (size_t)M * N * sizeof(float), cudaMemcpyDeviceToHost));

    int wrong = 0;
    for (int n = 0; n < N; ++n)
        for (int m = 0; m < M; ++m) {
            float sum = 0.0f;
            for (int k = 0; k < K; ++k) sum += A[m + k * M] * Bt[n + k * N];
            float want = alpha * sum + beta * C[m + n * M];
            if (got[m + n * M] != want) {
                if (wrong < 5) fprintf(stderr, "C[%d][%d] = %f, expected %f\n", m, n, got[m + n * M], want);
                ++wrong;
            }
        }
    printf("[sgemm] M %d N %d K %d, %.3f ms\n", M, N, K, ms);
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaFree(dA)); CHECK(cudaFree(dBt)); CHECK(cudaFree(dC));
    free(A); free(Bt); free(C); free(got);
    if (wrong) {
        printf("FAIL (%d wrong elements)\n", wrong);
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
