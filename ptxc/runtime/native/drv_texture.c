/* CUDA arrays, texture and surface objects through the driver API, as
 * NVIDIA's static CUDA runtime (nvcc's default) asks for them: each call
 * converts the driver's descriptors (cuda.h of CUDA 13: CUDA_ARRAY3D_DESCRIPTOR,
 * CUDA_RESOURCE_DESC, CUDA_TEXTURE_DESC) into the runtime's and calls the
 * shim's runtime half (texture.c), so both paths make the same arrays and
 * objects. Follows the CUDA Driver API reference, "Array Management",
 * "Texture Object Management" and "Surface Object Management".
 *
 * A CUarray is the shim's cudaArray_t; a 2D/3D copy with an array on
 * either side is the runtime's cudaMemcpy3D (its bounds checks included). Array formats: the 8/16/32-bit
 * integers, half and float with 1, 2 or 4 channels (the others, such as
 * NV12 or the block-compressed ones, are named unsupported calls). In a
 * texture, an integer format is read as normalized floats unless
 * CU_TRSF_READ_AS_INTEGER is set, as the reference says.
 */
#define _GNU_SOURCE
#include <string.h>

#include "driver.h"
#include "graph.h"
#include "texture.h"

EXPORT cudaError_t cudaMalloc3DArray(cudaArray_t *a, const struct cudaChannelFormatDesc *desc,
                                     struct cudaExtent extent, unsigned flags);
EXPORT cudaError_t cudaFreeArray(cudaArray_t a);
EXPORT cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p);
EXPORT cudaError_t cudaCreateTextureObject(cudaTextureObject_t *t, const struct cudaResourceDesc *r,
                                           const struct cudaTextureDesc *td, const void *view);
EXPORT cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t *s, const struct cudaResourceDesc *r);
EXPORT cudaError_t cudaDestroyTextureObject(cudaTextureObject_t t);
EXPORT cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t s);
EXPORT cudaError_t cudaGetTextureObjectResourceDesc(struct cudaResourceDesc *r, cudaTextureObject_t t);
EXPORT cudaError_t cudaGetTextureObjectTextureDesc(struct cudaTextureDesc *td, cudaTextureObject_t t);

typedef struct {
    size_t Width, Height, Depth;
    int Format;
    unsigned NumChannels, Flags;
} CUDA_ARRAY3D_DESCRIPTOR;

typedef struct { size_t Width, Height; int Format; unsigned NumChannels; } CUDA_ARRAY_DESCRIPTOR;

typedef struct {
    int resType;
    union {
        struct { cudaArray_t hArray; } array;
        struct { CUdeviceptr devPtr; int format; unsigned numChannels; size_t sizeInBytes; } linear;
        struct { CUdeviceptr devPtr; int format; unsigned numChannels; size_t width, height,
                 pitchInBytes; } pitch2D;
        struct { int reserved[32]; } reserved;
    } res;
    unsigned flags;
} CUDA_RESOURCE_DESC;

typedef struct {
    int addressMode[3];
    int filterMode;
    unsigned flags, maxAnisotropy;
    int mipmapFilterMode;
    float mipmapLevelBias, minMipmapLevelClamp, maxMipmapLevelClamp;
    float borderColor[4];
    int reserved[12];
} CUDA_TEXTURE_DESC;

#define CU_TRSF_READ_AS_INTEGER 0x01
#define CU_TRSF_NORMALIZED_COORDINATES 0x02
#define CU_TRSF_SRGB 0x10
#define CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION 0x20
#define CU_TRSF_SEAMLESS_CUBEMAP 0x40

/* CUarray_format -> bits per channel and kind; 0: not a format ptxc has */
static int channel(int format, int *bits, int *kind)
{
    switch (format) {
    case 0x01: *bits = 8;  *kind = cudaChannelFormatKindUnsigned; return 1;
    case 0x02: *bits = 16; *kind = cudaChannelFormatKindUnsigned; return 1;
    case 0x03: *bits = 32; *kind = cudaChannelFormatKindUnsigned; return 1;
    case 0x08: *bits = 8;  *kind = cudaChannelFormatKindSigned; return 1;
    case 0x09: *bits = 16; *kind = cudaChannelFormatKindSigned; return 1;
    case 0x0a: *bits = 32; *kind = cudaChannelFormatKindSigned; return 1;
    case 0x10: *bits = 16; *kind = cudaChannelFormatKindFloat; return 1;
    case 0x20: *bits = 32; *kind = cudaChannelFormatKindFloat; return 1;
    default: return 0;
    }
}

/* the runtime's channel description of (format, channels); 0 on a bad pair,
 * -1 on a format ptxc lacks */
