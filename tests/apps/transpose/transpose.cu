// transpose: matrix transpose in pitched (2-D) device memory, first with direct
// reads and writes, then through a 32 x 33 shared-memory tile (padded so that the
// column reads hit distinct banks) with 32 x 8 threads per tile. After each
// variant a checking kernel compares out[x][y] with in[y][x] and counts the
// differences in a __managed__ variable that the host reads and resets directly.
// Modelled on cuda-samples 6_Performance/transpose (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 transpose.cu -o transpose
// Run:   ./transpose [w]   (a w x (w * 2/3) matrix, default w = 200: not a tile multiple)
// Checks: the device mismatch count is 0 after each variant and the matrix copied
//         back with cudaMemcpy2D equals the host transpose exactly.
// API: cudaMallocPitch, cudaMemcpy2D (H2D, D2H), cudaMemset2D, __managed__ variable
//      (host reads and writes it between launches), cudaDeviceSynchronize, 2-D grid.
// Launches: 4 (naive, check, tiled, check).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                              \
    do {                                                                         \
        cudaError_t err_ = (call);                                               \
        if (err_ != cudaSuccess) {                                               \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
                    cudaGetErrorString(err_));                                   \
            exit(EXIT_FAILURE);                                                  \
        }                                                                        \
    } while (0)

#define TILE 32
#define ROWS 8

__managed__ int m_mismatches;

__device__ inline float *rowOf(float *base, size_t pitch, int r)
{
    return (float *)((char *)base + r * pitch);
}

// in: h rows of w floats; out: w rows of h floats.
__global__ void transposeNaive(const float *in, size_t inPitch, float *out, size_t outPitch,
                               int w, int h)
{
    int x = blockIdx.x * TILE + threadIdx.x;
    for (int j = 0; j < TILE; j += ROWS) {
        int y = blockIdx.y * TILE + threadIdx.y + j;
        if (x < w && y < h)
            rowOf(out, outPitch, x)[y] = rowOf((float *)in, inPitch, y)[x];
    }
}

__global__ void transposeTiled(const float *in, size_t inPitch, float *out, size_t outPitch,
                               int w, int h)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    for (int j = 0; j < TILE; j += ROWS) {
        int y = blockIdx.y * TILE + threadIdx.y + j;
        if (x < w && y < h)
            tile[threadIdx.y + j][threadIdx.x] = rowOf((float *)in, inPitch, y)[x];
    }
    __syncthreads();
    int tx = blockIdx.y * TILE + threadIdx.x;          // column of out = row of in
    for (int j = 0; j < TILE; j += ROWS) {
        int ty = blockIdx.x * TILE + threadIdx.y + j;  // row of out = column of in
        if (tx < h && ty < w)
            rowOf(out, outPitch, ty)[tx] = tile[threadIdx.x][threadIdx.y + j];
    }
}

__global__ void countMismatches(const float *in, size_t inPitch, const float *out,
                                size_t outPitch, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h && rowOf((float *)out, outPitch, x)[y] != rowOf((float *)in, inPitch, y)[x])
        atomicAdd(&m_mismatches, 1);
}

int main(int argc, char **argv)
{
    int w = argc > 1 ? atoi(argv[1]) : 200;
    if (w < 3) w = 200;
    int h = w * 2 / 3;
    float *in = (float *)malloc((size_t)w * h * sizeof(float));
    float *got = (float *)malloc((size_t)w * h * sizeof(float));
    for (int i = 0; i < w * h; ++i) in[i] = (float)i;
    float *dIn, *dOut;
    size_t inPitch, outPitch;
    CHECK(cudaMallocPitch((void **)&dIn, &inPitch, w * sizeof(float), h));
    CHECK(cudaMallocPitch((void **)&dOut, &outPitch, h * sizeof(float), w));
    CHECK(cudaMemcpy2D(dIn, inPitch, in, w * sizeof(float), w * sizeof(float), h,
                       cudaMemcpyHostToDevice));
    dim3 block(TILE, ROWS), grid((w + TILE - 1) / TILE, (h + TILE - 1) / TILE);
    dim3 checkBlock(16, 16), checkGrid((w + 15) / 16, (h + 15) / 16);
    int wrong = 0;
    for (int variant = 0; variant < 2; ++variant) {
        CHECK(cudaMemset2D(dOut, outPitch, 0xff, h * sizeof(float), w));   // NaNs
        if (variant == 0)
            transposeNaive<<<grid, block>>>(dIn, inPitch, dOut, outPitch, w, h);
        else
            transposeTiled<<<grid, block>>>(dIn, inPitch, dOut, outPitch, w, h);
        CHECK(cudaGetLastError());
        m_mismatches = 0;                               // host write to managed memory
        countMismatches<<<checkGrid, checkBlock>>>(dIn, inPitch, dOut, outPitch, w, h);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        int deviceCount = m_mismatches;                 // host read
        CHECK(cudaMemcpy2D(got, h * sizeof(float), dOut, outPitch, h * sizeof(float), w,
                           cudaMemcpyDeviceToHost));
        int hostCount = 0;
        for (int x = 0; x < w; ++x)
            for (int y = 0; y < h; ++y)
                hostCount += got[x * h + y] != in[y * w + x];
        printf("[transpose] %s: %d x %d, pitches %zu / %zu, %d mismatches on the device, %d on the host\n",
               variant ? "tiled" : "naive", w, h, inPitch, outPitch, deviceCount, hostCount);
        wrong += deviceCount + hostCount;
    }
    CHECK(cudaFree(dIn));
    CHECK(cudaFree(dOut));
    free(in); free(got);
    if (wrong) {
        printf("FAIL (%d mismatches)\n", wrong);
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
