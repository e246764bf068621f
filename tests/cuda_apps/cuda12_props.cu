// A CUDA 12 application's view of the device (tests/test_runtime_printf.py):
// CUDA 12's cuda_runtime_api.h maps cudaGetDeviceProperties to
// cudaGetDeviceProperties_v2, which fills CUDA 12's cudaDeviceProp (1032
// bytes; the field list below is CUDA 12.x's driver_types.h, with its
// reserved2[2] + reserved[61] tail as one array). Compiled with nvcc 13 and
// linked against ptxc's libcudart.so.12, it calls _v2 and the deprecated
// cudaThreadSynchronize as a CUDA 12 build would, then runs a kernel.
#include <cstdio>
#include <cstddef>

struct Prop12 {
    char name[256];
    unsigned char uuid[16];
    char luid[8];
    unsigned int luidDeviceNodeMask;
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int clockRate;
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    size_t texturePitchAlignment;
    int deviceOverlap;
    int multiProcessorCount;
    int kernelExecTimeoutEnabled;
    int integrated;
    int canMapHostMemory;
    int computeMode;
    int maxTexture1D;
    int maxTexture1DMipmap;
    int maxTexture1DLinear;
    int maxTexture2D[2];
    int maxTexture2DMipmap[2];
    int maxTexture2DLinear[3];
    int maxTexture2DGather[2];
    int maxTexture3D[3];
    int maxTexture3DAlt[3];
    int maxTextureCubemap;
    int maxTexture1DLayered[2];
    int maxTexture2DLayered[3];
    int maxTextureCubemapLayered[2];
    int maxSurface1D;
    int maxSurface2D[2];
    int maxSurface3D[3];
    int maxSurface1DLayered[2];
    int maxSurface2DLayered[3];
    int maxSurfaceCubemap;
    int maxSurfaceCubemapLayered[2];
    size_t surfaceAlignment;
    int concurrentKernels;
    int ECCEnabled;
    int pciBusID;
    int pciDeviceID;
    int pciDomainID;
    int tccDriver;
    int asyncEngineCount;
    int unifiedAddressing;
    int memoryClockRate;
    int memoryBusWidth;
    int l2CacheSize;
    int persistingL2CacheMaxSize;
    int maxThreadsPerMultiProcessor;
    int streamPrioritiesSupported;
    int globalL1CacheSupported;
    int localL1CacheSupported;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    int managedMemory;
    int isMultiGpuBoard;
    int multiGpuBoardGroupID;
    int hostNativeAtomicSupported;
    int singleToDoublePrecisionPerfRatio;
    int pageableMemoryAccess;
    int concurrentManagedAccess;
    int computePreemptionSupported;
    int canUseHostPointerForRegisteredMem;
    int cooperativeLaunch;
    int cooperativeMultiDeviceLaunch;
    size_t sharedMemPerBlockOptin;
    int pageableMemoryAccessUsesHostPageTables;
    int directManagedMemAccessFromHost;
    int maxBlocksPerMultiProcessor;
    int accessPolicyMaxWindowSize;
    size_t reservedSharedMemPerBlock;
    int hostRegisterSupported;
    int sparseCudaArraySupported;
    int hostRegisterReadOnlySupported;
    int timelineSemaphoreInteropSupported;
    int memoryPoolsSupported;
    int gpuDirectRDMASupported;
    unsigned int gpuDirectRDMAFlushWritesOptions;
    int gpuDirectRDMAWritesOrdering;
    unsigned int memoryPoolSupportedHandleTypes;
    int deferredMappingCudaArraySupported;
    int ipcEventSupported;
    int clusterLaunch;
    int unifiedFunctionPointers;
    int reserved[63];
};

extern "C" cudaError_t cudaGetDeviceProperties_v2(Prop12 *p, int dev);
extern "C" cudaError_t cudaThreadSynchronize(void);

__global__ void hello() { printf("hello from CUDA 12 block %d\n", blockIdx.x); }

int main()
{
    static_assert(sizeof(Prop12) == 1032, "CUDA 12 cudaDeviceProp is 1032 bytes");
    Prop12 p;
    cudaError_t e = cudaGetDeviceProperties_v2(&p, 0);
    int version = 0;
    cudaRuntimeGetVersion(&version);
    printf("props: %s runtime=%d name=%s cc=%d.%d sms=%d clock=%d memclock=%d l2=%d "
           "blocks/sm=%d optin=%zu unifiedFunctionPointers=%d\n",
           cudaGetErrorName(e), version, p.name, p.major, p.minor, p.multiProcessorCount,
           p.clockRate, p.memoryClockRate, p.l2CacheSize, p.maxBlocksPerMultiProcessor,
           p.sharedMemPerBlockOptin, p.unifiedFunctionPointers);
    hello<<<2, 1>>>();
    printf("sync: %s\n", cudaGetErrorName(cudaThreadSynchronize()));
    return 0;
}
