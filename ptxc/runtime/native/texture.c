/* CUDA arrays, texture objects and surface objects (CUDA Runtime API,
 * "Memory Management" (arrays), "Texture Object Management", "Surface
 * Object Management").
 *
 * A CUDA array is an ordinary device allocation (cudaMalloc) with rows of
 * width * element bytes, no padding, described by a struct cudaArray that
 * lives in the shim (texture.h); copies to and from arrays are 2-D copies of
 * that memory (cudaMemcpy3D: memcpy3d.c). Layered arrays hold their layers
 * one after the other, cubemaps their faces in cudaGraphicsCubeFace order
 * (+x, -x, +y, -y, +z, -z), layered cubemaps 6 faces per cubemap: the
 * memory of a 3-D array of that depth. cudaMalloc3DArray checks CUDA's
 * extent rules for each kind (extent_ok). Texture and surface objects are made by ptxc (OP_TEXTURE_CREATE:
 * it enters the descriptor in its handle table, ptxc/textures.py, and
 * answers the 64-bit handle kernels use); the shim keeps the descriptors the
 * application gave, for the cudaGet*Desc calls.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "texture.h"

EXPORT cudaError_t cudaMalloc(void **p, size_t size);
EXPORT cudaError_t cudaFree(void *p);
EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                                size_t width, size_t height, int kind);

#define ARRAY_MAGIC 0x70747841u
#define ARRAY_FLAGS (ARRAY_LAYERED | ARRAY_SURFACE_LOAD_STORE | ARRAY_CUBEMAP | ARRAY_TEXTURE_GATHER)

/* bytes per element of a channel description (0 if not supported) */
static size_t elem_bytes(const struct cudaChannelFormatDesc *d)
{
    int ch[4] = {d->x, d->y, d->z, d->w}, n = 0;
    for (int i = 0; i < 4; i++) {
        if (ch[i] < 0 || (ch[i] && ch[i] != d->x))
            return 0;
        n += ch[i] != 0;
    }
    if ((n != 1 && n != 2 && n != 4) || (d->x != 8 && d->x != 16 && d->x != 32)
        || d->f < cudaChannelFormatKindSigned || d->f > cudaChannelFormatKindFloat)
        return 0;
    return (size_t)(d->x / 8 * n);
}

static int valid_array(cudaArray_t a) { return a && a->magic == ARRAY_MAGIC; }

static size_t rows(cudaArray_t a) { return (a->height ? a->height : 1) * (a->depth ? a->depth : 1); }

int array_valid(cudaArray_t a) { return valid_array(a); }
size_t array_rows(cudaArray_t a) { return rows(a); }
size_t array_elem_bytes(cudaArray_t a) { return elem_bytes(&a->desc); }

/* CUDA's extent rules (cudaMalloc3DArray): 1-D (w, 0, 0), 2-D (w, h, 0),
 * 3-D (w, h, d); layered: (w, 0, layers) or (w, h, layers); cubemap
 * (w, w, 6); layered cubemap (w, w, 6 n); gather only on 2-D arrays */
static int extent_ok(size_t w, size_t h, size_t d, unsigned flags)
{
    if (!w)
        return 0;
    if (flags & ARRAY_CUBEMAP)
        return h == w && (flags & ARRAY_LAYERED ? d > 0 && d % 6 == 0 : d == 6);
    if (flags & ARRAY_LAYERED)
        return d > 0;
    if (flags & ARRAY_TEXTURE_GATHER)
        return h > 0 && d == 0;
    return !(d && !h);
}

EXPORT struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, int f)
{
    struct cudaChannelFormatDesc d = {x, y, z, w, f};
    return d;
}

