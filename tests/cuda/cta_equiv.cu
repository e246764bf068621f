// CTA-equivalence test kernels (tests/test_cta_equivalence.py): decisions that
// depend on blockIdx only through comparisons the launcher can classify, and
// one whose slice reads blockIdx-indexed memory (the condition must refuse).
//   nvcc -ptx -arch=sm_90 -O3 cta_equiv.cu -o cta_equiv.sm90.ptx
// extern "C" keeps the kernel names unmangled.

// a linear-index bounds check: full CTAs, the partial last one, idle ones
extern "C" __global__ void scale_bounded(const float *x, float *y, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = s * x[i];
}

// a grid-stride loop: CTAs differ in how many rounds they do
extern "C" __global__ void saxpy_stride(const float *x, float *y, float a, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

// a 2-D grid with a partial last column and row
extern "C" __global__ void tile2d(const float *in, float *out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h)
        out[y * w + x] = 2.0f * in[y * w + x];
}

// a loop whose trip count is a function of blockIdx alone
extern "C" __global__ void block_rounds(float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float acc = 0.0f;
#pragma unroll 1
    for (unsigned k = 0; k < blockIdx.x % 5u + 1u; ++k)
        acc = acc * 0.5f + 1.0f;
    y[i] = acc;
}

// thread t of CTA c works when t < c: CTAs 1 .. blockDim-1 are each mixed
extern "C" __global__ void triangle(float *y)
{
    if (threadIdx.x < blockIdx.x)
        y[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
}

// the branch reads memory at a blockIdx-dependent address: must refuse
extern "C" __global__ void block_flag(const int *flags, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    if (flags[blockIdx.x] > 0)
        y[i] = 1.0f;
    else
        y[i] = 2.0f;
}

// shared memory, a barrier and a tree reduction after a bounds check
extern "C" __global__ void block_sum(const int *x, int *out, int n)
{
    __shared__ int buf[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = i < n ? x[i] : 0;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = buf[0];
}

// a product of blockIdx and threadIdx (not separable: exact evaluation)
extern "C" __global__ void product_bound(float *y, unsigned n)
{
    unsigned v = blockIdx.x * threadIdx.x;
    if (v < n)
        y[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
}

// or of overlapping bits (not a sum: exact evaluation)
extern "C" __global__ void or_bound(float *y, unsigned n)
{
    unsigned v = (blockIdx.x * 8u) | threadIdx.x;
    if (v < n)
        y[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
}

// a division by a parameter (a zero divisor: every CTA runs)
extern "C" __global__ void div_bound(float *y, int d, int n)
{
    int group = (int)blockIdx.x / d;
    if (group < n && threadIdx.x % 2 == 0)
        y[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
}

// a loop counting down from a blockIdx-dependent start
extern "C" __global__ void countdown(float *y, int n)
{
    float acc = 0.0f;
#pragma unroll 1
    for (int i = n - (int)blockIdx.x; i > 0; i -= 3)
        acc += 1.0f;
    y[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
