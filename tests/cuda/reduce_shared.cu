// Shared-memory tree reduction with __syncthreads; a value read back from shared memory
// decides a branch.
//   nvcc -ptx -arch=sm_90 -O3 reduce_shared.cu -o reduce_shared.sm90.ptx
//   nvcc -ptx -arch=sm_90 -G reduce_shared.cu -o reduce_shared.sm90.G.ptx

// Requires blockDim.x == 64 (the loop starts at stride 32).  Every thread reads the block
// sum back from shared memory; threads of blocks whose sum is > 100 write it to out.
extern "C" __global__ void reduce_sum(const int *src, int *out, int *flag)
{
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = src[blockIdx.x * 64 + t];
    __syncthreads();
#pragma unroll 1
    for (int st = 32; st > 0; st >>= 1) {
        if (t < st)
            s[t] += s[t + st];
        __syncthreads();
    }
    int tot = s[0];
    if (tot > 100)
        out[blockIdx.x * 64 + t] = tot;
    else if (t == 0)
        flag[blockIdx.x] = 1;
}
