// The matrix multiply, reduction, transpose and histogram patterns of the
// test suite's applications (tests/apps: matrixMul, reduction, transpose,
// histo; the same kernel code, C names) for bench/mem_patterns.py.
//   nvcc -ptx -arch=sm_90 -O3 patterns.cu -o patterns.ptx
#define BS 16
extern "C" __global__ void matmul(float *C, const float *A, const float *B, int wA, int wB)
{
    __shared__ float tileA[BS][BS];
    __shared__ float tileB[BS][BS];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * BS + ty;
    int col = blockIdx.x * BS + tx;
    float sum = 0.0f;
    for (int k0 = 0; k0 < wA; k0 += BS) {
        tileA[ty][tx] = A[row * wA + k0 + tx];
        tileB[ty][tx] = B[(k0 + ty) * wB + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BS; ++k)
            sum += tileA[ty][k] * tileB[k][tx];
        __syncthreads();
    }
    C[row * wB + col] = sum;
}

extern "C" __global__ void reduce_seq(const int *in, int *out, int n)
{
    extern __shared__ int sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    int v = i < n ? in[i] : 0;
    if (i + blockDim.x < n)
        v += in[i + blockDim.x];
    sdata[tid] = v;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

#define TILE 32
#define ROWS 8
extern "C" __global__ void transpose_tiled(const float *in, float *out, int w, int h)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    for (int j = 0; j < TILE; j += ROWS) {
        int y = blockIdx.y * TILE + threadIdx.y + j;
        if (x < w && y < h)
            tile[threadIdx.y + j][threadIdx.x] = in[y * w + x];
    }
    __syncthreads();
    int tx = blockIdx.y * TILE + threadIdx.x;
    for (int j = 0; j < TILE; j += ROWS) {
        int ty = blockIdx.x * TILE + threadIdx.y + j;
        if (tx < h && ty < w)
            out[ty * h + tx] = tile[threadIdx.x][threadIdx.y + j];
    }
}

#define BINS 1024
extern "C" __global__ void histogram(const unsigned int *pixels, int count, unsigned int *global)
{
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += blockDim.x * gridDim.x)
        atomicAdd(&local[pixels[i] % BINS], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        if (local[b] != 0)
            atomicAdd(&global[b], local[b]);
}
