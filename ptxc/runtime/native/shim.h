/* ptxc's CUDA runtime shim: declarations shared by its C files.
 *
 * The CUDA types the shim needs are declared here (a user's machine has no
 * CUDA headers); their layouts are those of CUDA 13's driver_types.h and
 * tests/test_runtime_layout.py checks them against the real header when
 * nvcc is installed. Every exported function uses the C calling convention
 * of the real libcudart.so.13.
 */
#ifndef PTXC_SHIM_H
#define PTXC_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

#include "protocol.h"

#define EXPORT __attribute__((visibility("default")))
/* another exported name of a function of the same file (the per-thread
 * default stream variants _ptds/_ptsz behave like the plain ones here) */
#define ALIAS(name, target) EXPORT __typeof__(target) name __attribute__((alias(#target)))

typedef int cudaError_t;
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
typedef void *cudaKernel_t;

typedef struct { unsigned x, y, z; } dim3;

enum {
    cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3, cudaErrorCudartUnloading = 4,
    cudaErrorInvalidConfiguration = 9, cudaErrorInvalidPitchValue = 12,
    cudaErrorInvalidSymbol = 13, cudaErrorInvalidHostPointer = 16,
    cudaErrorInvalidDevicePointer = 17, cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorMissingConfiguration = 52, cudaErrorInvalidDeviceFunction = 98,
    cudaErrorNoDevice = 100, cudaErrorInvalidDevice = 101,
    cudaErrorNoKernelImageForDevice = 209, cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600, cudaErrorIllegalAddress = 700, cudaErrorAssert = 710,
    cudaErrorMisalignedAddress = 716, cudaErrorLaunchFailure = 719,
    cudaErrorCooperativeLaunchTooLarge = 720, cudaErrorNotSupported = 801, cudaErrorUnknown = 999,
};

enum { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2,
       cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4 };

enum { cudaMemoryTypeUnregistered = 0, cudaMemoryTypeHost = 1, cudaMemoryTypeDevice = 2,
       cudaMemoryTypeManaged = 3 };

/* the device attributes cudaDeviceGetAttribute answers (others: 0) */
enum {
    cudaDevAttrMaxThreadsPerBlock = 1,
    cudaDevAttrMaxBlockDimX = 2,
    cudaDevAttrMaxBlockDimY = 3,
    cudaDevAttrMaxBlockDimZ = 4,
    cudaDevAttrMaxGridDimX = 5,
    cudaDevAttrMaxGridDimY = 6,
    cudaDevAttrMaxGridDimZ = 7,
    cudaDevAttrMaxSharedMemoryPerBlock = 8,
    cudaDevAttrTotalConstantMemory = 9,
    cudaDevAttrWarpSize = 10,
    cudaDevAttrMaxPitch = 11,
    cudaDevAttrMaxRegistersPerBlock = 12,
    cudaDevAttrClockRate = 13,
    cudaDevAttrTextureAlignment = 14,
    cudaDevAttrGpuOverlap = 15,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrCanMapHostMemory = 19,
    cudaDevAttrSurfaceAlignment = 30,
    cudaDevAttrConcurrentKernels = 31,
    cudaDevAttrMemoryClockRate = 36,
    cudaDevAttrGlobalMemoryBusWidth = 37,
    cudaDevAttrL2CacheSize = 38,
    cudaDevAttrMaxThreadsPerMultiProcessor = 39,
    cudaDevAttrAsyncEngineCount = 40,
    cudaDevAttrUnifiedAddressing = 41,
    cudaDevAttrTexturePitchAlignment = 51,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
    cudaDevAttrStreamPrioritiesSupported = 78,
    cudaDevAttrGlobalL1CacheSupported = 79,
    cudaDevAttrLocalL1CacheSupported = 80,
    cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
    cudaDevAttrMaxRegistersPerMultiprocessor = 82,
    cudaDevAttrManagedMemory = 83,
    cudaDevAttrSingleToDoublePrecisionPerfRatio = 87,
    cudaDevAttrConcurrentManagedAccess = 89,
    cudaDevAttrComputePreemptionSupported = 90,
    cudaDevAttrCooperativeLaunch = 95,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
    cudaDevAttrMaxBlocksPerMultiprocessor = 106,
    cudaDevAttrMaxPersistingL2CacheSize = 108,
    cudaDevAttrReservedSharedMemoryPerBlock = 111,
    cudaDevAttrMemoryPoolsSupported = 115,
    cudaDevAttrNumaId = 131,
    cudaDevAttrHostNumaId = 134,
};

struct cudaPointerAttributes {
    int type;
    int device;
    void *devicePointer;
    void *hostPointer;
    long reserved[8];
};

struct cudaPitchedPtr { void *ptr; size_t pitch; size_t xsize; size_t ysize; };
struct cudaExtent { size_t width; size_t height; size_t depth; };

struct cudaFuncAttributes {
    size_t sharedSizeBytes;
    size_t constSizeBytes;
    size_t localSizeBytes;
    int maxThreadsPerBlock;
    int numRegs;
    int ptxVersion;
    int binaryVersion;
    int cacheModeCA;
    int maxDynamicSharedSizeBytes;
    int preferredShmemCarveout;
    int clusterDimMustBeSet;
    int requiredClusterWidth;
    int requiredClusterHeight;
    int requiredClusterDepth;
    int clusterSchedulingPolicyPreference;
    int nonPortableClusterSizeAllowed;
    int reserved[16];
};

