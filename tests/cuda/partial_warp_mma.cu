// Whole-warp matrix instructions (.aligned) executed by only part of a warp:
// the PTX ISA (9.7.14) requires all 32 lanes; ptxc stops the launch.
// Lanes >= active skip the tile (a bug: the wmma calls must be warp-uniform).
//   nvcc -ptx -arch=sm_90 -O3 partial_warp_mma.cu -o partial_warp_mma.sm90.ptx
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

extern "C" __global__ void tile_if_lane_below(const half *a, const half *b, float *d, int active)
{
    if (threadIdx.x < active) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> fb;
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
        wmma::fill_fragment(fc, 0.0f);
        wmma::load_matrix_sync(fa, a, 16);
        wmma::load_matrix_sync(fb, b, 16);
        wmma::mma_sync(fc, fa, fb, fc);
        wmma::store_matrix_sync(d, fc, 16, wmma::mem_row_major);
    }
}
