// Memory-heavy kernels for bench/memory.py (cost of the memory counters).
//   nvcc -ptx -arch=sm_90 -O3 memory.cu -o memory.ptx

// A loop of global loads: coalesced for stride 1, one sector per lane for stride 8+.
extern "C" __global__ void mem_loop(const float *in, float *out, int n, int iters, int stride)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < iters; k++)
        acc += in[(i * stride + k * 32) & (n - 1)];
    out[i] = acc;
}

// Tiled transpose through shared memory (32 x 33 tile, blocks of 32 x 8).
extern "C" __global__ void tile_transpose(const float *in, float *out, int width)
{
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        out[(y + j) * width + x] = tile[threadIdx.x][threadIdx.y + j];
}
