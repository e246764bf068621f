// Integer atomicAdd to one address per warp, for tests/test_agg_atomics.py:
// one locked add of the lanes' sum (backends/llvm/ops/atomic_aggregate.py)
// against the lane loop (PTXC_AGG_ATOMICS=0), with lanes a branch leaves
// out, partial warps, 64-bit counters, a __device__ variable, results used
// (atom.global.add) and unused (red.global.add), and warps whose lanes add
// to different words (the lane loop).
// nvcc -ptx -arch=sm_90 -O3 agg_atomics.cu -o agg_atomics.sm90.ptx
__device__ unsigned hits;

// Threads with t % 3 != 0 take a ticket of t % 5 + 1 from ctr[0];
// every thread adds 2 to ctr[1] (result unused) and counts itself in hits.
extern "C" __global__ void tickets(int *ctr, int *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int v = -1;
    if (t % 3 != 0)
        v = atomicAdd(&ctr[0], t % 5 + 1);
    out[t] = v;
    atomicAdd(&ctr[1], 2);
    atomicAdd(&hits, 1u);
}

// 64-bit tickets of t + 1 for threads below n.
extern "C" __global__ void tickets64(unsigned long long *ctr, unsigned long long *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n)
        out[t] = atomicAdd(ctr, (unsigned long long)t + 1);
}

// Lanes add to ctr[t % k]: one word per warp only when k == 1.
extern "C" __global__ void spread(int *ctr, int *out, int k)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t] = atomicAdd(&ctr[t % k], 1);
}

// hits, read back by the test.
extern "C" __global__ void read_hits(unsigned *out)
{
    *out = hits;
}
