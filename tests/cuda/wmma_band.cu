// One warp multiplies a 16 x K row band of A (row major) by the K x 16
// column band of B (B given as 16 rows of K, col major for wmma) with
// wmma 16x16x16 (half in, float accumulate), the K loop fully unrolled:
// 128 wmma.mma in one straight-line kernel. Its executor frame is above the
// 8 MiB a thread gets by default (tests/test_big_frames.py).
// nvcc -ptx -arch=sm_90 -O3 wmma_band.cu -o wmma_band.sm90.ptx (build.sh)
#include <mma.h>
using namespace nvcuda;
#define K 2048
extern "C" __global__ void wmma_band(const half *a, const half *b, float *c)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
#pragma unroll
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(fa, a + k, K);
        wmma::load_matrix_sync(fb, b + k, K);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c, acc, 16, wmma::mem_row_major);
}