static int channel_desc(int format, unsigned n, struct cudaChannelFormatDesc *d)
{
    int bits, kind;
    if (!channel(format, &bits, &kind))
        return -1;
    if (n != 1 && n != 2 && n != 4)
        return 0;
    memset(d, 0, sizeof *d);
    d->x = bits;
    d->y = n > 1 ? bits : 0;
    d->z = d->w = n > 2 ? bits : 0;
    d->f = kind;
    return 1;
}

static CUresult array_create(cudaArray_t *out, size_t w, size_t h, size_t d, int format,
                             unsigned n, unsigned flags, const char *name)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    struct cudaChannelFormatDesc desc;
    int ok = channel_desc(format, n, &desc);
    if (ok < 0)
        return drv_unsupported(name);
    if (!ok)
        return CUDA_ERROR_INVALID_VALUE;
    struct cudaExtent e = { w, h, d };
    return RT(cudaMalloc3DArray(out, &desc, e, flags));
}

EXPORT CUresult cuArray3DCreate_v2(cudaArray_t *a, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (st || !d)
        return st ? st : CUDA_ERROR_INVALID_VALUE;
    return array_create(a, d->Width, d->Height, d->Depth, d->Format, d->NumChannels, d->Flags,
                        "cuArray3DCreate with this CUarray_format");
}

EXPORT CUresult cuArrayCreate_v2(cudaArray_t *a, const CUDA_ARRAY_DESCRIPTOR *d)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (st || !d)
        return st ? st : CUDA_ERROR_INVALID_VALUE;
    return array_create(a, d->Width, d->Height, 0, d->Format, d->NumChannels, 0,
                        "cuArrayCreate with this CUarray_format");
}

EXPORT CUresult cuArrayDestroy(cudaArray_t a)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    return st ? st : RT(cudaFreeArray(a));
}

/* the CUarray_format of a runtime channel description, 0 if none */
static int format_of(const struct cudaChannelFormatDesc *d)
{
    static const int codes[3][3] = {     /* [kind][8, 16, 32 bits] */
        { 0x08, 0x09, 0x0a }, { 0x01, 0x02, 0x03 }, { 0, 0x10, 0x20 },
    };
    int b = d->x == 8 ? 0 : d->x == 16 ? 1 : d->x == 32 ? 2 : -1;
    return b >= 0 && d->f >= 0 && d->f <= 2 ? codes[d->f][b] : 0;
}

EXPORT CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *d, cudaArray_t a)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (st || !d)
        return st ? st : CUDA_ERROR_INVALID_VALUE;
    if (!array_valid(a))
        return CUDA_ERROR_INVALID_HANDLE;
    d->Width = a->width;
    d->Height = a->height;
    d->Depth = a->depth;
    d->Format = format_of(&a->desc);
    d->NumChannels = (a->desc.x > 0) + (a->desc.y > 0) + (a->desc.z > 0) + (a->desc.w > 0);
    d->Flags = a->flags;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR *d, cudaArray_t a)
{
    DRV_CHILD_GUARD();
    CUDA_ARRAY3D_DESCRIPTOR d3;
    CUresult st = d ? cuArray3DGetDescriptor_v2(&d3, a) : CUDA_ERROR_INVALID_VALUE;
    if (st)
        return st;
    if (d3.Depth || (d3.Flags & ~(unsigned)ARRAY_SURFACE_LOAD_STORE))
        return CUDA_ERROR_INVALID_VALUE;       /* a 3-D, layered or cubemap array */
    d->Width = d3.Width;
    d->Height = d3.Height;
    d->Format = d3.Format;
    d->NumChannels = d3.NumChannels;
    return CUDA_SUCCESS;
}

/* one side of a driver copy as the runtime's: an array (x in elements) or
 * a pitched pointer (x in bytes); 0, or a CUresult */
static CUresult copy_side(int type, const void *host, CUdeviceptr dev, void *array, size_t x,
                          size_t y, size_t z, size_t pitch, size_t height, size_t width_bytes,
                          void **arr, struct cudaPos *pos, struct cudaPitchedPtr *p)
{
    *pos = (struct cudaPos){ x, y, z };
    if (type == CU_MEMORYTYPE_ARRAY) {
        cudaArray_t a = array;
        size_t eb = array_valid(a) ? array_elem_bytes(a) : 0;
        if (!eb || x % eb)
            return CUDA_ERROR_INVALID_VALUE;
        pos->x = x / eb;
        *arr = a;
        return CUDA_SUCCESS;
    }
    void *at = type == CU_MEMORYTYPE_HOST ? (void *)host
             : type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED ? (void *)(uintptr_t)dev
             : NULL;
    if (!at)
        return CUDA_ERROR_INVALID_VALUE;
    size_t pt = pitch ? pitch : width_bytes;
    *p = (struct cudaPitchedPtr){ at, pt, pt, height };
    return CUDA_SUCCESS;
}

