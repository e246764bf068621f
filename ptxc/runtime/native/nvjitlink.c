/* ptxc's nvJitLink (libnvJitLink.so.13): linking for numba-cuda and cuda.core.
 *
 * numba-cuda links every kernel through cuda.core's Linker, which uses
 * nvJitLink when it can load it; the real nvJitLink turns PTX into a SASS
 * cubin that ptxc cannot run. `ptxc run` preloads this library under that
 * name too (runtime/app.py), so the Linker gets ptxc's: the linked "cubin"
 * is the container of drv_link.c (the inputs, PTX kept), which
 * cuLibraryLoadData / cuModuleLoadData accept. Follows the nvJitLink API
 * (nvJitLink.h of CUDA 13): results, input types, the -ptx option (the
 * linked PTX, available for a link of one PTX input), logs.
 * LTO-IR cannot be linked here (it needs NVVM): NVJITLINK_ERROR_INVALID_INPUT
 * with a message in the error log.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

enum { NVJITLINK_SUCCESS = 0, NVJITLINK_ERROR_UNRECOGNIZED_OPTION = 1,
       NVJITLINK_ERROR_INVALID_INPUT = 3, NVJITLINK_ERROR_INTERNAL = 6,
       NVJITLINK_ERROR_NULL_INPUT = 10 };
enum { NVJITLINK_INPUT_NONE = 0, NVJITLINK_INPUT_CUBIN = 1, NVJITLINK_INPUT_PTX = 2,
       NVJITLINK_INPUT_LTOIR = 3, NVJITLINK_INPUT_FATBIN = 4, NVJITLINK_INPUT_OBJECT = 5,
       NVJITLINK_INPUT_LIBRARY = 6, NVJITLINK_INPUT_INDEX = 7, NVJITLINK_INPUT_ANY = 10 };

#define JL_MAGIC 0x4e4a4c31u

struct jitlink {
    uint32_t magic;
    struct drv_link *link;
    int want_ptx;                     /* -ptx: the linked PTX is asked for */
    const char *ptx;                  /* the one PTX input (for -ptx) */
    size_t ptx_size;
    int complete;
    char error[512];
};
typedef struct jitlink *nvJitLinkHandle;

static int ok(nvJitLinkHandle h) { return h && h->magic == JL_MAGIC; }

EXPORT int nvJitLinkCreate(nvJitLinkHandle *out, uint32_t n, const char **options)
{
    if (!out)
        return NVJITLINK_ERROR_NULL_INPUT;
    struct jitlink *h = calloc(1, sizeof *h);
    if (!h || !(h->link = drv_link_new())) {
        free(h);
        return NVJITLINK_ERROR_INTERNAL;
    }
    h->magic = JL_MAGIC;
    for (uint32_t i = 0; options && i < n; i++)
        if (options[i] && strcmp(options[i], "-ptx") == 0)
            h->want_ptx = 1;
    *out = h;
    return NVJITLINK_SUCCESS;
}

EXPORT int nvJitLinkDestroy(nvJitLinkHandle *h)
{
    if (!h || !ok(*h))
        return NVJITLINK_ERROR_NULL_INPUT;
    drv_link_free((*h)->link);
    (*h)->magic = 0;
    free(*h);
    *h = NULL;
    return NVJITLINK_SUCCESS;
}

/* the CUjitInputType of an input (ANY: by its first bytes); -1 unsupported */
static int jit_type(int type, const void *data)
{
    if (type == NVJITLINK_INPUT_ANY) {
        const unsigned char *p = data;
        type = !memcmp(p, "\177ELF", 4) ? NVJITLINK_INPUT_CUBIN
             : get32(data) == 0xba55ed50u ? NVJITLINK_INPUT_FATBIN
             : !memcmp(p, "!<arch>", 7) ? NVJITLINK_INPUT_LIBRARY : NVJITLINK_INPUT_PTX;
    }
    switch (type) {
    case NVJITLINK_INPUT_CUBIN: return CU_JIT_INPUT_CUBIN;
    case NVJITLINK_INPUT_PTX: return CU_JIT_INPUT_PTX;
    case NVJITLINK_INPUT_FATBIN: return CU_JIT_INPUT_FATBINARY;
    case NVJITLINK_INPUT_OBJECT: return CU_JIT_INPUT_OBJECT;
    case NVJITLINK_INPUT_LIBRARY: return CU_JIT_INPUT_LIBRARY;
    default: return -1;
    }
}

EXPORT int nvJitLinkAddData(nvJitLinkHandle h, int type, const void *data, size_t size,
                            const char *name)
{
    if (!ok(h) || !data)
        return NVJITLINK_ERROR_NULL_INPUT;
    int t = size ? jit_type(type, data) : -1;
    if (t < 0) {
        snprintf(h->error, sizeof h->error, "ptxc: nvJitLinkAddData: %s input (type %d) cannot be "
                 "linked under ptxc, which runs PTX (LTO-IR needs NVVM: link without LTO)",
                 name ? name : "an", type);
        return NVJITLINK_ERROR_INVALID_INPUT;
    }
    if (t == CU_JIT_INPUT_PTX) {
        h->ptx = h->ptx ? (const char *)-1 : data;   /* -1: more than one PTX input */
        h->ptx_size = size;
    }
    return drv_link_add(h->link, t, data, size, name) ? NVJITLINK_SUCCESS : NVJITLINK_ERROR_INTERNAL;
}

