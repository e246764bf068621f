// Device-function calls: .func, call.uni with { } parameter scopes, return values.
//   nvcc -ptx -arch=sm_90 -O3 scopes.cu -o scopes.sm90.ptx
//   nvcc -ptx -arch=sm_90 -G scopes.cu -o scopes.sm90.G.ptx

__device__ __noinline__ int sq_plus(int x, int y)
{
    return x * x + y;
}

__device__ __noinline__ float fscale(float x, float s)
{
    return x * s + 1.0f;
}

__device__ __noinline__ void store2(int *p, int a, int b)
{
    p[0] = a;
    p[1] = b;
}

// Recursive device function (nvcc turns the tail recursion into a loop inside the .func).
__device__ __noinline__ int tri(int n)
{
    if (n <= 0)
        return 0;
    return n + tri(n - 1);
}

extern "C" __global__ void scopes_calls(int *out, float *fout, int k)
{
    int t = threadIdx.x;
    int a = sq_plus(t, k);
    int b = sq_plus(a, 1);
    fout[t] = fscale((float)t, 0.5f);
    store2(out + 2 * t, a, b);
    if (a > 10)
        out[2 * t] = tri(t % 4);
}