CUresult drv_array_copy3d(const CUDA_MEMCPY3D *c)
{
    struct cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    size_t sh = c->srcHeight ? c->srcHeight : c->Height, dh = c->dstHeight ? c->dstHeight : c->Height;
    CUresult st = copy_side(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, c->srcXInBytes,
                            c->srcY, c->srcZ, c->srcPitch, sh, c->WidthInBytes, &p.srcArray,
                            &p.srcPos, &p.srcPtr);
    if (!st)
        st = copy_side(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, c->dstXInBytes,
                       c->dstY, c->dstZ, c->dstPitch, dh, c->WidthInBytes, &p.dstArray,
                       &p.dstPos, &p.dstPtr);
    if (st)
        return st;
    cudaArray_t a = p.srcArray ? p.srcArray : p.dstArray;    /* the extent in its elements */
    size_t eb = array_elem_bytes(a);
    if (c->WidthInBytes % eb)
        return CUDA_ERROR_INVALID_VALUE;
    p.extent = (struct cudaExtent){ c->WidthInBytes / eb, c->Height ? c->Height : 1,
                                    c->Depth ? c->Depth : 1 };
    p.kind = cudaMemcpyDefault;        /* the runtime finds host or device memory */
    return RT(cudaMemcpy3D(&p));
}

/* CUDA_RESOURCE_DESC -> cudaResourceDesc; 0 or a CUresult */
static CUresult resource(const CUDA_RESOURCE_DESC *c, struct cudaResourceDesc *r)
{
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    memset(r, 0, sizeof *r);
    r->resType = c->resType;
    int ok = 1;
    switch (c->resType) {
    case cudaResourceTypeArray:
        r->res.array.array = c->res.array.hArray;
        break;
    case cudaResourceTypeLinear:
        r->res.linear.devPtr = (void *)(uintptr_t)c->res.linear.devPtr;
        r->res.linear.sizeInBytes = c->res.linear.sizeInBytes;
        ok = channel_desc(c->res.linear.format, c->res.linear.numChannels, &r->res.linear.desc);
        break;
    case cudaResourceTypePitch2D:
        r->res.pitch2D.devPtr = (void *)(uintptr_t)c->res.pitch2D.devPtr;
        r->res.pitch2D.width = c->res.pitch2D.width;
        r->res.pitch2D.height = c->res.pitch2D.height;
        r->res.pitch2D.pitchInBytes = c->res.pitch2D.pitchInBytes;
        ok = channel_desc(c->res.pitch2D.format, c->res.pitch2D.numChannels,
                          &r->res.pitch2D.desc);
        break;
    default:
        return drv_unsupported("cuTexObjectCreate/cuSurfObjectCreate with a mipmapped array");
    }
    if (ok < 0)
        return drv_unsupported("cuTexObjectCreate with this CUarray_format");
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* the channel description the texture reads */
static const struct cudaChannelFormatDesc *texel(const struct cudaResourceDesc *r)
{
    switch (r->resType) {
    case cudaResourceTypeArray:
        return array_valid(r->res.array.array) ? &r->res.array.array->desc : NULL;
    case cudaResourceTypeLinear: return &r->res.linear.desc;
    default: return &r->res.pitch2D.desc;
    }
}

EXPORT CUresult cuTexObjectCreate(cudaTextureObject_t *t, const CUDA_RESOURCE_DESC *rd,
                                  const CUDA_TEXTURE_DESC *td, const void *view)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (st || !td)
        return st ? st : CUDA_ERROR_INVALID_VALUE;
    if (view)
        return drv_unsupported("cuTexObjectCreate with a resource view");
    struct cudaResourceDesc r;
    if ((st = resource(rd, &r)))
        return st;
    const struct cudaChannelFormatDesc *ch = texel(&r);
    if (!ch)
        return CUDA_ERROR_INVALID_VALUE;
    struct cudaTextureDesc d;
    memset(&d, 0, sizeof d);
    memcpy(d.addressMode, td->addressMode, sizeof d.addressMode);
    d.filterMode = td->filterMode;
    /* integers narrower than 32 bits read as normalized floats unless asked
     * not to; floats and 32-bit integers read as they are */
    int narrow_int = ch->f != cudaChannelFormatKindFloat && ch->x < 32;
    d.readMode = narrow_int && !(td->flags & CU_TRSF_READ_AS_INTEGER);   /* cudaReadMode* */
    d.sRGB = (td->flags & CU_TRSF_SRGB) != 0;
    memcpy(d.borderColor, td->borderColor, sizeof d.borderColor);
    d.normalizedCoords = (td->flags & CU_TRSF_NORMALIZED_COORDINATES) != 0;
    d.maxAnisotropy = td->maxAnisotropy;
    d.mipmapFilterMode = td->mipmapFilterMode;
    d.mipmapLevelBias = td->mipmapLevelBias;
    d.minMipmapLevelClamp = td->minMipmapLevelClamp;
    d.maxMipmapLevelClamp = td->maxMipmapLevelClamp;
    d.disableTrilinearOptimization = (td->flags & CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION) != 0;
    d.seamlessCubemap = (td->flags & CU_TRSF_SEAMLESS_CUBEMAP) != 0;
    return RT(cudaCreateTextureObject(t, &r, &d, NULL));
}

