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