static cudaError_t make_array(cudaArray_t *out, const struct cudaChannelFormatDesc *desc,
                              size_t w, size_t h, size_t d, unsigned flags)
{
    if (!out || !desc)
        return cudaErrorInvalidValue;
    if (flags & ~ARRAY_FLAGS)
        shim_unsupported("cudaMallocArray/cudaMalloc3DArray with cudaArraySparse, "
                         "cudaArrayDeferredMapping or other flags (ptxc supports cudaArrayLayered, "
                         "cudaArrayCubemap, cudaArraySurfaceLoadStore and cudaArrayTextureGather)");
    if (!extent_ok(w, h, d, flags))
        return cudaErrorInvalidValue;
    size_t eb = elem_bytes(desc);
    if (!eb) {
        shim_unsupported("cudaMallocArray with this channel format (ptxc supports 1, 2 or 4 "
                         "channels of equal 8/16/32-bit signed, unsigned or float)");
    }
    struct cudaArray *a = calloc(1, sizeof *a);
    if (!a)
        return cudaErrorMemoryAllocation;
    *a = (struct cudaArray){ARRAY_MAGIC, NULL, *desc, w, h, d, w * eb, flags};
    cudaError_t st = cudaMalloc(&a->dev, a->pitch * rows(a));
    if (st) {
        free(a);
        return st;
    }
    *out = a;
    return cudaSuccess;
}

EXPORT cudaError_t cudaMallocArray(cudaArray_t *a, const struct cudaChannelFormatDesc *desc,
                                   size_t width, size_t height, unsigned flags)
{
    CHILD_GUARD();
    if (flags & (ARRAY_LAYERED | ARRAY_CUBEMAP))     /* cudaMalloc3DArray's flags only */
        return set_error(cudaErrorInvalidValue);
    return set_error(make_array(a, desc, width, height, 0, flags));
}

EXPORT cudaError_t cudaMalloc3DArray(cudaArray_t *a, const struct cudaChannelFormatDesc *desc,
                                     struct cudaExtent e, unsigned flags)
{
    CHILD_GUARD();
    return set_error(make_array(a, desc, e.width, e.height, e.depth, flags));
}

EXPORT cudaError_t cudaFreeArray(cudaArray_t a)
{
    CHILD_GUARD();
    if (!a)
        return cudaSuccess;
    if (!valid_array(a))
        return set_error(cudaErrorInvalidValue);
    cudaError_t st = cudaFree(a->dev);
    a->magic = 0;
    free(a);
    return set_error(st);
}

EXPORT cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc *desc, struct cudaExtent *e,
                                    unsigned *flags, cudaArray_t a)
{
    CHILD_GUARD();
    if (!valid_array(a))
        return set_error(cudaErrorInvalidValue);
    if (desc)
        *desc = a->desc;
    if (e)
        *e = (struct cudaExtent){a->width, a->height, a->depth};
    if (flags)
        *flags = a->flags;
    return set_error(cudaSuccess);
}

EXPORT cudaError_t cudaGetChannelDesc(struct cudaChannelFormatDesc *desc, cudaArray_t a)
{
    CHILD_GUARD();
    if (!valid_array(a) || !desc)
        return set_error(cudaErrorInvalidValue);
    *desc = a->desc;
    return set_error(cudaSuccess);
}

/* the address of byte wOffset of row hOffset, if width x height fit */
static char *array_at(cudaArray_t a, size_t wOffset, size_t hOffset, size_t width, size_t height)
{
    if (!valid_array(a) || wOffset > a->pitch || width > a->pitch - wOffset
        || hOffset > rows(a) || height > rows(a) - hOffset)
        return NULL;
    return (char *)a->dev + hOffset * a->pitch + wOffset;
}

static int to_device(int kind) { return kind == cudaMemcpyHostToHost ? cudaMemcpyHostToDevice : kind; }

EXPORT cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                       const void *src, size_t spitch, size_t width,
                                       size_t height, int kind)
{
    CHILD_GUARD();
    char *p = array_at(dst, wOffset, hOffset, width, height);
    if (!p)
        return set_error(cudaErrorInvalidValue);
    return cudaMemcpy2D(p, dst->pitch, src, spitch, width, height, to_device(kind));
}

EXPORT cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                            const void *src, size_t spitch, size_t width,
                                            size_t height, int kind, cudaStream_t s)
{
    CHILD_GUARD();
    (void)s;
    return cudaMemcpy2DToArray(dst, wOffset, hOffset, src, spitch, width, height, kind);
}

EXPORT cudaError_t cudaMemcpy2DFromArray(void *dst, size_t dpitch, cudaArray_t src,
                                         size_t wOffset, size_t hOffset, size_t width,
                                         size_t height, int kind)
{
    CHILD_GUARD();
    char *p = array_at(src, wOffset, hOffset, width, height);
    if (!p)
        return set_error(cudaErrorInvalidValue);
    int k = kind == cudaMemcpyHostToHost ? cudaMemcpyDeviceToHost : kind;
    return cudaMemcpy2D(dst, dpitch, p, src->pitch, width, height, k);
}

