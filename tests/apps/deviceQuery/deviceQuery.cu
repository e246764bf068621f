// deviceQuery: lists the CUDA devices the runtime reports and checks their
// properties for consistency, then launches one CTA of the largest allowed size
// with cudaLaunchKernel (no <<<>>>) to confirm the limits are real.
// Modelled on cuda-samples 1_Utilities/deviceQuery (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 deviceQuery.cu -o deviceQuery
// Run:   ./deviceQuery
// Checks: at least one device; on each: a name, compute capability >= 9.0 (the
//         binary holds sm_90 code only), warp size 32, 1024 threads per block,
//         block and grid limits, memory sizes, the attributes agreeing with the
//         properties; cudaGetDevice after cudaSetDevice; cudaMemGetInfo within the
//         total; the probe kernel's 1024 threads each write their id and warpSize.
// API: cudaGetDeviceCount, cudaGetDeviceProperties, cudaDeviceGetAttribute,
//      cudaSetDevice, cudaGetDevice, cudaDriverGetVersion, cudaRuntimeGetVersion,
//      cudaMemGetInfo, cudaLaunchKernel, cudaDeviceSynchronize, cudaDeviceReset.
// Launches: 1.
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

static int failures = 0;

static void expect(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "check failed: %s\n", what);
        ++failures;
    }
}

__global__ void probe(int *ids, int *warp)
{
    int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    ids[t] = t;
    if (t == 0) *warp = warpSize;
}

static int attribute(cudaDeviceAttr attr, int dev)
{
    int v = -1;
    CHECK(cudaDeviceGetAttribute(&v, attr, dev));
    return v;
}

int main(void)
{
    int count = 0, driver = 0, runtime = 0;
    CHECK(cudaGetDeviceCount(&count));
    CHECK(cudaDriverGetVersion(&driver));
    CHECK(cudaRuntimeGetVersion(&runtime));
    printf("Detected %d CUDA capable device(s); driver %d.%d, runtime %d.%d\n", count,
           driver / 1000, (driver % 100) / 10, runtime / 1000, (runtime % 100) / 10);
    expect(count >= 1, "at least one device");
    expect(driver > 0 && runtime > 0, "driver and runtime versions");

    for (int dev = 0; dev < count; ++dev) {
        cudaDeviceProp p;
        memset(&p, 0, sizeof(p));
        CHECK(cudaGetDeviceProperties(&p, dev));
        printf("\nDevice %d: \"%s\"\n", dev, p.name);
        printf("  Compute capability:                  %d.%d\n", p.major, p.minor);
        printf("  Global memory:                       %zu MiB\n", p.totalGlobalMem >> 20);
        printf("  Multiprocessors:                     %d\n", p.multiProcessorCount);
        printf("  Constant memory:                     %zu bytes\n", p.totalConstMem);
        printf("  Shared memory per block:             %zu bytes\n", p.sharedMemPerBlock);
        printf("  Shared memory per multiprocessor:    %zu bytes\n", p.sharedMemPerMultiprocessor);
        printf("  Registers per block:                 %d\n", p.regsPerBlock);
        printf("  Warp size:                           %d\n", p.warpSize);
        printf("  Max threads per multiprocessor:      %d\n", p.maxThreadsPerMultiProcessor);
        printf("  Max threads per block:               %d\n", p.maxThreadsPerBlock);
        printf("  Max block dimensions:                (%d, %d, %d)\n", p.maxThreadsDim[0], p.maxThreadsDim[1], p.maxThreadsDim[2]);
        printf("  Max grid dimensions:                 (%d, %d, %d)\n", p.maxGridSize[0], p.maxGridSize[1], p.maxGridSize[2]);
        printf("  L2 cache:                            %d bytes\n", p.l2CacheSize);
        printf("  Memory bus width:                    %d bits\n", p.memoryBusWidth);
        printf("  Unified addressing / managed memory: %d / %d\n", p.unifiedAddressing, p.managedMemory);
        expect(strlen(p.name) > 0, "device name");
        expect(p.major * 10 + p.minor >= 90, "compute capability >= 9.0");
        expect(p.warpSize == 32, "warpSize == 32");
        expect(p.maxThreadsPerBlock == 1024, "maxThreadsPerBlock == 1024");
        expect(p.maxThreadsDim[0] == 1024 && p.maxThreadsDim[1] == 1024 && p.maxThreadsDim[2] == 64,
               "maxThreadsDim == (1024, 1024, 64)");
        expect(p.maxGridSize[0] == 2147483647 && p.maxGridSize[1] >= 65535 && p.maxGridSize[2] >= 65535,
               "maxGridSize");
        expect(p.totalGlobalMem >= (1ull << 30), "at least 1 GiB of global memory");
        expect(p.sharedMemPerBlock >= 48 * 1024, "at least 48 KiB shared memory per block");
        expect(p.sharedMemPerMultiprocessor >= p.sharedMemPerBlock, "shared memory per SM >= per block");
        expect(p.totalConstMem >= 64 * 1024, "at least 64 KiB constant memory");
        expect(p.multiProcessorCount > 0, "multiprocessors");
        expect(p.regsPerBlock > 0 && p.maxThreadsPerMultiProcessor >= p.maxThreadsPerBlock, "registers and threads per SM");
        expect(p.unifiedAddressing == 1, "unified addressing");
        expect(attribute(cudaDevAttrMultiProcessorCount, dev) == p.multiProcessorCount, "attribute MultiProcessorCount");
        expect(attribute(cudaDevAttrMaxThreadsPerBlock, dev) == p.maxThreadsPerBlock, "attribute MaxThreadsPerBlock");
        expect(attribute(cudaDevAttrWarpSize, dev) == p.warpSize, "attribute WarpSize");
        expect(attribute(cudaDevAttrComputeCapabilityMajor, dev) == p.major, "attribute ComputeCapabilityMajor");
        expect(attribute(cudaDevAttrComputeCapabilityMinor, dev) == p.minor, "attribute ComputeCapabilityMinor");
        expect(attribute(cudaDevAttrMaxSharedMemoryPerBlock, dev) == (int)p.sharedMemPerBlock, "attribute MaxSharedMemoryPerBlock");
    }

    CHECK(cudaSetDevice(0));
    int current = -1;
    CHECK(cudaGetDevice(&current));
    expect(current == 0, "cudaGetDevice after cudaSetDevice(0)");
    size_t freeMem = 0, totalMem = 0;
    CHECK(cudaMemGetInfo(&freeMem, &totalMem));
    cudaDeviceProp p0;
    CHECK(cudaGetDeviceProperties(&p0, 0));
    expect(totalMem == p0.totalGlobalMem && freeMem > 0 && freeMem <= totalMem, "cudaMemGetInfo");

    const int threads = 1024;
    int *dIds, *dWarp, ids[threads], warp = 0;
    CHECK(cudaMalloc(&dIds, sizeof(ids)));
    CHECK(cudaMalloc(&dWarp, sizeof(int)));
    void *args[] = {&dIds, &dWarp};
    CHECK(cudaLaunchKernel((const void *)probe, dim3(1), dim3(32, 8, 4), args, 0, 0));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(ids, dIds, sizeof(ids), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&warp, dWarp, sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int t = 0; t < threads; ++t) bad += ids[t] != t;
    expect(bad == 0, "probe kernel: every thread id written");
    expect(warp == 32, "probe kernel: warpSize == 32");
    CHECK(cudaFree(dIds));
    CHECK(cudaFree(dWarp));
    CHECK(cudaDeviceReset());

    if (failures) {
        printf("FAIL (%d checks failed)\n", failures);
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
