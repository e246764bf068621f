// Seeded shared-memory hazards for racecheck (tests/test_racecheck.py).
// Every kernel is launched with the block size named in its comment.

// block 64: s[t] is written, then read reversed with no barrier between.
// Warp 0 reads s[63-t] before warp 1 wrote it (a write-after-read hazard
// when warp 1 writes), and warp 1 reads s[63-t] that warp 0 wrote (a
// read-after-write hazard): both, whatever order the warps run in.
__global__ void reverse_nosync(const float *in, float *out)
{
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = in[t];
    out[t] = s[63 - t];
}

// The same with the barrier: no hazard.
__global__ void reverse_sync(const float *in, float *out)
{
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    out[t] = s[63 - t];
}

// block 128: a tree reduction without the barrier inside the loop.
__global__ void reduce_nosync(const float *in, float *out)
{
    __shared__ float s[128];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k)
            s[t] += s[t + k];
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}

// The same, correct.
__global__ void reduce_sync(const float *in, float *out)
{
    __shared__ float s[128];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k)
            s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}

// block 64: every thread writes the one shared word: write-after-write
// between the warps (the lanes of one store do not race with each other).
__global__ void last_writer(int *out)
{
    __shared__ int s;
    s = threadIdx.x;
    __syncthreads();
    if (threadIdx.x == 0)
        *out = s;
}

// block 64: a shared histogram with atomics (atomics do not race with each
// other), barriers around it: no hazard.
__global__ void histogram(const int *in, int *out)
{
    __shared__ int h[4];
    int t = threadIdx.x;
    if (t < 4)
        h[t] = 0;
    __syncthreads();
    atomicAdd(&h[in[t] & 3], 1);
    __syncthreads();
    if (t < 4)
        out[t] = h[t];
}

// block 64: warp-synchronous exchange made safe by __syncwarp: no hazard.
__global__ void warp_exchange(const int *in, int *out)
{
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = in[t];
    __syncwarp();
    out[t] = s[t ^ 1];
}
