/* The calls a CUDA 12 application makes that CUDA 13 no longer has, for the
 * libcudart.so.12 build of the shim (build_shim.py, major 12; in the
 * libcudart.so.13 build these functions exist but are not exported).
 *
 * CUDA 12's headers turn cudaGetDeviceProperties into
 * cudaGetDeviceProperties_v2, which fills CUDA 12's cudaDeviceProp: CUDA
 * 13's fields plus clockRate, deviceOverlap, kernelExecTimeoutEnabled,
 * computeMode, maxTexture1DLinear, memoryClockRate,
 * singleToDoublePrecisionPerfRatio and cooperativeMultiDeviceLaunch, in the
 * order of CUDA 12's driver_types.h (struct cudaDeviceProp12 below; CUDA 13
 * dropped those eight and added NUMA and MPS fields at the end).
 * cudaThreadSynchronize and cudaThreadExit are the deprecated names of
 * cudaDeviceSynchronize and cudaDeviceReset.
 */
#include <string.h>

#include "shim.h"

struct cudaDeviceProp12 {
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

EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int dev);
EXPORT cudaError_t cudaDeviceGetAttribute(int *value, int attr, int dev);
EXPORT cudaError_t cudaDeviceSynchronize(void);
EXPORT cudaError_t cudaDeviceReset(void);

#define COPY(f) q->f = p.f
#define COPYA(f) memcpy(q->f, p.f, sizeof q->f)

EXPORT cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp12 *q, int dev)
{
    CHILD_GUARD();
    if (!q)
        return set_error(cudaErrorInvalidValue);
    struct cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, dev);
    if (e)
        return e;
    memset(q, 0, sizeof *q);
    COPYA(name); COPYA(uuid); COPYA(luid); COPY(luidDeviceNodeMask); COPY(totalGlobalMem);
    COPY(sharedMemPerBlock); COPY(regsPerBlock); COPY(warpSize); COPY(memPitch);
    COPY(maxThreadsPerBlock); COPYA(maxThreadsDim); COPYA(maxGridSize); COPY(totalConstMem);
    COPY(major); COPY(minor); COPY(textureAlignment); COPY(texturePitchAlignment);
    COPY(multiProcessorCount); COPY(integrated); COPY(canMapHostMemory); COPY(maxTexture1D);
    COPY(maxTexture1DMipmap); COPYA(maxTexture2D); COPYA(maxTexture2DMipmap);
    COPYA(maxTexture2DLinear); COPYA(maxTexture2DGather); COPYA(maxTexture3D);
    COPYA(maxTexture3DAlt); COPY(maxTextureCubemap); COPYA(maxTexture1DLayered);
    COPYA(maxTexture2DLayered); COPYA(maxTextureCubemapLayered); COPY(maxSurface1D);
    COPYA(maxSurface2D); COPYA(maxSurface3D); COPYA(maxSurface1DLayered);
    COPYA(maxSurface2DLayered); COPY(maxSurfaceCubemap); COPYA(maxSurfaceCubemapLayered);
    COPY(surfaceAlignment); COPY(concurrentKernels); COPY(ECCEnabled); COPY(pciBusID);
    COPY(pciDeviceID); COPY(pciDomainID); COPY(tccDriver); COPY(asyncEngineCount);
    COPY(unifiedAddressing); COPY(memoryBusWidth); COPY(l2CacheSize);
    COPY(persistingL2CacheMaxSize); COPY(maxThreadsPerMultiProcessor);
    COPY(streamPrioritiesSupported); COPY(globalL1CacheSupported); COPY(localL1CacheSupported);
    COPY(sharedMemPerMultiprocessor); COPY(regsPerMultiprocessor); COPY(managedMemory);
    COPY(isMultiGpuBoard); COPY(multiGpuBoardGroupID); COPY(hostNativeAtomicSupported);
    COPY(pageableMemoryAccess); COPY(concurrentManagedAccess); COPY(computePreemptionSupported);
    COPY(canUseHostPointerForRegisteredMem); COPY(cooperativeLaunch);
    COPY(sharedMemPerBlockOptin); COPY(pageableMemoryAccessUsesHostPageTables);
    COPY(directManagedMemAccessFromHost); COPY(maxBlocksPerMultiProcessor);
    COPY(accessPolicyMaxWindowSize); COPY(reservedSharedMemPerBlock);
    COPY(hostRegisterSupported); COPY(sparseCudaArraySupported);
    COPY(hostRegisterReadOnlySupported); COPY(timelineSemaphoreInteropSupported);
    COPY(memoryPoolsSupported); COPY(gpuDirectRDMASupported);
    COPY(gpuDirectRDMAFlushWritesOptions); COPY(gpuDirectRDMAWritesOrdering);
    COPY(memoryPoolSupportedHandleTypes); COPY(deferredMappingCudaArraySupported);
    COPY(ipcEventSupported); COPY(clusterLaunch); COPY(unifiedFunctionPointers);
    /* the CUDA 12 fields: the same numbers cudaDeviceGetAttribute gives */
    cudaDeviceGetAttribute(&q->clockRate, 13 /* cudaDevAttrClockRate */, dev);
    cudaDeviceGetAttribute(&q->deviceOverlap, 15 /* cudaDevAttrGpuOverlap */, dev);
    cudaDeviceGetAttribute(&q->memoryClockRate, 36 /* cudaDevAttrMemoryClockRate */, dev);
    cudaDeviceGetAttribute(&q->singleToDoublePrecisionPerfRatio,
                           87 /* cudaDevAttrSingleToDoublePrecisionPerfRatio */, dev);
    q->kernelExecTimeoutEnabled = 0;
    q->computeMode = 0;                      /* cudaComputeModeDefault */
    q->maxTexture1DLinear = 0;               /* no textures in ptxc */
    q->cooperativeMultiDeviceLaunch = 0;     /* one device */
    return cudaSuccess;
}

EXPORT cudaError_t cudaThreadSynchronize(void) { CHILD_GUARD(); return cudaDeviceSynchronize(); }
EXPORT cudaError_t cudaThreadExit(void) { CHILD_GUARD(); return cudaDeviceReset(); }