EXPORT int nvJitLinkAddFile(nvJitLinkHandle h, int type, const char *path)
{
    if (!ok(h) || !path)
        return NVJITLINK_ERROR_NULL_INPUT;
    size_t n = 0;
    char *buf = drv_read_file(path, &n);
    if (!buf) {
        snprintf(h->error, sizeof h->error, "ptxc: nvJitLinkAddFile: cannot read %s", path);
        return NVJITLINK_ERROR_INVALID_INPUT;
    }
    const char *base = strrchr(path, '/');
    int st = nvJitLinkAddData(h, type, buf, n, base ? base + 1 : path);
    if (h->ptx == buf)                 /* keep the bytes the PTX output points at */
        return st;
    free(buf);
    return st;
}

EXPORT int nvJitLinkComplete(nvJitLinkHandle h)
{
    if (!ok(h))
        return NVJITLINK_ERROR_NULL_INPUT;
    size_t size;
    uint32_t count;
    if (!drv_link_image(h->link, &size, &count)) {
        snprintf(h->error, sizeof h->error, "ptxc: nvJitLinkComplete: nothing to link");
        return NVJITLINK_ERROR_INVALID_INPUT;
    }
    h->complete = 1;
    return NVJITLINK_SUCCESS;
}

EXPORT int nvJitLinkGetLinkedCubinSize(nvJitLinkHandle h, size_t *size)
{
    if (!ok(h) || !size || !h->complete)
        return NVJITLINK_ERROR_NULL_INPUT;
    drv_link_image(h->link, size, NULL);
    return NVJITLINK_SUCCESS;
}

EXPORT int nvJitLinkGetLinkedCubin(nvJitLinkHandle h, void *out)
{
    size_t size;
    if (!out || nvJitLinkGetLinkedCubinSize(h, &size))
        return NVJITLINK_ERROR_NULL_INPUT;
    memcpy(out, drv_link_image(h->link, &size, NULL), size);
    return NVJITLINK_SUCCESS;
}

static int linked_ptx(nvJitLinkHandle h, const char **p, size_t *n)
{
    if (!ok(h) || !h->complete)
        return NVJITLINK_ERROR_NULL_INPUT;
    if (!h->ptx || h->ptx == (const char *)-1) {
        snprintf(h->error, sizeof h->error, "ptxc: nvJitLinkGetLinkedPtx: ptxc gives the linked "
                 "PTX of a link of one PTX input only");
        return NVJITLINK_ERROR_INTERNAL;
    }
    *p = h->ptx;
    *n = strnlen(h->ptx, h->ptx_size) + 1;
    return NVJITLINK_SUCCESS;
}

EXPORT int nvJitLinkGetLinkedPtxSize(nvJitLinkHandle h, size_t *size)
{
    const char *p;
    if (!size)
        return NVJITLINK_ERROR_NULL_INPUT;
    return linked_ptx(h, &p, size);
}

EXPORT int nvJitLinkGetLinkedPtx(nvJitLinkHandle h, char *out)
{
    const char *p;
    size_t n;
    int st = out ? linked_ptx(h, &p, &n) : NVJITLINK_ERROR_NULL_INPUT;
    if (!st) {
        memcpy(out, p, n - 1);
        out[n - 1] = 0;
    }
    return st;
}

EXPORT int nvJitLinkGetLinkedLTOIRSize(nvJitLinkHandle h, size_t *size)
{
    (void)size;
    if (ok(h))
        snprintf(h->error, sizeof h->error, "ptxc: nvJitLink gives no LTO-IR under ptxc");
    return NVJITLINK_ERROR_INTERNAL;
}
EXPORT int nvJitLinkGetLinkedLTOIR(nvJitLinkHandle h, void *out)
{
    return nvJitLinkGetLinkedLTOIRSize(h, out);
}

EXPORT int nvJitLinkGetErrorLogSize(nvJitLinkHandle h, size_t *size)
{
    if (!ok(h) || !size)
        return NVJITLINK_ERROR_NULL_INPUT;
    *size = strlen(h->error) + 1;
    return NVJITLINK_SUCCESS;
}
EXPORT int nvJitLinkGetErrorLog(nvJitLinkHandle h, char *out)
{
    if (!ok(h) || !out)
        return NVJITLINK_ERROR_NULL_INPUT;
    memcpy(out, h->error, strlen(h->error) + 1);
    return NVJITLINK_SUCCESS;
}
EXPORT int nvJitLinkGetInfoLogSize(nvJitLinkHandle h, size_t *size)
{
    if (!ok(h) || !size)
        return NVJITLINK_ERROR_NULL_INPUT;
    *size = 1;
    return NVJITLINK_SUCCESS;
}
EXPORT int nvJitLinkGetInfoLog(nvJitLinkHandle h, char *out)
{
    if (!ok(h) || !out)
        return NVJITLINK_ERROR_NULL_INPUT;
    *out = 0;
    return NVJITLINK_SUCCESS;
}

EXPORT int nvJitLinkVersion(unsigned *major, unsigned *minor)
{
    if (!major || !minor)
        return NVJITLINK_ERROR_NULL_INPUT;
    *major = 12;                      /* below 12.3: numba-cuda then compiles without LTO */
    *minor = 2;
    return NVJITLINK_SUCCESS;
}
