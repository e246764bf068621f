// Warp-level primitives: shuffles, votes, activemask, syncwarp.
//   nvcc -ptx -arch=sm_90 -O3 warp.cu -o warp.sm90.ptx
//   nvcc -ptx -arch=sm_75 -O3 warp.cu -o warp.sm75.ptx

// Warp sum with __shfl_down_sync (lane 0 writes); butterfly max with __shfl_xor_sync.
extern "C" __global__ void warp_reduce(const int *src, int *sum, int *mx)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = src[i];
    int m = v;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        m = max(m, __shfl_xor_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0)
        sum[i / 32] = v;
    mx[i] = m;
}

// Votes.  ballot/any/all over a data predicate; activemask inside a divergent region.
extern "C" __global__ void warp_vote(const int *src, unsigned *out)
{
    int t = threadIdx.x;
    int x = src[t];
    unsigned b = __ballot_sync(0xffffffffu, x > 0);
    int any = __any_sync(0xffffffffu, x > 5);
    int all = __all_sync(0xffffffffu, x > -100);
    unsigned am = 0;
    if (t & 1) {
        am = __activemask();
        __syncwarp(am);
    }
    out[4 * t + 0] = b;
    out[4 * t + 1] = any;
    out[4 * t + 2] = all;
    out[4 * t + 3] = am;
}
