/* ptxc's CUDA driver API (libcuda.so.1): declarations shared by the drv_*.c
 * files.
 *
 * The driver half lives in the same library as the runtime half (shim.h):
 * one connection to ptxc, one allocation table, one device. `ptxc run` puts
 * the library in front of the application as libcudart.so.13 and as
 * libcuda.so.1; the dynamic loader sees one file and loads it once.
 *
 * The types and numbers are those of CUDA 13's cuda.h (a user's machine has
 * no CUDA headers); tests/test_runtime_driver_layout.py checks the structs
 * and enums against the real header when nvcc is installed.
 */
#ifndef PTXC_DRIVER_H
#define PTXC_DRIVER_H

#include "shim.h"

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct drv_module *CUmodule;
typedef struct drv_function *CUfunction;
typedef struct drv_function *CUkernel;
typedef struct drv_module *CUlibrary;
typedef struct drv_link *CUlinkState;
typedef cudaStream_t CUstream;
typedef cudaEvent_t CUevent;

enum {
    CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3, CUDA_ERROR_DEINITIALIZED = 4,
    CUDA_ERROR_NO_DEVICE = 100, CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_IMAGE = 200, CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_CONTEXT_ALREADY_CURRENT = 202, CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    CUDA_ERROR_INVALID_PTX = 218, CUDA_ERROR_INVALID_SOURCE = 300, CUDA_ERROR_FILE_NOT_FOUND = 301,
    CUDA_ERROR_INVALID_HANDLE = 400, CUDA_ERROR_NOT_FOUND = 500, CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_ILLEGAL_ADDRESS = 700, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
    CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE = 708, CUDA_ERROR_CONTEXT_IS_DESTROYED = 709,
    CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720, CUDA_ERROR_NOT_PERMITTED = 800,
    CUDA_ERROR_NOT_SUPPORTED = 801, CUDA_ERROR_UNKNOWN = 999,
};

enum { CU_MEMORYTYPE_HOST = 1, CU_MEMORYTYPE_DEVICE = 2, CU_MEMORYTYPE_ARRAY = 3,
       CU_MEMORYTYPE_UNIFIED = 4 };

enum { CU_JIT_INPUT_CUBIN = 0, CU_JIT_INPUT_PTX = 1, CU_JIT_INPUT_FATBINARY = 2,
       CU_JIT_INPUT_OBJECT = 3, CU_JIT_INPUT_LIBRARY = 4, CU_JIT_INPUT_NVVM = 5 };

enum { CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4 };

/* CU_LAUNCH_PARAM_* markers of cuLaunchKernel's `extra` array */
#define CU_LAUNCH_PARAM_END ((void *)0x00)
#define CU_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define CU_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)
#define CU_LAUNCH_PARAM_END_AS_INT 0x00

typedef struct CUDA_MEMCPY2D_st {
    size_t srcXInBytes, srcY;
    int srcMemoryType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    void *srcArray;
    size_t srcPitch;
    size_t dstXInBytes, dstY;
    int dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    void *dstArray;
    size_t dstPitch;
    size_t WidthInBytes, Height;
} CUDA_MEMCPY2D;

typedef struct CUDA_MEMCPY3D_st {
    size_t srcXInBytes, srcY, srcZ, srcLOD;
    int srcMemoryType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    void *srcArray;
    void *reserved0;
    size_t srcPitch, srcHeight;
    size_t dstXInBytes, dstY, dstZ, dstLOD;
    int dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    void *dstArray;
    void *reserved1;
    size_t dstPitch, dstHeight;
    size_t WidthInBytes, Height, Depth;
} CUDA_MEMCPY3D;

typedef struct CUlaunchAttribute_st {
    int id;
    char pad[4];
    union { char bytes[64]; int cooperative; struct { unsigned x, y, z; } clusterDim; } value;
} CUlaunchAttribute;

typedef struct CUlaunchConfig_st {
    unsigned gridDimX, gridDimY, gridDimZ;
    unsigned blockDimX, blockDimY, blockDimZ;
    unsigned sharedMemBytes;
    CUstream hStream;
    CUlaunchAttribute *attrs;
    unsigned numAttrs;
} CUlaunchConfig;

/* the image of cuLinkComplete (drv_link.c): these 8 bytes, u64 size, ... */
#define LINKED_MAGIC "PTXCLNK"
#define LINKED_MAGIC_BYTES "PTXCLNK"

