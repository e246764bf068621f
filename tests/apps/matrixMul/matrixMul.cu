// matrixMul: C = A * B with 16 x 16 shared-memory tiles, timed with events.
// Modelled on cuda-samples 0_Introduction/matrixMul (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 matrixMul.cu -o matrixMul
// Run:   ./matrixMul [s]   (A is 64s x 96, B is 96 x 128; default s = 1)
// Checks: every C element equals the host product exactly (small integer-valued
//         floats, so every partial sum is exact in f32); the event time is >= 0.
// API: cudaMalloc, cudaMemcpy, cudaEventCreate, cudaEventRecord, cudaEventSynchronize,
//      cudaEventElapsedTime, cudaEventDestroy, cudaDeviceSynchronize, 2-D grid and block.
// Launches: 1 warm-up + NITER = 4.
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

#define TILE 16
#define NITER 3

// One CTA computes one TILE x TILE block of C; it walks the shared dimension
// one tile of A and one tile of B at a time, both staged in shared memory.
template <int BS>
__global__ void matrixMulTiled(float *C, const float *A, const float *B, int wA, int wB)
{
    __shared__ float tileA[BS][BS];
    __shared__ float tileB[BS][BS];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * BS + ty;
    int col = blockIdx.x * BS + tx;
    float sum = 0.0f;
    for (int k0 = 0; k0 < wA; k0 += BS) {
        tileA[ty][tx] = A[row * wA + k0 + tx];
        tileB[ty][tx] = B[(k0 + ty) * wB + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BS; ++k)
            sum += tileA[ty][k] * tileB[k][tx];
        __syncthreads();
    }
    C[row * wB + col] = sum;
}

int main(int argc, char **argv)
{
    int s = argc > 1 ? atoi(argv[1]) : 1;
    if (s <= 0) s = 1;
    int hA = 64 * s, wA = 96, wB = 128;
    size_t nA = (size_t)hA * wA, nB = (size_t)wA * wB, nC = (size_t)hA * wB;
    float *A = (float *)malloc(nA * sizeof(float));
    float *B = (float *)malloc(nB * sizeof(float));
    float *C = (float *)malloc(nC * sizeof(float));
    for (size_t i = 0; i < nA; ++i) A[i] = (float)((int)(i * 7 % 11) - 5);
    for (size_t i = 0; i < nB; ++i) B[i] = (float)((int)(i * 5 % 9) - 4);

    float *dA, *dB, *dC;
    CHECK(cudaMalloc(&dA, nA * sizeof(float)));
    CHECK(cudaMalloc(&dB, nB * sizeof(float)));
    CHECK(cudaMalloc(&dC, nC * sizeof(float)));
    CHECK(cudaMemcpy(dA, A, nA * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, B, nB * sizeof(float), cudaMemcpyHostToDevice));

    dim3 threads(TILE, TILE);
    dim3 grid(wB / TILE, hA / TILE);
    printf("[matrixMul] A(%d x %d) * B(%d x %d), grid %d x %d\n", hA, wA, wA, wB, grid.x, grid.y);
    matrixMulTiled<TILE><<<grid, threads>>>(dC, dA, dB, wA, wB);   // warm-up
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());

    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventRecord(start, NULL));
    for (int it = 0; it < NITER; ++it)
        matrixMulTiled<TILE><<<grid, threads>>>(dC, dA, dB, wA, wB);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop, NULL));
    CHECK(cudaEventSynchronize(stop));
    float ms = -1.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    double flops = 2.0 * hA * wA * wB;
    printf("time per multiply %.3f ms, %.3f GFLOP/s\n", ms / NITER,
           ms > 0 ? flops * 1e-6 / (ms / NITER) : 0.0);

    CHECK(cudaMemcpy(C, dC, nC * sizeof(float), cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int r = 0; r < hA; ++r)
        for (int c = 0; c < wB; ++c) {
            float ref = 0.0f;
            for (int k = 0; k < wA; ++k) ref += A[r * wA + k] * B[k * wB + c];
            if (C[r * wB + c] != ref) {
                if (wrong < 5) fprintf(stderr, "C[%d][%d] = %f, expected %f\n", r, c, C[r * wB + c], ref);
                ++wrong;
            }
        }
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    free(A); free(B); free(C);
    if (wrong || ms < 0.0f) {
        printf("FAIL (%d wrong elements, elapsed %f ms)\n", wrong, ms);
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
