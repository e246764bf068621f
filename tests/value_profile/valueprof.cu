// Kernels for the value-profile tests (tests/test_value_profile.py).
// nvcc -ptx -arch=sm_90 -O3 valueprof.cu -o valueprof.sm90.ptx
extern "C" __global__ void vp_mask(unsigned *out)
{
    unsigned r = threadIdx.x & 0xF0;
    out[threadIdx.x] = r;
}

extern "C" __global__ void vp_scalar(unsigned *out)
{
    unsigned b = blockIdx.x * 4;
    out[blockIdx.x * blockDim.x + threadIdx.x] = b;
}

extern "C" __global__ void vp_loop(const unsigned *x, unsigned *out, int n)
{
    unsigned acc = 0;
#pragma unroll 1
    for (int i = 0; i < n; i++)
        acc += x[i * blockDim.x + threadIdx.x];
    out[threadIdx.x] = acc;
}

extern "C" __global__ void vp_xor(const unsigned *x, unsigned *y, unsigned c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] ^ c;
}

extern "C" __global__ void vp_scale(const float *x, double *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = (double)(x[i] * 2.0f);
}

extern "C" __global__ void vp_guard(unsigned *out)
{
    unsigned v = 0xFF;
    unsigned odd = threadIdx.x & 1;
    asm("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0;\n\t@p mov.b32 %0, 0x1234;\n\t}"
        : "+r"(v) : "r"(odd));
    out[threadIdx.x] = v;
}

extern "C" __global__ void vp_vec(const uint2 *in, unsigned *out)
{
    uint2 v = in[threadIdx.x];
    out[threadIdx.x] = v.x ^ v.y;
}

extern "C" __global__ void vp_wide(unsigned long long *out)
{
    unsigned long long lo = threadIdx.x, hi = 0xABCDull << 32, a, b;
    asm("{\n\t.reg .b128 q;\n\tmov.b128 q, {%2, %3};\n\tmov.b128 {%0, %1}, q;\n\t}"
        : "=l"(a), "=l"(b) : "l"(lo), "l"(hi));
    out[threadIdx.x] = a + b;
}

__device__ __noinline__ unsigned low4(unsigned x)
{
    return x & 0xF;
}

extern "C" __global__ void vp_call(unsigned *out)
{
    out[threadIdx.x] = low4(threadIdx.x) + low4(blockIdx.x);
}

extern "C" __global__ void vp_bar(unsigned *out)
{
    int n = __syncthreads_count(threadIdx.x < 40);
    int any = __syncthreads_or(threadIdx.x == 3);
    out[threadIdx.x] = n + any;
}
