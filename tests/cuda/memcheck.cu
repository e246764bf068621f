// Kernels with deliberate memory errors, for ptxc's memcheck (tests/test_memcheck.py).
// nvcc -ptx -arch=sm_90 -O3 -lineinfo memcheck.cu -o memcheck.sm90.lineinfo.ptx

// srad_v2's north neighbour: J[index_n] with index_n = index - cols is
// negative for the top row of threads (row 0), a read before the buffer.
extern "C" __global__ void north(const float *J, float *out, int cols)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int index = row * cols + col;
    int index_n = index - cols;
    out[index] = J[index] - J[index_n];
}

// A read past the end (i == n - 1 reads in[n]), a misaligned 4-byte read
// (i % 8 == 5) and a store past the end (i >= n - 4 writes out[i + 4]).
extern "C" __global__ void errors(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = in[i] + in[i + 1];
    if (i % 8 == 5)
        v += *(const float *)((const char *)in + 4 * i + 2);
    out[i] = v;
    if (i >= n - 4)
        out[i + 4] = v;
}

// Shared memory and an atomic: threads 30 and 31 of each CTA store to
// tile[32] and tile[33], past the 128-byte tile; thread 31 adds to hits[32],
// past the 32 counters.
extern "C" __global__ void shared_atomic(const float *in, float *out, int *hits)
{
    __shared__ float tile[32];
    int t = threadIdx.x;
    tile[t] = in[blockIdx.x * 32 + t];
    __syncthreads();
    if (t >= 30)
        tile[t + 2] = 0.0f;
    __syncthreads();
    out[blockIdx.x * 32 + t] = tile[t];
    atomicAdd(&hits[t + 1], 1);
}

// No error: memcheck must find none and count as a run without it.
extern "C" __global__ void clean(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 2.0f * in[i];
}

// A 16-byte vector load past the end: thread n - 1 reads in[n] (all four
// components read 0 under memcheck).
extern "C" __global__ void vec4(const float4 *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 v = in[i + 1];
        out[i] = v.x + v.w;
    }
}