EXPORT cudaError_t cudaMemcpy2DFromArrayAsync(void *dst, size_t dpitch, cudaArray_t src,
                                              size_t wOffset, size_t hOffset, size_t width,
                                              size_t height, int kind, cudaStream_t s)
{
    CHILD_GUARD();
    (void)s;
    return cudaMemcpy2DFromArray(dst, dpitch, src, wOffset, hOffset, width, height, kind);
}

/* cudaMemcpyToArray/FromArray (deprecated): count bytes from (wOffset,
 * hOffset) on, row after row */
static cudaError_t linear_copy(cudaArray_t a, size_t wOffset, size_t hOffset, void *host,
                               size_t count, int to_array, int kind)
{
    if (!valid_array(a) || hOffset >= rows(a) || wOffset >= a->pitch)
        return cudaErrorInvalidValue;
    size_t start = hOffset * a->pitch + wOffset;
    if (count > a->pitch * rows(a) - start)
        return cudaErrorInvalidValue;
    char *p = (char *)a->dev + start;
    if (to_array)
        return cudaMemcpy2D(p, count ? count : 1, host, count ? count : 1, count, 1, to_device(kind));
    int k = kind == cudaMemcpyHostToHost ? cudaMemcpyDeviceToHost : kind;
    return cudaMemcpy2D(host, count ? count : 1, p, count ? count : 1, count, 1, k);
}

EXPORT cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                     const void *src, size_t count, int kind)
{
    CHILD_GUARD();
    return set_error(linear_copy(dst, wOffset, hOffset, (void *)src, count, 1, kind));
}

EXPORT cudaError_t cudaMemcpyFromArray(void *dst, cudaArray_t src, size_t wOffset,
                                       size_t hOffset, size_t count, int kind)
{
    CHILD_GUARD();
    return set_error(linear_copy(src, wOffset, hOffset, dst, count, 0, kind));
}

/* ------------------------------------------------------- objects */
struct object {
    unsigned long long handle;
    struct cudaResourceDesc res;
    struct cudaTextureDesc tex;
    struct object *next;
};
static struct object *objects;

static struct object *find(unsigned long long h)
{
    for (struct object *o = objects; o; o = o->next)
        if (o->handle == h)
            return o;
    return NULL;
}

/* the request of OP_TEXTURE_CREATE (ptxc/runtime/textures.py: CREATE) */
static cudaError_t describe(char *q, int surface, const struct cudaResourceDesc *r,
                            const struct cudaTextureDesc *t)
{
    const void *dev;
    struct cudaChannelFormatDesc desc;
    size_t w, h = 0, d = 0, pitch;
    unsigned flags = 0;
    switch (r->resType) {
    case cudaResourceTypeArray:
        if (!valid_array(r->res.array.array))
            return cudaErrorInvalidValue;
        dev = r->res.array.array->dev;
        desc = r->res.array.array->desc;
        w = r->res.array.array->width;
        h = r->res.array.array->height;
        d = r->res.array.array->depth;
        pitch = r->res.array.array->pitch;
        flags = r->res.array.array->flags;
        break;
    case cudaResourceTypeLinear:
        dev = r->res.linear.devPtr;
        desc = r->res.linear.desc;
        pitch = r->res.linear.sizeInBytes;
        w = elem_bytes(&desc) ? pitch / elem_bytes(&desc) : 0;
        break;
    case cudaResourceTypePitch2D:
        dev = r->res.pitch2D.devPtr;
        desc = r->res.pitch2D.desc;
        w = r->res.pitch2D.width;
        h = r->res.pitch2D.height;
        pitch = r->res.pitch2D.pitchInBytes;
        break;
    default:
        shim_unsupported("cudaCreateTextureObject/cudaCreateSurfaceObject with a mipmapped "
                         "array (ptxc supports array, linear and pitch2D resources)");
    }
    if (surface && r->resType != cudaResourceTypeArray)
        return cudaErrorInvalidValue;
    put32(q, (uint32_t)surface);
    put32(q + 4, (uint32_t)r->resType);
    put64(q + 8, (uint64_t)(uintptr_t)dev);
    put64(q + 16, w);
    put64(q + 24, h);
    put64(q + 32, d);
    put64(q + 40, pitch);
    memcpy(q + 48, &desc, 20);
    if (t) {
        memcpy(q + 68, t->addressMode, 12);
        memcpy(q + 80, &t->filterMode, 4);
        memcpy(q + 84, &t->readMode, 4);
        memcpy(q + 88, &t->normalizedCoords, 4);
        memcpy(q + 92, t->borderColor, 16);
        memcpy(q + 112, &t->seamlessCubemap, 4);
    }
    put32(q + 108, flags);
    return cudaSuccess;
}

