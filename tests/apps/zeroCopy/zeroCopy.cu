// zeroCopy: kernels read and write mapped pinned host memory directly: no
// cudaMemcpy at all. Inputs come from cudaHostAlloc(cudaHostAllocMapped) through
// cudaHostGetDevicePointer; a second kernel writes into cudaMallocHost memory
// through the host pointer itself (unified virtual addressing).
// Modelled on cuda-samples 0_Introduction/simpleZeroCopy (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 zeroCopy.cu -o zeroCopy
// Run:   ./zeroCopy [n]   (default n = 3000)
// Checks: c[i] == a[i] + b[i] (f32, exact) read by the host from the mapped buffer;
//         d[i] == 3 * i written by the kernel through the cudaMallocHost pointer.
// API: cudaSetDeviceFlags(cudaDeviceMapHost), cudaGetDeviceProperties (canMapHostMemory),
//      cudaHostAlloc (Mapped, Mapped | WriteCombined), cudaHostGetDevicePointer,
//      cudaMallocHost, cudaDeviceSynchronize, cudaFreeHost.
// Launches: 2.
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

__global__ void vectorAddMapped(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

__global__ void fillTriple(int *d, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        d[i] = 3 * i;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3000;
    if (n <= 0) n = 3000;
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    if (!prop.canMapHostMemory) {
        printf("FAIL (device %s cannot map host memory)\n", prop.name);
        return EXIT_FAILURE;
    }
    CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
    size_t bytes = n * sizeof(float);
    float *a, *b, *c, *da, *db, *dc;
    CHECK(cudaHostAlloc((void **)&a, bytes, cudaHostAllocMapped));
    CHECK(cudaHostAlloc((void **)&b, bytes, cudaHostAllocMapped));
    CHECK(cudaHostAlloc((void **)&c, bytes, cudaHostAllocMapped | cudaHostAllocWriteCombined));
    for (int i = 0; i < n; ++i) {
        a[i] = 0.25f * (float)(i % 61);
        b[i] = 1.5f * (float)(i % 17) - 4.0f;
        c[i] = -1.0f;
    }
    CHECK(cudaHostGetDevicePointer((void **)&da, a, 0));
    CHECK(cudaHostGetDevicePointer((void **)&db, b, 0));
    CHECK(cudaHostGetDevicePointer((void **)&dc, c, 0));
    vectorAddMapped<<<(n + 127) / 128, 128>>>(da, db, dc, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    int wrong = 0;
    for (int i = 0; i < n; ++i)
        if (c[i] != a[i] + b[i]) {
            if (wrong < 5) fprintf(stderr, "c[%d] = %f, expected %f\n", i, c[i], a[i] + b[i]);
            ++wrong;
        }

    int *d;
    CHECK(cudaMallocHost((void **)&d, n * sizeof(int)));
    for (int i = 0; i < n; ++i) d[i] = -1;
    fillTriple<<<4, 96>>>(d, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < n; ++i)
        if (d[i] != 3 * i) {
            if (wrong < 5) fprintf(stderr, "d[%d] = %d, expected %d\n", i, d[i], 3 * i);
            ++wrong;
        }
    printf("[zeroCopy] %d elements on %s\n", n, prop.name);
    CHECK(cudaFreeHost(a));
    CHECK(cudaFreeHost(b));
    CHECK(cudaFreeHost(c));
    CHECK(cudaFreeHost(d));
    if (wrong) {
        printf("FAIL (%d wrong values)\n", wrong);
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
