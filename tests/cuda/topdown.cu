// TopDown replay and divergence terms, for tests/test_topdown.py.
// nvcc -ptx -arch=sm_90 -O3 topdown.cu -o topdown.sm90.ptx
extern "C" __global__ void strided(const float *a, float *out, int stride)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t] = a[t * stride];
}

extern "C" __global__ void bank2(float *out)
{
    __shared__ float s[64];
    int t = threadIdx.x;
    s[2 * t] = (float)t;
    __syncthreads();
    out[t] = s[(2 * t + 2) % 64];
}

extern "C" __global__ void dfma(double *x, int n)
{
    int t = threadIdx.x;
    double v = x[t];
#pragma unroll 1
    for (int i = 0; i < n; ++i)
        v = fma(v, 1.0000001, 0.5);
    x[t] = v;
}

extern "C" __global__ void partial(const float *a, float *out)
{
    int t = threadIdx.x;
    out[t] = a[t] * 2.0f;
}
