// Benchmark kernels for bench/sync_paths.py: shared-memory atomics,
// __syncthreads reductions, global atomics (PTX committed next to this file:
//   nvcc -ptx -arch=sm_90 -O3 sync_paths.cu -o sync_paths.ptx)

// 256-bin histogram in shared memory (cuda-samples histogram256 style):
// shared atomics per element, __syncthreads, one global atomic per bin.
extern "C" __global__ void hist_shared(const unsigned *in, unsigned *hist, int n)
{
    __shared__ unsigned bins[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        bins[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&bins[in[i] & 255], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        atomicAdd(&hist[b], bins[b]);
}

// Tree reduction in shared memory with __syncthreads (cuda-samples reduce2):
// blockDim.x must be a power of two <= 1024.
extern "C" __global__ void reduce_sync(const float *in, float *out, int n)
{
    __shared__ float s[1024];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x * 2 + t;
    float v = 0.0f;
    if (i < n) v = in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    s[t] = v;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

// Global atomics: every thread adds to one of 64 counters and takes a ticket.
extern "C" __global__ void atom_global(int *ctr, int *ticket, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&ctr[i & 63], i & 7);
        ticket[i] = atomicAdd(&ctr[64], 1);
    }
}
