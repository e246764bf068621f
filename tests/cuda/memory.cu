// Memory access patterns for the coalescing / bank-conflict counters (issue 10).
//   nvcc -ptx -arch=sm_90 -O3 memory.cu -o memory.sm90.ptx
//
// Every kernel's lane addresses are a closed formula of the thread index and
// the arguments; tests/test_memory_counters.py derives the expected sectors,
// lines, bank conflicts and atomic addresses from those formulas with numpy.

// Global loads at in[i * stride + offset], stores at out[i] (coalesced).
// stride 1 offset 0: coalesced; stride 2/4/32: strided; offset 1: misaligned;
// i >= n: lanes switched off by the bounds branch (partial warps with blocks of 48).
extern "C" __global__ void mem_strided(const float *in, float *out, int stride, int offset, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i * stride + offset];
}

// Every lane loads the same address (one sector per request).
extern "C" __global__ void mem_broadcast(const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[0];
}

// Naive transpose with a 2-D block: row-major reads, column writes
// (out[x * height + y]); the store is the column access of a row-major matrix.
extern "C" __global__ void mem_transpose(const float *in, float *out, int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height)
        out[x * height + y] = in[y * width + x];
}

// 16-byte vector accesses (ld.global.v4.f32 / st.global.v4.f32).
extern "C" __global__ void mem_vec4(const float4 *in, float4 *out, int stride, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i * stride];
}

// Guarded (predicated-off lanes) global load and store from inline PTX: lanes
// with i % modulus != 0 are active but their guard is false.
extern "C" __global__ void mem_predicated(const float *in, float *out, int modulus)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned on = (i % modulus) == 0;
    float v;
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0;\n\tmov.f32 %0, 0f3F800000;\n\t"
                 "@p ld.global.f32 %0, [%2];\n\t}"
                 : "=f"(v) : "r"(on), "l"(in + i));
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %0, 0;\n\t@p st.global.f32 [%1], %2;\n\t}"
                 :: "r"(on), "l"(out + i), "f"(v) : "memory");
}

// Shared memory, 4-byte words: conflict-free fill s[t], strided load and strided
// store at s[(t * stride) & 1023] (stride 1, 2, 32, 33; 0 = broadcast).
extern "C" __global__ void mem_shared(float *out, int stride)
{
    __shared__ float s[1024];
    int t = threadIdx.x;
    s[t] = (float)t;
    __syncthreads();
    float v = s[(t * stride) & 1023];
    __syncthreads();
    s[(t * stride) & 1023] = v + 1.0f;
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = s[t];
}

// Shared memory, 8-byte accesses (two phases of 16 lanes with 4-byte banks).
extern "C" __global__ void mem_shared_f64(double *out, int stride)
{
    __shared__ double s[512];
    int t = threadIdx.x;
    s[t] = (double)t;
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = s[(t * stride) & 511];
}

// Shared memory, 16-byte accesses (four phases of 8 lanes with 4-byte banks).
extern "C" __global__ void mem_shared_vec4(float4 *out, int stride)
{
    __shared__ float4 s[256];
    int t = threadIdx.x;
    s[t] = make_float4(t, t + 1, t + 2, t + 3);
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = s[(t * stride) & 255];
}

// Atomics: all lanes on one address, on t % nbins, on shared t % 4, and a
// red.global (inline PTX: nvcc writes atom even when the result is unused).
extern "C" __global__ void mem_atomics(int *counter, int *hist, int nbins)
{
    __shared__ int sh[4];
    int t = threadIdx.x;
    if (t < 4)
        sh[t] = 0;
    __syncthreads();
    atomicAdd(&counter[0], 1);
    atomicAdd(&hist[t % nbins], 1);
    atomicAdd(&sh[t % 4], 1);
    asm volatile("red.global.add.u32 [%0], 1;" :: "l"(counter + 1 + (t & 7)) : "memory");
    __syncthreads();
    if (t < 4)
        atomicAdd(&counter[9 + t], sh[t]);
}

// Generic accesses: the same non-inlined functions load and store through
// global and shared pointers, so their ld/st have no state space and the
// space is the one the address resolves to at run time.
__device__ __noinline__ float load_generic(const float *p, int k)
{
    return p[k];
}

__device__ __noinline__ void store_generic(float *p, int k, float v)
{
    p[k] = v;
}

extern "C" __global__ void mem_generic(const float *in, float *out, int stride)
{
    __shared__ float s[1024];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    store_generic(s, t, load_generic(in, i));
    __syncthreads();
    float a = load_generic(s, (t * stride) & 1023);
    // odd lanes read shared memory, even lanes global memory: one warp access, two spaces
    const float *p = (t & 1) ? (const float *)s : in;
    float b = load_generic(p, t);
    store_generic(out, i, a + b);
}