/* ------------------------------------------------------ drv_init.c */
CUresult drv_unsupported(const char *name);     /* a stub: names the call, 801 */
CUresult drv_from_runtime(cudaError_t e);       /* the CUresult of a runtime error */
/* 1 when `caller` (a return address) lies in the object whose code asked
 * for NVIDIA's runtime export table (drv_export.c): the runtime linked in
 * statically. A launch it makes with a bad configuration returns 9, which
 * it passes on unchanged as cudaErrorInvalidConfiguration, the error the
 * same application gets on a GPU; a driver-API caller (CuPy's own
 * launches, cuda.core) keeps CUDA_ERROR_INVALID_VALUE */
int drv_static_runtime(const void *caller);
CUresult drv_array_copy3d(const CUDA_MEMCPY3D *c);   /* a copy to or from a CUDA array */
int drv_initialized(void);
#define DRV_INIT() do { if (!drv_initialized()) return CUDA_ERROR_NOT_INITIALIZED; } while (0)
/* A forked child of the application (docs/runtime.md, "fork and exec"): as on
 * a GPU, the driver is not usable there; every driver function starts with
 * DRV_CHILD_GUARD(), which returns CUDA_ERROR_NOT_INITIALIZED before the lock
 * (a thread of the parent may have held it at the fork) or the connection. */
#define DRV_CHILD_GUARD() do { if (shim_child) return CUDA_ERROR_NOT_INITIALIZED; } while (0)
/* the CUresult of a runtime call, leaving the runtime's last error as it was */
#define RT(expr) ({ cudaError_t rt_saved_ = shim_last_error(); cudaError_t rt_e_ = (expr); \
                    shim_restore_error(rt_saved_); drv_from_runtime(rt_e_); })

/* ---------------------------------------------------- drv_context.c */
CUresult drv_ctx_check(void);                   /* a current context, or an error */

/* ----------------------------------------------------- drv_module.c */
struct drv_function *drv_function_of(void *handle);   /* CUfunction or CUkernel, NULL if bad */
uint32_t drv_function_id(struct drv_function *f);
const char *drv_function_name(struct drv_function *f);
CUresult drv_function_info(struct drv_function *f, uint32_t *nparams, uint32_t *nbytes,
                           const uint32_t **offsets, const uint32_t **sizes,
                           const int64_t **attrs);
CUresult drv_module_load(const void *image, size_t size, struct drv_module **out, int library);

/* ------------------------------------------------------- drv_link.c */
struct drv_link *drv_link_new(void);
int drv_link_add(struct drv_link *l, int type, const void *data, size_t size, const char *name);
const char *drv_link_image(struct drv_link *l, size_t *size, uint32_t *count);
void drv_link_free(struct drv_link *l);
char *drv_read_file(const char *path, size_t *len);

/* ---------------------------------------------------------- nvrtc.c */
const char *nvrtc_ptx_for(const void *image, size_t size);

/* ------------------------------------------------ hooks of the runtime half */
cudaError_t shim_alloc(void **p, size_t size, int kind, unsigned flags, const char *call);
cudaError_t shim_release(void *p, int host);
cudaError_t shim_copy(void *dst, const void *src, size_t n, int kind);
cudaError_t shim_copy2d(void *dst, size_t dpitch, const void *src, size_t spitch,
                        size_t width, size_t height, int kind);
cudaError_t shim_set2d(void *p, size_t pitch, int value, size_t width, size_t height);
/* the live allocation holding p: base, size, kind (KIND_*), flags; 0 if none */
int shim_range(const void *p, uint64_t *base, uint64_t *size, int *kind, unsigned *flags);
/* the runtime calls the driver half delegates to (stream.c, device.c, memory.c) */
cudaError_t cudaDeviceGetAttribute(int *value, int attr, int dev);
cudaError_t cudaDeviceGetLimit(size_t *value, int limit);
cudaError_t cudaDeviceSetLimit(int limit, size_t value);
cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest);
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned flags, int priority);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaStreamQuery(cudaStream_t s);
cudaError_t cudaStreamIsCapturing(cudaStream_t s, int *status);
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags);
cudaError_t cudaStreamAddCallback(cudaStream_t s, void (*cb)(cudaStream_t, cudaError_t, void *),
                                  void *data, unsigned flags);
cudaError_t cudaLaunchHostFunc(cudaStream_t s, void (*fn)(void *), void *data);
cudaError_t cudaStreamGetFlags(cudaStream_t s, unsigned *flags);
cudaError_t cudaStreamGetPriority(cudaStream_t s, int *priority);
cudaError_t cudaStreamGetId(cudaStream_t s, unsigned long long *id);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s);
cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned flags);
cudaError_t cudaEventQuery(cudaEvent_t e);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b);
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, CUfunction f, int block_size,
                                                     size_t dyn);
uint64_t occupancy_blocks(const uint64_t *g, uint64_t block_size, uint64_t regs, uint64_t smem);
cudaError_t shim_last_error(void);
void shim_restore_error(cudaError_t e);

#endif
