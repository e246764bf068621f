// Tiled SGEMM twice: tiles loaded with cp.async (mm_async) and with float4 ld/st (mm_plain).
//   nvcc -ptx -arch=sm_90 -O3 async_mm.cu -o async_mm.ptx
#include <cuda_pipeline.h>
#define BS 32
// C = A * B, tiles of A and B copied to shared memory with cp.async (16 bytes a copy).
extern "C" __global__ void mm_async(const float *A, const float *B, float *C, int n)
{
    __shared__ __align__(16) float As[BS][BS];
    __shared__ __align__(16) float Bs[BS][BS];
    int tx = threadIdx.x, ty = threadIdx.y;       // block (8, 32): each thread copies 4 floats
    int row = blockIdx.y * BS + ty;
    float acc[4] = {0, 0, 0, 0};
    for (int k0 = 0; k0 < n; k0 += BS) {
        __pipeline_memcpy_async(&As[ty][tx * 4], &A[row * n + k0 + tx * 4], 16);
        __pipeline_memcpy_async(&Bs[ty][tx * 4], &B[(k0 + ty) * n + blockIdx.x * BS + tx * 4], 16);
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BS; ++k)
#pragma unroll
            for (int j = 0; j < 4; ++j)
                acc[j] += As[ty][k] * Bs[k][tx * 4 + j];
        __syncthreads();
    }
    for (int j = 0; j < 4; ++j)
        C[row * n + blockIdx.x * BS + tx * 4 + j] = acc[j];
}
extern "C" __global__ void mm_plain(const float *A, const float *B, float *C, int n)
{
    __shared__ __align__(16) float As[BS][BS];
    __shared__ __align__(16) float Bs[BS][BS];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * BS + ty;
    float acc[4] = {0, 0, 0, 0};
    for (int k0 = 0; k0 < n; k0 += BS) {
        *(float4 *)&As[ty][tx * 4] = *(const float4 *)&A[row * n + k0 + tx * 4];
        *(float4 *)&Bs[ty][tx * 4] = *(const float4 *)&B[(k0 + ty) * n + blockIdx.x * BS + tx * 4];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BS; ++k)
#pragma unroll
            for (int j = 0; j < 4; ++j)
                acc[j] += As[ty][k] * Bs[k][tx * 4 + j];
        __syncthreads();
    }
    for (int j = 0; j < 4; ++j)
        C[row * n + blockIdx.x * BS + tx * 4 + j] = acc[j];
}
