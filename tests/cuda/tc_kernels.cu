// Tensor-core GEMM tiles and texture stencils in the style of the
// cuda-samples that issue 29 found slow (cudaTensorCoreGemm, bf16/tf32/dmma/
// immaTensorCoreGemm, simplePitchLinearTexture, HSOpticalFlow), for
// bench/tc_kernels.py and tests/test_mma_outline.py.
//
//   nvcc -ptx -arch=sm_90 -O3 tc_kernels.cu -o tc_kernels.sm90.ptx
//
// Each wmma kernel: one warp per block computes TM x TN output tiles of
// C = A * B (A row-major M x K, B column-major K x N, C row-major), with K a
// compile-time constant and the k loop fully unrolled (#pragma unroll), as
// nvcc unrolls the samples' compute loops: KT k-steps x TM x TN wmma.mma.
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
using namespace nvcuda;

template <typename T, typename Acc, int M_, int N_, int K_, int KT, int TM, int TN,
          typename LT = T>
__device__ void gemm_tile(const LT *A, const LT *B, Acc *C, int ldc) {
  const int K = K_ * KT;
  int row0 = blockIdx.y * TM * M_, col0 = blockIdx.x * TN * N_;
  wmma::fragment<wmma::accumulator, M_, N_, K_, Acc> acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) wmma::fill_fragment(acc[i][j], (Acc)0);
#pragma unroll
  for (int k = 0; k < KT; ++k) {
    wmma::fragment<wmma::matrix_a, M_, N_, K_, T, wmma::row_major> a[TM];
    wmma::fragment<wmma::matrix_b, M_, N_, K_, T, wmma::col_major> b[TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
      wmma::load_matrix_sync(a[i], A + (size_t)(row0 + M_ * i) * K + K_ * k, K);
#pragma unroll
    for (int j = 0; j < TN; ++j)
      wmma::load_matrix_sync(b[j], B + (size_t)(col0 + N_ * j) * K + K_ * k, K);
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j)
      wmma::store_matrix_sync(C + (size_t)(row0 + M_ * i) * ldc + col0 + N_ * j, acc[i][j], ldc,
                              wmma::mem_row_major);
}

#define HGEMM(KT)                                                                          \
  extern "C" __global__ void wmma_f16_k##KT(const half *A, const half *B, float *C, int ldc) { \
    gemm_tile<half, float, 16, 16, 16, KT, 2, 2>(A, B, C, ldc);                            \
  }
HGEMM(4)
HGEMM(8)
HGEMM(16)
HGEMM(32)
HGEMM(64)

// the size of cudaTensorCoreGemm's unrolled compute loop: 2 x 4 tiles per
// warp, 256 k-steps: 2,048 wmma.mma and 1,536 wmma.load
extern "C" __global__ void wmma_f16_big(const half *A, const half *B, float *C, int ldc) {
  gemm_tile<half, float, 16, 16, 16, 256, 2, 4>(A, B, C, ldc);
}

extern "C" __global__ void wmma_bf16_k16(const __nv_bfloat16 *A, const __nv_bfloat16 *B, float *C,
                                         int ldc) {
  gemm_tile<__nv_bfloat16, float, 16, 16, 16, 16, 2, 2>(A, B, C, ldc);
}

extern "C" __global__ void wmma_s8_k16(const signed char *A, const signed char *B, int *C, int ldc) {
  gemm_tile<signed char, int, 16, 16, 16, 16, 2, 2>(A, B, C, ldc);
}

// tf32: fragments of wmma::precision::tf32 loaded from float (m16n16k8)
extern "C" __global__ void wmma_tf32_k16(const float *A, const float *B, float *C, int ldc) {
  gemm_tile<wmma::precision::tf32, float, 16, 16, 8, 16, 2, 2, float>(A, B, C, ldc);
}

// dmma: m8n8k4 f64
extern "C" __global__ void wmma_f64_k16(const double *A, const double *B, double *C, int ldc) {
  gemm_tile<double, double, 8, 8, 4, 16, 2, 2>(A, B, C, ldc);
}

