// Accesses of every shape the memory fast path looks at (tests/test_fast_access.py):
// contiguous, uniform, strided, partially masked (a guard and a partial last
// warp), vector (v2/v4), shared tiles with broadcast reads and a uniform store,
// an access out of bounds at its last lane, and groups of shared stores and
// loads at constant offsets from one base in dynamic shared memory.
//   nvcc -ptx -arch=sm_90 -O3 fast_access.cu -o fast_access.sm90.ptx

extern "C" __global__ void shapes(const float *in, float *out, int n, int stride)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)                                   // partial last warp
        return;
    float a = in[i];                              // contiguous
    float b = in[0];                              // uniform
    float c = in[(i * stride) % n];               // strided
    float d = (i & 3) ? in[n - 1 - i] : 0.0f;     // masked, reversed
    out[i] = a + 2.0f * b + 4.0f * c + 8.0f * d;
    if (i % 5 == 0)
        out[n + i / 5] = a;                       // masked store, stride 20 bytes
}

extern "C" __global__ void vectors(const float4 *in, float4 *out, const float2 *in2, float2 *out2, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float4 v = in[i];                             // ld.global.v4 contiguous
    out[i] = make_float4(v.w, v.z, v.y, v.x);     // st.global.v4 contiguous
    float2 u = in2[n - 1 - i];                    // v2, descending
    out2[i] = make_float2(u.y + in2[0].x, u.x);   // v2 store, uniform v2 load
}

extern "C" __global__ void tiles(const int *in, int *out, int *last)
{
    __shared__ int tile[64];
    __shared__ int one;
    int t = threadIdx.x;
    tile[t] = in[blockIdx.x * 64 + t];            // st.shared contiguous
    if (t == 0)
        one = 0;
    __syncthreads();
    one = t;                                      // st.shared uniform: last lane wins per warp
    __syncthreads();
    int s = 0;
    for (int k = 0; k < 64; k += 8)
        s += tile[k] * tile[(t + k) & 63];        // broadcast + contiguous (wrapping) reads
    out[blockIdx.x * 64 + t] = s + tile[63 - t];
    if (t == 0)
        last[blockIdx.x] = one;
}

extern "C" __global__ void copy_n(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] + 1;                       // faults at the last lane when n > size
}

extern "C" __global__ void offsets(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)                                    // one base register, three offsets:
        out[i] = in[i] + 2 * in[i + 8] + 3 * in[i + 40];   // the last faults first at the end
}

extern "C" __global__ void shared_group(const float *in, float *out)
{
    extern __shared__ float dyn[];                // sized by the launch
    int t = threadIdx.x;
#pragma unroll
    for (int k = 0; k < 8; k++)                   // one base, offsets 128k: a group of
        dyn[t + 32 * k] = in[(blockIdx.x * 8 + k) * 32 + t];   // stores (fast_groups.py)
    __syncthreads();
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 8; k++)                   // ... and a group of loads
        s += dyn[t + 32 * k] * (k + 1);
    out[blockIdx.x * 32 + t] = s;
}
