/* JIT linking (cuLinkCreate / AddData / AddFile / Complete / Destroy).
 *
 * Follows the CUDA Driver API reference, "Module Management": a link state
 * collects inputs and cuLinkComplete returns an image that cuModuleLoadData
 * accepts, owned by the state until cuLinkDestroy. ptxc links PTX, not SASS:
 * the image is ptxc's own container of the inputs, which ptxc resolves when
 * the module is loaded (runtime/driver_modules.py):
 *
 *   "PTXCLNK\0", u64 total bytes, u32 count, u32 0,
 *   count x { u32 CUjitInputType, u32 name bytes, u64 data bytes, name, data }
 *
 * Options are accepted; the info and error log sizes they pass are answered
 * with empty logs.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

#define LINK_MAGIC 0x4c4e4b31u
#define JIT_WALL_TIME 2
#define JIT_INFO_LOG_BUFFER 3
#define JIT_INFO_LOG_BUFFER_SIZE_BYTES 4
#define JIT_ERROR_LOG_BUFFER 5
#define JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6

struct drv_link {
    uint32_t magic;
    char *image;                      /* the inputs so far, in the format above */
    size_t len, cap;
    uint32_t count;
};

static int link_ok(struct drv_link *l) { return l && l->magic == LINK_MAGIC; }

static int append(struct drv_link *l, const void *p, size_t n);

/* ------------------------------------------ the container (also nvjitlink.c's) */
struct drv_link *drv_link_new(void)
{
    struct drv_link *l = calloc(1, sizeof *l);
    char head[24] = LINKED_MAGIC_BYTES;
    if (!l || !append(l, head, sizeof head)) {
        free(l);
        return NULL;
    }
    l->magic = LINK_MAGIC;
    return l;
}

int drv_link_add(struct drv_link *l, int type, const void *data, size_t size, const char *name)
{
    name = name ? name : "";
    char head[16];
    put32(head, (uint32_t)type);
    put32(head + 4, (uint32_t)strlen(name));
    put64(head + 8, size);
    LOCK();
    int ok = append(l, head, sizeof head) && append(l, name, strlen(name)) && append(l, data, size);
    if (ok)
        l->count++;
    UNLOCK();
    return ok;
}

/* the finished image (owned by l); NULL when nothing was added */
const char *drv_link_image(struct drv_link *l, size_t *size, uint32_t *count)
{
    put64(l->image + 8, l->len);
    put32(l->image + 16, l->count);
    *size = l->len;
    if (count)
        *count = l->count;
    return l->count ? l->image : NULL;
}

void drv_link_free(struct drv_link *l)
{
    l->magic = 0;
    free(l->image);
    free(l);
}

/* a whole file's bytes (malloc'd), NULL if unreadable or empty */
char *drv_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL, chunk[65536];
    size_t k;
    *len = 0;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) {
        char *b = realloc(buf, *len + k + 1);
        if (!b)
            break;
        buf = b;
        memcpy(buf + *len, chunk, k);
        *len += k;
    }
    fclose(f);
    if (buf)
        buf[*len] = 0;
    return buf;
}

static int append(struct drv_link *l, const void *p, size_t n)
{
    if (l->len + n > l->cap) {
        size_t cap = (l->len + n) * 2;
        char *q = realloc(l->image, cap);
        if (!q)
            return 0;
        l->image = q;
        l->cap = cap;
    }
    memcpy(l->image + l->len, p, n);
    l->len += n;
    return 1;
}

/* empty logs where the options ask for them */
static void answer_options(unsigned n, const int *opts, void **vals)
{
    for (unsigned i = 0; opts && vals && i < n; i++) {
        if (opts[i] == JIT_INFO_LOG_BUFFER_SIZE_BYTES || opts[i] == JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
            vals[i] = (void *)0;
        else if (opts[i] == JIT_WALL_TIME)
            memset(&vals[i], 0, sizeof(float));
    }
    for (unsigned i = 0; opts && vals && i < n; i++)
        if ((opts[i] == JIT_INFO_LOG_BUFFER || opts[i] == JIT_ERROR_LOG_BUFFER) && vals[i])
            *(char *)vals[i] = 0;
}

EXPORT CUresult cuLinkCreate_v2(unsigned n, int *opts, void **vals, CUlinkState *out)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (st)
        return st;
    if (!out || (n && (!opts || !vals)))
        return CUDA_ERROR_INVALID_VALUE;
    struct drv_link *l = drv_link_new();
    if (!l)
        return CUDA_ERROR_OUT_OF_MEMORY;
    answer_options(n, opts, vals);
    *out = l;
    return CUDA_SUCCESS;
}
ALIAS(cuLinkCreate, cuLinkCreate_v2);

EXPORT CUresult cuLinkAddData_v2(CUlinkState l, int type, void *data, size_t size,
                                 const char *name, unsigned n, int *opts, void **vals)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (!link_ok(l))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!data || !size || type < CU_JIT_INPUT_CUBIN || type > CU_JIT_INPUT_LIBRARY)
        return type == CU_JIT_INPUT_NVVM ? drv_unsupported("cuLinkAddData (NVVM IR input)")
                                         : CUDA_ERROR_INVALID_VALUE;
    answer_options(n, opts, vals);
    return drv_link_add(l, type, data, size, name) ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
ALIAS(cuLinkAddData, cuLinkAddData_v2);

EXPORT CUresult cuLinkAddFile_v2(CUlinkState l, int type, const char *path, unsigned n, int *opts,
                                 void **vals)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (!link_ok(l))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!path)
        return CUDA_ERROR_INVALID_VALUE;
    size_t len = 0;
    char *buf = drv_read_file(path, &len);
    if (!buf)
        return CUDA_ERROR_FILE_NOT_FOUND;
    const char *base = strrchr(path, '/');
    CUresult st = len ? cuLinkAddData_v2(l, type, buf, len, base ? base + 1 : path, n, opts, vals)
                      : CUDA_ERROR_INVALID_IMAGE;
    free(buf);
    return st;
}
ALIAS(cuLinkAddFile, cuLinkAddFile_v2);

EXPORT CUresult cuLinkComplete(CUlinkState l, void **image, size_t *size)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (!link_ok(l))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!image || !size)
        return CUDA_ERROR_INVALID_VALUE;
    const char *p = drv_link_image(l, size, NULL);
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;   /* nothing to link */
    *image = (void *)p;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuLinkDestroy(CUlinkState l)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (!link_ok(l))
        return CUDA_ERROR_INVALID_HANDLE;
    drv_link_free(l);
    return CUDA_SUCCESS;
}