// mma.sync + ldmatrix (inline PTX, the form CUTLASS-style kernels use): one
// warp computes a 16 x 8 tile of C (f32) = A (16 x 16KT, row-major f16) *
// B (16KT x 8, stored n-major: Bt[n][k]) through shared memory.
template <int KT>
__device__ void mma_ldm(const half *A, const half *Bt, float *C) {
  const int K = 16 * KT;
  __shared__ __align__(16) half sa[16 * K];
  __shared__ __align__(16) half sb[8 * K];
  int lane = threadIdx.x;
  for (int i = lane; i < 16 * K; i += 32) sa[i] = A[i];
  for (int i = lane; i < 8 * K; i += 32) sb[i] = Bt[i];
  __syncthreads();
  float d[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
  for (int k = 0; k < KT; ++k) {
    unsigned a[4], b[2];
    unsigned pa = (unsigned)__cvta_generic_to_shared(&sa[(lane % 16) * K + 16 * k + (lane / 16) * 8]);
    unsigned pb = (unsigned)__cvta_generic_to_shared(&sb[(lane % 8) * K + 16 * k + ((lane / 8) % 2) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(pa));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
                 : "=r"(b[0]), "=r"(b[1]) : "r"(pb));
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  int g = lane >> 2, t = lane & 3;
  C[g * 8 + 2 * t] = d[0];
  C[g * 8 + 2 * t + 1] = d[1];
  C[(g + 8) * 8 + 2 * t] = d[2];
  C[(g + 8) * 8 + 2 * t + 1] = d[3];
}

extern "C" __global__ void mma_ldmatrix_k32(const half *A, const half *Bt, float *C) {
  mma_ldm<32>(A, Bt, C);
}

// simplePitchLinearTexture's shiftPitchLinear: normalized coordinates, wrap
extern "C" __global__ void tex_shift(float *odata, int pitch, int width, int height, int shiftX,
                                     int shiftY, cudaTextureObject_t tex) {
  int xid = blockIdx.x * blockDim.x + threadIdx.x;
  int yid = blockIdx.y * blockDim.y + threadIdx.y;
  odata[yid * pitch + xid] =
      tex2D<float>(tex, (xid + shiftX) / (float)width, (yid + shiftY) / (float)height);
}

// HSOpticalFlow's ComputeDerivativesKernel: 5-tap derivative stencils on two
// textures (normalized coordinates, linear filtering, mirror addressing)
extern "C" __global__ void flow_derivatives(int width, int height, int stride, float *Ix, float *Iy,
                                            float *Iz, cudaTextureObject_t texSource,
                                            cudaTextureObject_t texTarget) {
  const int ix = threadIdx.x + blockIdx.x * blockDim.x;
  const int iy = threadIdx.y + blockIdx.y * blockDim.y;
  const int pos = ix + iy * stride;
  if (ix >= width || iy >= height) return;
  float dx = 1.0f / (float)width;
  float dy = 1.0f / (float)height;
  float x = ((float)ix + 0.5f) * dx;
  float y = ((float)iy + 0.5f) * dy;
  float t0, t1;
  t0 = tex2D<float>(texSource, x - 2.0f * dx, y);
  t0 -= tex2D<float>(texSource, x - 1.0f * dx, y) * 8.0f;
  t0 += tex2D<float>(texSource, x + 1.0f * dx, y) * 8.0f;
  t0 -= tex2D<float>(texSource, x + 2.0f * dx, y);
  t0 /= 12.0f;
  t1 = tex2D<float>(texTarget, x - 2.0f * dx, y);
  t1 -= tex2D<float>(texTarget, x - 1.0f * dx, y) * 8.0f;
  t1 += tex2D<float>(texTarget, x + 1.0f * dx, y) * 8.0f;
  t1 -= tex2D<float>(texTarget, x + 2.0f * dx, y);
  t1 /= 12.0f;
  Ix[pos] = (t0 + t1) * 0.5f;
  Iz[pos] = tex2D<float>(texTarget, x, y) - tex2D<float>(texSource, x, y);
  t0 = tex2D<float>(texSource, x, y - 2.0f * dy);
  t0 -= tex2D<float>(texSource, x, y - 1.0f * dy) * 8.0f;
  t0 += tex2D<float>(texSource, x, y + 1.0f * dy) * 8.0f;
  t0 -= tex2D<float>(texSource, x, y + 2.0f * dy);
  t0 /= 12.0f;
  t1 = tex2D<float>(texTarget, x, y - 2.0f * dy);
  t1 -= tex2D<float>(texTarget, x, y - 1.0f * dy) * 8.0f;
  t1 += tex2D<float>(texTarget, x, y + 1.0f * dy) * 8.0f;
  t1 -= tex2D<float>(texTarget, x, y + 2.0f * dy);
  t1 /= 12.0f;
  Iy[pos] = (t0 + t1) * 0.5f;
}