/* CUDA 13's cudaDeviceProp, field for field */
struct cudaDeviceProp {
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
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    size_t texturePitchAlignment;
    int multiProcessorCount;
    int integrated;
    int canMapHostMemory;
    int maxTexture1D;
    int maxTexture1DMipmap;
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
    int pageableMemoryAccess;
    int concurrentManagedAccess;
    int computePreemptionSupported;
    int canUseHostPointerForRegisteredMem;
    int cooperativeLaunch;
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
    int deviceNumaConfig;
    int deviceNumaId;
    int mpsEnabled;
    int hostNumaId;
    unsigned int gpuPciDeviceID;
    unsigned int gpuPciSubsystemID;
    int hostNumaMultinodeIpcSupported;
    int reserved[56];
};

/* ------------------------------------------------------------ conn.c */
struct reply {
    int status;
    uint32_t len;
    char *data;            /* malloc'd, len bytes (+ a NUL) */
    int nfds;
    int fds[8];
};

extern pthread_mutex_t shim_lock;   /* recursive: every API function holds it */
#define LOCK() pthread_mutex_lock(&shim_lock)
#define UNLOCK() pthread_mutex_unlock(&shim_lock)

void shim_connect(void);
int shim_dead(void);
int shim_connected(void);          /* the connection to ptxc is made */

/* A forked child of the application (docs/runtime.md, "fork and exec"): CUDA
 * is not usable there, as on a GPU, whose context a child does not get. Every
 * API function starts with CHILD_GUARD(): in a child it returns
 * cudaErrorInitializationError (also cudaGetLastError's from then on) before
 * it takes the lock (another thread of the parent may have held it at the
 * fork) or touches the parent's connection and tables. */
extern volatile int shim_child;            /* set in a forked child (conn.c) */
cudaError_t child_error(void);             /* errors.c: records and returns the error */
#define CHILD_GUARD() do { if (shim_child) return child_error(); } while (0)
void shim_call(uint32_t op, const void *a, size_t alen, const void *b, size_t blen, struct reply *r);
void reply_free(struct reply *r);
void shim_fatal(int status) __attribute__((noreturn));
void shim_unsupported(const char *name) __attribute__((noreturn));
const uint64_t *gpu_info(void);
const char *gpu_name(void);

/* packing helpers */
void put32(char *p, uint32_t v);
void put64(char *p, uint64_t v);
uint32_t get32(const char *p);
uint64_t get64(const char *p);

/* ---------------------------------------------------------- memory.c */
int map_reply_mappings(struct reply *r, size_t at, int count, uint32_t *segs);
int is_mapped_range(const void *p, size_t n);
int in_device_space(const void *p);

/* ---------------------------------------------------------- errors.c */
cudaError_t set_error(cudaError_t e);   /* records e as the last error; returns it */

/* ---------------------------------------------------------- devout.c */
void device_flush(void);                                /* write pending device output */
void device_launch_result(const char *data, size_t len); /* a launch reply's payload */
cudaError_t device_sync(void);      /* a synchronising call: flush; the sticky error (or 0) */
cudaError_t device_sticky(void);
int device_faulted(void);           /* a device fault happened (pending or sticky) */
void device_reset(void);            /* cudaDeviceReset: flush, clear the error */

/* ---------------------------------------------------------- stream.c */
uint64_t stream_id(cudaStream_t s);
void device_clock_launch(const char *data, size_t len); /* a launch reply: advance the device clock */
unsigned stream_flags(cudaStream_t s);
int stream_valid(cudaStream_t s);

/* --------------------------------------------------------- capture.c */
/* what an operation on stream s does: 0 run it, -1 record it into the
 * capture s takes part in, > 0 return this error (s is the legacy stream
 * while a capture is on, or its capture was invalidated) */
int capture_state(cudaStream_t s);
cudaError_t capture_kernel(cudaStream_t s, const void *func, dim3 grid, dim3 block, void **args,
                           size_t shared);
cudaError_t capture_copy(cudaStream_t s, void *dst, size_t dpitch, const void *src, size_t spitch,
                         size_t width, size_t height, int kind);
cudaError_t capture_memset(cudaStream_t s, void *p, size_t pitch, int value, size_t width,
                           size_t height);
cudaError_t capture_host(cudaStream_t s, void (*fn)(void *), void *data);
cudaError_t capture_refuse(cudaStream_t s);        /* an operation capture cannot record */
cudaError_t capture_event_record(cudaEvent_t e, cudaStream_t s);   /* -1 captured, 0 not */
cudaError_t capture_event_wait(cudaStream_t s, cudaEvent_t e, unsigned flags);
cudaError_t capture_sync(cudaStream_t s, int device);   /* a synchronising call */
void capture_forget(const void *handle);           /* a stream or event destroyed */

/* ------------------------------------------------------- graph_exec.c */
/* the number of the cudaGraphLaunch running now (1, 2, ... over the run;
 * 0 outside one): OP_LAUNCH marks the kernel nodes it runs */
uint64_t graph_launch_number(void);

/* ------------------------------------------------------ stream_attr.c */
void stream_attr_forget(cudaStream_t s);

#endif
