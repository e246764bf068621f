/* CUDA arrays, texture and surface objects: the CUDA 13 declarations the
 * shim needs (driver_types.h, texture_types.h, surface_types.h). Their
 * layouts are checked against the real headers by
 * tests/test_runtime_native.py when nvcc is installed.
 */
#ifndef PTXC_TEXTURE_H
#define PTXC_TEXTURE_H

#include <stddef.h>

struct cudaChannelFormatDesc {
    int x;
    int y;
    int z;
    int w;
    int f;
};

typedef struct cudaArray *cudaArray_t;
typedef unsigned long long cudaTextureObject_t;

/* cudaMalloc3DArray flags (driver_types.h) */
#define ARRAY_LAYERED 0x01              /* cudaArrayLayered */
#define ARRAY_SURFACE_LOAD_STORE 0x02   /* cudaArraySurfaceLoadStore */
#define ARRAY_CUBEMAP 0x04              /* cudaArrayCubemap */
#define ARRAY_TEXTURE_GATHER 0x08       /* cudaArrayTextureGather */

/* A CUDA array (texture.c): device memory of rows(a) rows of pitch bytes,
 * no padding (pitch = width * element bytes); width, height, depth as the
 * application gave them (height 0 for 1-D and 1-D layered arrays, depth 0
 * unless 3-D, layered or cubemap: then the depth is the layers or faces). */
struct cudaArray {
    unsigned magic;
    void *dev;
    struct cudaChannelFormatDesc desc;
    size_t width, height, depth, pitch;
    unsigned flags;
};
int array_valid(cudaArray_t a);         /* a live array of the shim */
size_t array_rows(cudaArray_t a);       /* max(height, 1) * max(depth, 1) */
size_t array_elem_bytes(cudaArray_t a);
typedef unsigned long long cudaSurfaceObject_t;

struct cudaResourceDesc {
    int resType;
    union {
        struct { cudaArray_t array; } array;
        struct { void *mipmap; } mipmap;
        struct { void *devPtr; struct cudaChannelFormatDesc desc; size_t sizeInBytes; } linear;
        struct { void *devPtr; struct cudaChannelFormatDesc desc; size_t width; size_t height;
                 size_t pitchInBytes; } pitch2D;
        struct { int reserved[32]; } reserved;
    } res;
    unsigned int flags;
};

struct cudaTextureDesc {
    int addressMode[3];
    int filterMode;
    int readMode;
    int sRGB;
    float borderColor[4];
    int normalizedCoords;
    unsigned int maxAnisotropy;
    int mipmapFilterMode;
    float mipmapLevelBias;
    float minMipmapLevelClamp;
    float maxMipmapLevelClamp;
    int disableTrilinearOptimization;
    int seamlessCubemap;
};

enum {
    cudaResourceTypeArray = 0, cudaResourceTypeMipmappedArray = 1,
    cudaResourceTypeLinear = 2, cudaResourceTypePitch2D = 3,
};

enum {
    cudaChannelFormatKindSigned = 0, cudaChannelFormatKindUnsigned = 1,
    cudaChannelFormatKindFloat = 2,
};

#endif
