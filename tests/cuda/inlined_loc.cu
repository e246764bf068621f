// Nested __forceinline__ device functions called from several places, so that
// nvcc -lineinfo / -G emit `.loc ..., function_name $L__info_stringN, inlined_at F L C` chains.
// nvcc -ptx -arch=sm_90 -O3 -lineinfo inlined_loc.cu -o inlined_loc.sm90.lineinfo.ptx
// nvcc -ptx -arch=sm_90 -G inlined_loc.cu -o inlined_loc.sm90.G.ptx
__device__ __forceinline__ float sq(float x) { return x * x; }

__device__ __forceinline__ float norm2(float a, float b)
{
    return sq(a) + sq(b);
}

__device__ __forceinline__ float clampf(float v, float lo, float hi)
{
    if (v < lo) return lo;
    if (v > hi) return hi;
    return v;
}

__device__ __forceinline__ float shade(float a, float b, int i)
{
    float n = norm2(a, b);
    if (i & 1)
        n = clampf(n, 0.0f, sq(b));
    return n + norm2(b, a);
}

// Not inlined: its own .func with its own inlined_at chains.
__device__ __noinline__ float blend(float a, float b, int i)
{
    return shade(b, a, i) - clampf(a, b, sq(a));
}

extern "C" __global__ void inlined_loc(const float *x, const float *y, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i];
    float acc = shade(a, b, i);
    for (int k = 0; k < (i & 3); ++k)
        acc += shade(acc, a, k) * sq(b);
    if (i & 4)
        acc = blend(acc, b, i);
    out[i] = clampf(acc, -1.0f, norm2(a, acc));
}
