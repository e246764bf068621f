// Luo & Suda's model (tests/test_predict.py): P by hand, and the shape of section 4.2.
// nvcc -ptx -arch=sm_90 -O3 luo_suda.cu -o luo_suda.sm90.ptx

// P (section 3.4) of a straight-line kernel, costed by hand from Table 1.
extern "C" __global__ void ls_mix(const int *a, int *out, int k)
{
    int t = threadIdx.x;
    int v = a[t];
    out[t] = (v + k) * 3 - (v ^ k);
}

// Section 4.2: the same accesses for any number of threads T = gridDim.x *
// blockDim.x: round r of thread t touches element r * T + t of 8 planes,
// PLANE floats apart (tests/test_predict.py runs rounds * T = 98304).
#define PLANE 24576

// Memory-bound: every round copies 8 floats, one per plane (8 loads and 8
// stores with constant offsets, nothing computed between them).
extern "C" __global__ void ls_stream(const float *in, float *out, int rounds)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int T = gridDim.x * blockDim.x;
    const float *p = in + t;
    float *q = out + t;
#pragma unroll 1
    for (int r = 0; r < rounds; ++r) {
#pragma unroll
        for (int k = 0; k < 8; ++k)
            q[k * PLANE] = p[k * PLANE];
        p += T;
        q += T;
    }
}

// Compute-bound: every round loads one float, applies 32 dependent
// multiply-adds and stores it.
extern "C" __global__ void ls_compute(const float *in, float *out, int rounds)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int T = gridDim.x * blockDim.x;
    const float *p = in + t;
    float *q = out + t;
#pragma unroll 1
    for (int r = 0; r < rounds; ++r) {
        float x = *p;
#pragma unroll
        for (int k = 0; k < 32; ++k)
            x = x * 1.0001f + 0.5f;
        *q = x;
        p += T;
        q += T;
    }
}