EXPORT CUresult cuTexObjectDestroy(cudaTextureObject_t t)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    return st ? st : RT(cudaDestroyTextureObject(t));
}

EXPORT CUresult cuSurfObjectCreate(cudaSurfaceObject_t *s, const CUDA_RESOURCE_DESC *rd)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    struct cudaResourceDesc r;
    if (st || (st = resource(rd, &r)))
        return st;
    return RT(cudaCreateSurfaceObject(s, &r));
}

EXPORT CUresult cuSurfObjectDestroy(cudaSurfaceObject_t s)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    return st ? st : RT(cudaDestroySurfaceObject(s));
}

/* cudaResourceDesc -> CUDA_RESOURCE_DESC (the reverse of resource()) */
static void driver_resource(const struct cudaResourceDesc *r, CUDA_RESOURCE_DESC *c)
{
    memset(c, 0, sizeof *c);
    c->resType = r->resType;
    const struct cudaChannelFormatDesc *d = &r->res.pitch2D.desc;
    switch (r->resType) {
    case cudaResourceTypeArray:
        c->res.array.hArray = r->res.array.array;
        return;
    case cudaResourceTypeLinear:
        d = &r->res.linear.desc;
        c->res.linear.devPtr = (CUdeviceptr)(uintptr_t)r->res.linear.devPtr;
        c->res.linear.format = format_of(d);
        c->res.linear.numChannels = (d->x > 0) + (d->y > 0) + (d->z > 0) + (d->w > 0);
        c->res.linear.sizeInBytes = r->res.linear.sizeInBytes;
        return;
    default:
        c->res.pitch2D.devPtr = (CUdeviceptr)(uintptr_t)r->res.pitch2D.devPtr;
        c->res.pitch2D.format = format_of(d);
        c->res.pitch2D.numChannels = (d->x > 0) + (d->y > 0) + (d->z > 0) + (d->w > 0);
        c->res.pitch2D.width = r->res.pitch2D.width;
        c->res.pitch2D.height = r->res.pitch2D.height;
        c->res.pitch2D.pitchInBytes = r->res.pitch2D.pitchInBytes;
    }
}

EXPORT CUresult cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC *c, cudaTextureObject_t t)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    struct cudaResourceDesc r;
    if (st || !c || (st = RT(cudaGetTextureObjectResourceDesc(&r, t))))
        return st ? st : CUDA_ERROR_INVALID_VALUE;
    driver_resource(&r, c);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC *c, cudaSurfaceObject_t s)
{
    DRV_CHILD_GUARD();
    return cuTexObjectGetResourceDesc(c, s);
}

EXPORT CUresult cuTexObjectGetTextureDesc(CUDA_TEXTURE_DESC *c, cudaTextureObject_t t)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    struct cudaTextureDesc d;
    if (st || !c || (st = RT(cudaGetTextureObjectTextureDesc(&d, t))))
        return st ? st : CUDA_ERROR_INVALID_VALUE;
    memset(c, 0, sizeof *c);
    memcpy(c->addressMode, d.addressMode, sizeof c->addressMode);
    c->filterMode = d.filterMode;
    c->flags = (d.readMode ? 0 : CU_TRSF_READ_AS_INTEGER)
             | (d.normalizedCoords ? CU_TRSF_NORMALIZED_COORDINATES : 0)
             | (d.sRGB ? CU_TRSF_SRGB : 0)
             | (d.disableTrilinearOptimization ? CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION : 0)
             | (d.seamlessCubemap ? CU_TRSF_SEAMLESS_CUBEMAP : 0);
    c->maxAnisotropy = d.maxAnisotropy;
    c->mipmapFilterMode = d.mipmapFilterMode;
    c->mipmapLevelBias = d.mipmapLevelBias;
    c->minMipmapLevelClamp = d.minMipmapLevelClamp;
    c->maxMipmapLevelClamp = d.maxMipmapLevelClamp;
    memcpy(c->borderColor, d.borderColor, sizeof c->borderColor);
    return CUDA_SUCCESS;
}
