// Tensor-core kernels written with the nvcuda::wmma API (CUDA C++ Programming
// Guide, "Warp Matrix Functions"): one warp computes D = A*B + C for one tile
// (f16->f32, f16->f16, bf16->f32, tf32 m16n16k8, s8->s32, f64 m8n8k4; the
// m32n8k16 and m8n32k16 shapes for f16, bf16, s8, u8), plus a
// tiled GEMM over a 2x2 grid of warps that loops over K with a scaled
// epilogue (cudaTensorCoreGemm style) and a kernel that stages the tiles in
// shared memory with a column-major B.
//   nvcc -ptx -arch=sm_90 -O3 wmma.cu -o wmma.sm90.ptx
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
using namespace nvcuda;

// A row-major MxK (lda = K), B KxN in BLAYOUT with leading dimension LDB, C/D row-major MxN (ldc = N).
#define TILE_KERNEL(NAME, M, N, K, TA, TACC, BLAYOUT, LDB)                               \
extern "C" __global__ void NAME(const TA *a, const TA *b, const TACC *c, TACC *d)      \
{                                                                                      \
    wmma::fragment<wmma::matrix_a, M, N, K, TA, wmma::row_major> fa;                   \
    wmma::fragment<wmma::matrix_b, M, N, K, TA, BLAYOUT> fb;                           \
    wmma::fragment<wmma::accumulator, M, N, K, TACC> fc;                               \
    wmma::load_matrix_sync(fa, a, K);                                                  \
    wmma::load_matrix_sync(fb, b, LDB);                                                \
    wmma::load_matrix_sync(fc, c, N, wmma::mem_row_major);                             \
    wmma::mma_sync(fc, fa, fb, fc);                                                    \
    wmma::store_matrix_sync(d, fc, N, wmma::mem_row_major);                            \
}

TILE_KERNEL(wmma_f16_f32, 16, 16, 16, half, float, wmma::row_major, 16)
TILE_KERNEL(wmma_f16_f16, 16, 16, 16, half, half, wmma::row_major, 16)
TILE_KERNEL(wmma_f16_f32_bcol, 16, 16, 16, half, float, wmma::col_major, 16)
TILE_KERNEL(wmma_bf16_f32, 16, 16, 16, __nv_bfloat16, float, wmma::row_major, 16)
TILE_KERNEL(wmma_s8_s32, 16, 16, 16, signed char, int, wmma::row_major, 16)
TILE_KERNEL(wmma_u8_s32, 16, 16, 16, unsigned char, int, wmma::row_major, 16)
TILE_KERNEL(wmma_f64, 8, 8, 4, double, double, wmma::row_major, 8)
TILE_KERNEL(wmma_f16_m32n8k16, 32, 8, 16, half, float, wmma::row_major, 8)
TILE_KERNEL(wmma_f16_m8n32k16, 8, 32, 16, half, half, wmma::col_major, 16)
TILE_KERNEL(wmma_bf16_m32n8k16, 32, 8, 16, __nv_bfloat16, float, wmma::col_major, 16)
TILE_KERNEL(wmma_bf16_m8n32k16, 8, 32, 16, __nv_bfloat16, float, wmma::row_major, 32)
TILE_KERNEL(wmma_s8_m32n8k16, 32, 8, 16, signed char, int, wmma::row_major, 8)
TILE_KERNEL(wmma_u8_m8n32k16, 8, 32, 16, unsigned char, int, wmma::col_major, 16)

// tf32: the inputs are f32 arrays; the fragments hold tf32 values (__float_to_tf32).
extern "C" __global__ void wmma_tf32(const float *a, const float *b, const float *c, float *d)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> fc;
    wmma::load_matrix_sync(fa, a, 8);
    wmma::load_matrix_sync(fb, b, 16);
    for (int i = 0; i < fa.num_elements; i++) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
    for (int i = 0; i < fb.num_elements; i++) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
    wmma::load_matrix_sync(fc, c, 16, wmma::mem_col_major);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(d, fc, 16, wmma::mem_col_major);
}

// D = alpha * A*B + beta * C for M x N x K multiples of 16, one 16x16 tile per
// warp; blockDim = (64, 2): 2x2 warps, 32x32 per CTA. A row-major (lda = K),
// B col-major (ldb = K), C and D row-major (ldc = N).
extern "C" __global__ void wmma_gemm(const half *a, const half *b, const float *c, float *d,
                                     int M, int N, int K, float alpha, float beta)
{
    int warpM = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int warpN = blockIdx.y * blockDim.y + threadIdx.y;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc, fc;
    wmma::fill_fragment(acc, 0.0f);
    int row = warpM * 16, col = warpN * 16;
    if (row >= M || col >= N) return;
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(fa, a + row * K + k, K);
        wmma::load_matrix_sync(fb, b + col * K + k, K);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::load_matrix_sync(fc, c + row * N + col, N, wmma::mem_row_major);
    for (int i = 0; i < fc.num_elements; i++)
        fc.x[i] = alpha * acc.x[i] + beta * fc.x[i];
    wmma::store_matrix_sync(d + row * N + col, fc, N, wmma::mem_row_major);
}

// The same tile through shared memory (wmma.load/store .shared), with B stored
// column-major and a padded leading dimension (24 halves).
extern "C" __global__ void wmma_shared(const half *a, const half *b, float *d)
{
    __shared__ half sa[16 * 24], sb[16 * 24];
    __shared__ float sd[16 * 20];
    for (int i = threadIdx.x; i < 256; i += 32) {
        int r = i / 16, k = i % 16;
        sa[r * 24 + k] = a[i];              // A[r][k]
        sb[k * 24 + r] = b[i];              // B(r, k): column k, row r of col-major sb
    }
    __syncwarp();
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 1.0f);
    wmma::load_matrix_sync(fa, sa, 24);
    wmma::load_matrix_sync(fb, sb, 24);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(sd, acc, 20, wmma::mem_col_major);
    __syncwarp();
    for (int i = threadIdx.x; i < 256; i += 32)
        d[i] = sd[(i % 16) * 20 + i / 16];  // d row-major: d[r][c] = sd col-major (r + c*20)
}

// The hybrid slice must keep wmma.store -> ld.shared -> branch: lane l counts
// down element l of D = A*B (row-major 16x16 in shared), l = 0..31.
extern "C" __global__ void wmma_branch(const half *a, const half *b, int *trips)
{
    __shared__ float sd[256];
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(sd, acc, 16, wmma::mem_row_major);
    __syncwarp();
    int n = 0;
    for (float v = sd[threadIdx.x]; v > 0.0f; v -= 1.0f) n++;
    trips[threadIdx.x] = n;
}

// tf32 fragments loaded from f32 data without __float_to_tf32: ptxc ignores
// the 13 low mantissa bits of each input (docs/executor.md, "Tensor cores").
extern "C" __global__ void wmma_tf32_raw(const float *a, const float *b, float *d)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 8);
    wmma::load_matrix_sync(fb, b, 8);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(d, fc, 16, wmma::mem_row_major);
}
