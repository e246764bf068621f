// CTAs run in parallel worker threads must give the bytes and counters of a one-thread run
// (tests/test_parallel_ctas.py, bench/parallel_ctas.py): the cuda-samples patterns of the
// test suite, each with data-dependent control flow so that per-CTA counters differ.
//   nvcc -ptx -arch=sm_90 -O3 parallel_ctas.cu -o parallel_ctas.sm90.ptx

#define TILE 16

// C = A * B (n x n, n a multiple of TILE), shared-memory tiles and __syncthreads.
extern "C" __global__ void matmul_tiled(const float *A, const float *B, float *C, int n)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        As[ty][tx] = A[row * n + t * TILE + tx];
        Bs[ty][tx] = B[(t * TILE + ty) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * n + col] = acc;
}

// out = in^T for a rows x cols matrix, 32x32 tiles padded against bank conflicts, 32x8 CTAs.
extern "C" __global__ void transpose_tiled(const float *in, float *out, int rows, int cols)
{
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        if (x < rows && y + j < cols)
            out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

// Per-CTA 64-bin histogram in shared memory (shared atomics only), written to hist[cta][bin].
extern "C" __global__ void histogram_shared(const unsigned char *data, unsigned *hist, int n)
{
    __shared__ unsigned bins[64];
    for (int b = threadIdx.x; b < 64; b += blockDim.x)
        bins[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&bins[data[i] & 63], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 64; b += blockDim.x)
        hist[blockIdx.x * 64 + b] = bins[b];
}

// One 256-bin histogram of the whole grid in global memory (global atomics: CTAs in order).
extern "C" __global__ void histogram_global(const unsigned char *data, unsigned *hist, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&hist[data[i]], 1u);
}

// Per-CTA sum of a data-dependent number of terms per thread (src[i] % 8 iterations), tree
// reduction in shared memory; out[cta] = the sum. blockDim.x == 128.
extern "C" __global__ void reduce_varying(const int *src, int *out)
{
    __shared__ int s[128];
    int t = threadIdx.x, i = blockIdx.x * 128 + t;
    int v = src[i], acc = 0;
    for (int k = 0; k < (v & 7); ++k)
        acc += v >> k;
    s[t] = acc;
    __syncthreads();
    for (int st = 64; st > 0; st >>= 1) {
        if (t < st)
            s[t] += s[t + st];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}

// Atomics whose result depends on the CTA order (atomic_order.py): CTAs in linear order.
// Each thread takes a ticket and writes its global id into that slot.
extern "C" __global__ void ticket_slots(unsigned *count, unsigned *slots)
{
    unsigned slot = atomicAdd(count, 1u);
    slots[slot] = blockIdx.x * blockDim.x + threadIdx.x;
}

// A float sum rounds differently in another order.
extern "C" __global__ void float_sum(const float *x, float *sum)
{
    atomicAdd(sum, x[blockIdx.x * blockDim.x + threadIdx.x]);
}

// Integer max and or: any order gives the same bytes.
extern "C" __global__ void max_or(const int *x, int *mx, unsigned *bits)
{
    int v = x[blockIdx.x * blockDim.x + threadIdx.x];
    atomicMax(mx, v);
    atomicOr(bits, 1u << (v & 31));
}