#define CREATE_BYTES 116

static cudaError_t create(unsigned long long *out, int surface, const struct cudaResourceDesc *r,
                          const struct cudaTextureDesc *t)
{
    if (!out || !r || (!surface && !t))
        return cudaErrorInvalidValue;
    char q[CREATE_BYTES] = {0};
    cudaError_t st = describe(q, surface, r, t);
    if (st)
        return st;
    if (shim_dead())
        return cudaErrorCudartUnloading;
    LOCK();
    struct reply rep;
    shim_call(OP_TEXTURE_CREATE, q, sizeof q, NULL, 0, &rep);
    st = rep.status;
    if (!st && rep.len >= 8) {
        struct object *o = calloc(1, sizeof *o);
        if (o) {
            o->handle = get64(rep.data);
            o->res = *r;
            if (t)
                o->tex = *t;
            o->next = objects;
            objects = o;
            *out = o->handle;
        } else {
            st = cudaErrorMemoryAllocation;
        }
    } else if (!st) {
        st = cudaErrorUnknown;
    }
    reply_free(&rep);
    UNLOCK();
    return st;
}

static cudaError_t destroy(unsigned long long h)
{
    if (shim_dead())
        return cudaErrorCudartUnloading;
    LOCK();
    struct object **pp = &objects;
    while (*pp && (*pp)->handle != h)
        pp = &(*pp)->next;
    cudaError_t st = cudaErrorInvalidValue;
    if (*pp) {
        struct object *o = *pp;
        *pp = o->next;
        free(o);
        char q[8];
        put64(q, h);
        struct reply rep;
        shim_call(OP_TEXTURE_DESTROY, q, 8, NULL, 0, &rep);
        st = rep.status;
        reply_free(&rep);
    }
    UNLOCK();
    return st;
}

EXPORT cudaError_t cudaCreateTextureObject(cudaTextureObject_t *t, const struct cudaResourceDesc *r,
                                           const struct cudaTextureDesc *td, const void *view)
{
    CHILD_GUARD();
    if (view) {
        shim_unsupported("cudaCreateTextureObject with a resource view");
    }
    return set_error(create(t, 0, r, td));
}

EXPORT cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t *s, const struct cudaResourceDesc *r)
{
    CHILD_GUARD();
    return set_error(create(s, 1, r, NULL));
}

EXPORT cudaError_t cudaDestroyTextureObject(cudaTextureObject_t t)
{
    CHILD_GUARD();
    return set_error(destroy(t));
}
EXPORT cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t s)
{
    CHILD_GUARD();
    return set_error(destroy(s));
}

EXPORT cudaError_t cudaGetTextureObjectResourceDesc(struct cudaResourceDesc *r, cudaTextureObject_t t)
{
    CHILD_GUARD();
    LOCK();
    struct object *o = find(t);
    if (o && r)
        *r = o->res;
    UNLOCK();
    return set_error(o && r ? cudaSuccess : cudaErrorInvalidValue);
}

EXPORT cudaError_t cudaGetSurfaceObjectResourceDesc(struct cudaResourceDesc *r, cudaSurfaceObject_t s)
{
    CHILD_GUARD();
    return cudaGetTextureObjectResourceDesc(r, s);
}

EXPORT cudaError_t cudaGetTextureObjectTextureDesc(struct cudaTextureDesc *td, cudaTextureObject_t t)
{
    CHILD_GUARD();
    LOCK();
    struct object *o = find(t);
    if (o && td)
        *td = o->tex;
    UNLOCK();
    return set_error(o && td ? cudaSuccess : cudaErrorInvalidValue);
}
