// Launch inference (ptxc profile, passes/launch_infer.py): kernels whose grid
// follows from a linear-index bound check and a fixed block (__block_size__
// gives .reqntid), and kernels where it does not.
//   nvcc -ptx -arch=sm_90 -O3 launch_infer.cu -o launch_infer.sm90.ptx
#include <cstddef>

// i < 1000 with 128-thread blocks: grid ceil(1000/128) = 8.
extern "C" __global__ void __block_size__((128, 1, 1)) scale_lt(float *out, const float *in)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 1000)
        out[i] = 2.0f * in[i];
}

// Four elements per thread (XLA's unrolling): i = 4 * linear id, i < 4000,
// 64-thread blocks: 256 elements per CTA, grid ceil(4000/256) = 16.
extern "C" __global__ void __block_size__((64, 1, 1)) unroll4(float *out, const float *in)
{
    unsigned i = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= 4000)
        return;
    for (int k = 0; k < 4; k++)
        out[i + k] = in[i + k] + 1.0f;
}

// A 64-bit index: i < 3000 with 256-thread blocks: grid ceil(3000/256) = 12.
extern "C" __global__ void __block_size__((256, 1, 1)) wide64(double *out)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 3000)
        out[i] = (double)i;
}

// A signed index: i < 777 with 32-thread blocks: grid ceil(777/32) = 25.
extern "C" __global__ void __block_size__((32, 1, 1)) signed_idx(int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 777)
        return;
    out[i] = i & 7 ? i : -i;
}

// Refused: the bound is a parameter (data the PTX does not hold).
extern "C" __global__ void __block_size__((128, 1, 1)) param_bound(float *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 1.0f;
}

// Refused: a grid-stride loop reads gridDim.x, so any grid is a valid launch.
extern "C" __global__ void __block_size__((128, 1, 1)) grid_stride(float *out)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < 5000; i += blockDim.x * gridDim.x)
        out[i] = 3.0f;
}

// Refused: every CTA stores before the bound check.
extern "C" __global__ void __block_size__((128, 1, 1)) store_first(float *out, float *flags)
{
    flags[blockIdx.x] = 1.0f;
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 1000)
        out[i] = 1.0f;
}

// Refused: a 2-D block.
extern "C" __global__ void __block_size__((16, 16, 1)) two_d(float *out)
{
    unsigned i = blockIdx.x * 256 + threadIdx.y * 16 + threadIdx.x;
    if (i < 1000)
        out[i] = 1.0f;
}

// Refused: no fixed block size (__launch_bounds__ gives only .maxntid).
extern "C" __global__ void __launch_bounds__(128) no_reqntid(float *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 1000)
        out[i] = 1.0f;
}
