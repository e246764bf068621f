// racecheck and the warp matrix instructions (tests/test_racecheck_matrix.py):
// ldmatrix / stmatrix shared accesses, raw PTX through inline asm.
//   nvcc -ptx -arch=sm_90 -O3 race_matrix.cu -o race_matrix.sm90.ptx
#include <stdint.h>

__device__ __forceinline__ unsigned smem(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

// One 8 x 8 .b16 matrix (8 rows of 16 bytes). Warp 0 writes it as 32 words
// (thread t: word t); `sync`: a __syncthreads() follows; warp 1 loads it
// with ldmatrix .x1 (lanes 0..7 give the row addresses).
extern "C" __global__ void ldmatrix_after_store(unsigned *out, int sync)
{
    __shared__ __align__(16) unsigned tile[32];
    int t = threadIdx.x, lane = t % 32;
    if (t < 32)
        tile[t] = 0x10001u * t;
    if (sync)
        __syncthreads();
    if (t >= 32) {
        unsigned r;
        asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];"
                     : "=r"(r) : "r"(smem(&tile[4 * (lane % 8)])) : "memory");
        out[lane] = r;
    }
}

// Warp 0 stores the matrix with stmatrix .x1 (lane l holds word l of the
// fragment); `sync`: a __syncthreads() follows; warp 1 reads it as words.
extern "C" __global__ void load_after_stmatrix(unsigned *out, int sync)
{
    __shared__ __align__(16) unsigned tile[32];
    int t = threadIdx.x, lane = t % 32;
    if (t < 32)
        asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};"
                     :: "r"(smem(&tile[4 * (lane % 8)])), "r"(0x10001u * lane) : "memory");
    if (sync)
        __syncthreads();
    if (t >= 32)
        out[lane] = tile[lane];
}
