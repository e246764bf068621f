// Kernels for tests/test_local_regs.py: registers that stay inside one node
// (backends/llvm/local_regs.py) next to registers that must not: a value
// kept across __syncthreads, a shfl source written in a divergent branch
// under a partial member mask, values that leave their block, guarded
// writes, a partial last warp. PTX committed next to this file:
//   nvcc -ptx -arch=sm_90 -O3 local_regs.cu -o local_regs.sm90.ptx
extern "C" __global__ void across_barrier(const int *in, int *out)
{
    __shared__ int tile[128];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    int x = in[i];                        // read again after the barrier
    tile[t] = x * 5;
    __syncthreads();
    int y = tile[t ^ 1];
    out[i] = x * 7 + y * (y & 5);
}

extern "C" __global__ void shfl_branch(const int *in, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
    int v = in[i];
    int r;
    if (lane < 16) {
        int x = v * 3 + lane;             // shfl source, written by lanes 0-15 only
        r = __shfl_xor_sync(0x0000ffffu, x, 1) - x;
    } else {
        int z = (v ^ 0x55) >> 1;
        r = __shfl_down_sync(0xffff0000u, z, 2, 16) + z;
    }
    out[i] = r;
}

extern "C" __global__ void loop_temps(const unsigned *in, unsigned *out, unsigned *steps, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned x = in[i], s = 0, acc = 0;
    while (x > 1 && s < 500) {
        unsigned odd = x & 1;
        x = odd ? 3 * x + 1 : x >> 1;
        acc ^= (x << (s & 7)) + odd;
        s++;
    }
    out[i] = acc;
    steps[i] = s;
}
