// Micro-benchmarks for `ptxc calibrate` (ptxc/predict/calibrate.py): each
// kernel isolates one parameter of Luo & Suda's model (docs/predict.md).
// nvcc -ptx -arch=sm_75 -O3 microbench.cu -o microbench.sm75.ptx
// (.target sm_75: the driver JIT-compiles it for any GPU of cc >= 7.5.)

// a: one thread follows a pointer chain through global memory; every load
// depends on the previous one. cycles[0] / steps = latency of one load.
extern "C" __global__ void chase_global(const unsigned *next, int steps, unsigned *out,
                                        long long *cycles)
{
    unsigned j = 0;
    long long t0 = clock64();
    for (int i = 0; i < steps; ++i)
        j = next[j];
    long long t1 = clock64();
    out[0] = j;
    cycles[0] = t1 - t0;
}

// c: the same chase in shared memory (n <= 1024 entries copied in first).
extern "C" __global__ void chase_shared(const unsigned *next, int n, int steps, unsigned *out,
                                        long long *cycles)
{
    __shared__ unsigned s[1024];
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        s[i] = next[i];
    __syncthreads();
    if (threadIdx.x != 0)
        return;
    unsigned j = 0;
    long long t0 = clock64();
    for (int i = 0; i < steps; ++i)
        j = s[j];
    long long t1 = clock64();
    out[0] = j;
    cycles[0] = t1 - t0;
}

// d: one thread runs 16 dependent FMAs per iteration.
// cycles[0] / (16 steps) = dependent-issue latency.
extern "C" __global__ void fma_chain(float *io, int steps, long long *cycles)
{
    float v = io[0], a = io[1], b = io[2];
    long long t0 = clock64();
    for (int i = 0; i < steps; ++i) {
#pragma unroll
        for (int k = 0; k < 16; ++k)
            v = fmaf(v, a, b);
    }
    long long t1 = clock64();
    io[0] = v;
    cycles[0] = t1 - t0;
}

// Class costs: every thread runs 8 independent chains of `steps` operations
// (8 x steps warp instructions of the class per warp). Time with CUDA events
// x clock x SMs / warp instructions = cycles of one SM per warp instruction.
extern "C" __global__ void tp_fp32(float *io, int steps)
{
    float v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = io[threadIdx.x] + k;
    for (int i = 0; i < steps; ++i) {
#pragma unroll
        for (int k = 0; k < 8; ++k) v[k] = fmaf(v[k], 0.999f, 0.5f);
    }
    float s = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) s += v[k];
    io[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

extern "C" __global__ void tp_fp64(double *io, int steps)
{
    double v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = io[threadIdx.x] + k;
    for (int i = 0; i < steps; ++i) {
#pragma unroll
        for (int k = 0; k < 8; ++k) v[k] = fma(v[k], 0.999, 0.5);
    }
    double s = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) s += v[k];
    io[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

extern "C" __global__ void tp_int(int *io, int steps)
{
    int v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = io[threadIdx.x] + k;
    for (int i = 0; i < steps; ++i) {
#pragma unroll
        for (int k = 0; k < 8; ++k) v[k] = v[k] * 3 + 1;
    }
    int s = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) s ^= v[k];
    io[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

extern "C" __global__ void tp_sfu(float *io, int steps)
{
    float v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = io[threadIdx.x] + k;
    for (int i = 0; i < steps; ++i) {
#pragma unroll
        for (int k = 0; k < 8; ++k) v[k] = __sinf(v[k]);
    }
    float s = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) s += v[k];
    io[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// b: a streaming copy; bytes / time = DRAM bandwidth.
extern "C" __global__ void copy(const float4 *a, float4 *b, long n)
{
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    long stride = (long)gridDim.x * blockDim.x;
    for (; i < n; i += stride)
        b[i] = a[i];
}

// m: an empty kernel; launch-to-completion time = launch overhead.
extern "C" __global__ void empty() {}
