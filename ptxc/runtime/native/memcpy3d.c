/* cudaMemcpy3D and cudaMemcpy3DAsync (CUDA Runtime API, "Memory
 * Management"): copies between pitched pointers (host or device) and CUDA
 * arrays, including layered and cubemap arrays (texture.h).
 *
 * The rules of the API's documentation: exactly one of srcArray/srcPtr.ptr
 * and one of dstArray/dstPtr.ptr (else cudaErrorInvalidValue); the extent
 * and an array's position are in the array's elements (both arrays: equal
 * element sizes), a pointer's position in bytes (x) and rows (y, z); each
 * object must contain the region (an array is checked here, a pointer's
 * device side by the copy itself); a kind that puts an array on the host is
 * corrected (an array is device memory). An array is laid out as a 3-D
 * array of max(height, 1) rows per slice and max(depth, 1) slices (a layer
 * or a cubemap face is a slice); a pointer's slice is pitch * ysize bytes.
 * Each slice is one 2-D copy (memory.c's shim_copy2d); an extent with a
 * zero component copies nothing. The Async form is ordered like the other
 * copies (the shim runs stream work in order, docs/runtime.md); it cannot
 * be captured into a graph (cudaErrorStreamCaptureUnsupported: ptxc's
 * graph memcpy nodes take no arrays).
 */
#define _GNU_SOURCE
#include <string.h>

#include "graph.h"
#include "shim.h"
#include "texture.h"

cudaError_t shim_copy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                        size_t height, int kind);   /* memory.c */

/* one side of a copy: base address of its first byte, row pitch, slice bytes */
struct side {
    char *at;
    size_t pitch, slice;
};

/* the side of an array (a) or pointer (p) at pos for a region of wbytes x h x d */
static cudaError_t place(cudaArray_t a, const struct cudaPitchedPtr *p, struct cudaPos pos,
                         size_t wbytes, size_t h, size_t d, struct side *out)
{
    if ((a != NULL) == (p->ptr != NULL))
        return cudaErrorInvalidValue;
    if (a) {
        if (!array_valid(a))
            return cudaErrorInvalidValue;
        size_t eb = array_elem_bytes(a), rows = a->height ? a->height : 1;
        size_t slices = array_rows(a) / rows;
        if (pos.x > a->width || wbytes > (a->width - pos.x) * eb || pos.y > rows
            || h > rows - pos.y || pos.z > slices || d > slices - pos.z)
            return cudaErrorInvalidValue;
        out->pitch = a->pitch;
        out->slice = a->pitch * rows;
        out->at = (char *)a->dev + pos.z * out->slice + pos.y * a->pitch + pos.x * eb;
        return cudaSuccess;
    }
    if (pos.x > p->pitch || wbytes > p->pitch - pos.x)
        return cudaErrorInvalidPitchValue;
    if (d > 1 && (pos.y > p->ysize || h > p->ysize - pos.y))
        return cudaErrorInvalidValue;         /* rows past a slice of ysize rows */
    out->pitch = p->pitch;
    out->slice = p->pitch * p->ysize;
    out->at = (char *)p->ptr + pos.z * out->slice + pos.y * p->pitch + pos.x;
    return cudaSuccess;
}

/* the kind with arrays on the device side; -1 for an invalid kind */
static int fixed_kind(const struct cudaMemcpy3DParms *p)
{
    int k = p->kind;
    if (k < cudaMemcpyHostToHost || k > cudaMemcpyDefault)
        return -1;
    if (k == cudaMemcpyDefault)
        return k;
    int src_dev = p->srcArray || k == cudaMemcpyDeviceToHost || k == cudaMemcpyDeviceToDevice;
    int dst_dev = p->dstArray || k == cudaMemcpyHostToDevice || k == cudaMemcpyDeviceToDevice;
    return src_dev << 1 | dst_dev;      /* cudaMemcpyKind: H2H 0, H2D 1, D2H 2, D2D 3 */
}

static cudaError_t copy3d(const struct cudaMemcpy3DParms *p)
{
    if (!p)
        return cudaErrorInvalidValue;
    int kind = fixed_kind(p);
    if (kind < 0)
        return cudaErrorInvalidMemcpyDirection;
    cudaArray_t sa = p->srcArray, da = p->dstArray;
    if ((sa && !array_valid(sa)) || (da && !array_valid(da)))
        return cudaErrorInvalidValue;
    size_t eb = sa ? array_elem_bytes(sa) : da ? array_elem_bytes(da) : 1;
    if (sa && da && array_elem_bytes(sa) != array_elem_bytes(da))
        return cudaErrorInvalidValue;
    size_t w = p->extent.width * eb, h = p->extent.height, d = p->extent.depth;
    struct side s, t;
    cudaError_t st = place(sa, &p->srcPtr, p->srcPos, w, h, d, &s);
    if (!st)
        st = place(da, &p->dstPtr, p->dstPos, w, h, d, &t);
    for (size_t z = 0; !st && w && h && z < d; z++)
        st = shim_copy2d(t.at + z * t.slice, t.pitch, s.at + z * s.slice, s.pitch, w, h, kind);
    return st;
}

EXPORT cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p)
{
    CHILD_GUARD();
    int c = capture_state(NULL);      /* the legacy stream: an error while a capture is on */
    if (c > 0)
        return set_error(c);
    cudaError_t e = device_sync();    /* a blocking copy synchronises (devout.c) */
    return set_error(e ? e : copy3d(p));
}

EXPORT cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p, cudaStream_t s)
{
    CHILD_GUARD();
    int c = capture_state(s);
    if (c)
        return set_error(c < 0 ? capture_refuse(s) : c);
    return set_error(copy3d(p));
}

ALIAS(cudaMemcpy3D_ptds, cudaMemcpy3D);
ALIAS(cudaMemcpy3DAsync_ptsz, cudaMemcpy3DAsync);
