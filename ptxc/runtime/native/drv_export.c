/* cuGetExportTable: the driver's private tables, which NVIDIA's CUDA runtime
 * uses when it is linked statically into a program or a Python module
 * (CuPy's cupy_backends, cuda.bindings.runtime, `nvcc` without
 * `-cudart shared`).
 *
 * The runtime asks for each table by UUID. A table is an array of pointers;
 * in most, slot 0 holds the table's size in bytes. The slots that runtime
 * calls were found by running CuPy with every slot not implemented a stub
 * that names itself (PTXC_EXPORT_TRACE=1 prints each request and call); the
 * layouts and what each slot does follow ZLUDA's description of these
 * tables (reference only: github.com/vosen/ZLUDA, dark_api and
 * zluda/src/impl/dark_api.rs):
 *
 *   6bd5fb6c-5bf4-e74a-8987-d93912fd9df9 CUDART_INTERFACE: [1] module from a
 *     fat binary's wrapper, [2] the primary context of a device, [6] and [8]
 *     modules from a wrapper / a fat binary with extra arguments.
 *   a094798c-2e74-2e74-93f2-0800200c0a66 tools callback hooks: [2] and [6]
 *     hand the runtime buffers where a profiler's callbacks would be; with no
 *     profiler attached they stay zero.
 *   42d85a81-23f6-cb47-8298-f6e78a3aecdc tools thread-local storage.
 *   c693336e-1121-df11-a8c3-68f355d89593 context-local storage (no size
 *     slot): [0] store a value under (context, key), [1] remove, [2] get;
 *     the owners' destructors run when the context ends (drv_cls_release).
 *   263e8860-7cd2-6143-92f6-bbd5006dfa7e context wrapper: [2] says whether
 *     a context wraps another one (never, here). CUDA 13's runtime also
 *     calls [3] once at start-up, whose meaning is unknown: it answers
 *     CUDA_ERROR_NOT_SUPPORTED without naming itself as unsupported, and
 *     the runtime goes on without it (the applications' output and counts
 *     are those of their -cudart shared builds: tests/test_static_runtime.py).
 *   d4082055-bde6-704b-8d34-ba123c66e1f2 the runtime's check of the driver:
 *     [1] (drv_integrity.c).
 *
 * Every other slot is a stub that returns CUDA_ERROR_NOT_SUPPORTED and is
 * named as an unsupported driver call ("cuGetExportTable:TABLE[i]"), so a
 * runtime that needs it fails visibly instead of going on with a wrong
 * answer. Other UUIDs get CUDA_ERROR_INVALID_VALUE, what a driver answers
 * for a table it does not have (NVRTC asks for one and does without).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drv_export.h"

static int trace = -1;

static int tracing(void)
{
    if (trace < 0) {
        const char *e = getenv("PTXC_EXPORT_TRACE");
        trace = e && *e && strcmp(e, "0") != 0;
    }
    return trace;
}

#define TRACE(...) do { if (tracing()) { fflush(NULL); fprintf(stderr, "ptxc: export " __VA_ARGS__); } } while (0)

/* ------------------------------------------------------------- stubs */
#define STUB(tab, i) __attribute__((unused)) \
    static CUresult stub_##tab##_##i(void) { return drv_unsupported("cuGetExportTable:" #tab "[" #i "]"); }
STUB(CUDART_INTERFACE, 3) STUB(CUDART_INTERFACE, 4) STUB(CUDART_INTERFACE, 5)
STUB(CUDART_INTERFACE, 7) STUB(CUDART_INTERFACE, 9)
STUB(TOOLS_HOOKS, 1) STUB(TOOLS_HOOKS, 3) STUB(TOOLS_HOOKS, 4) STUB(TOOLS_HOOKS, 5)
STUB(TOOLS_TLS, 1) STUB(TOOLS_TLS, 2)
STUB(CONTEXT_LOCAL_STORAGE, 3)
STUB(CONTEXT_WRAPPER, 1) STUB(CONTEXT_WRAPPER, 4) STUB(CONTEXT_WRAPPER, 5)
STUB(INTEGRITY, 2)

/* ------------------------------------------------- CUDART_INTERFACE */
#define FATBINC_MAGIC 0x466243b1u

struct fatbinc_wrapper { uint32_t magic, version; const void *data; const void *prelinked; };

static CUresult module_from_wrapper(CUmodule *m, const struct fatbinc_wrapper *w)
{
    TRACE("CUDART_INTERFACE[1](%p, %p)\n", (void *)m, (const void *)w);
    if (!m || !w || w->magic != FATBINC_MAGIC)
        return CUDA_ERROR_INVALID_VALUE;
    return cuModuleLoadFatBinary(m, w->data);
}

static CUresult primary_context(CUcontext *ctx, CUdevice dev)
{
    TRACE("CUDART_INTERFACE[2](%p, %d)\n", (void *)ctx, dev);
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *ctx = drv_primary_ctx();
    return CUDA_SUCCESS;
}

/* the extra arguments belong to host variables (__cudaRegisterHostVar): none here */
static CUresult module_from_wrapper_ex(CUmodule *m, const struct fatbinc_wrapper *w, void *a3,
                                       void *a4, size_t a5)
{
    TRACE("CUDART_INTERFACE[6](%p, %p, %p, %p, %zu)\n", (void *)m, (const void *)w, a3, a4, a5);
    if (a3 || a4)
        return drv_unsupported("cuGetExportTable:CUDART_INTERFACE[6] with host variables");
    return module_from_wrapper(m, w);
}

static CUresult module_from_fatbin_ex(const void *fatbin, CUmodule *m, void *a3, void *a4,
                                      unsigned a5)
{
    TRACE("CUDART_INTERFACE[8](%p, %p, %p, %p, %u)\n", fatbin, (void *)m, a3, a4, a5);
    if (a3 || a4 || a5)
        return drv_unsupported("cuGetExportTable:CUDART_INTERFACE[8] with host variables");
    return cuModuleLoadFatBinary(m, fatbin);
}

#define SIZE(n) ((const void *)(uintptr_t)((n) * sizeof(void *)))

static const void *cudart_interface[10] = {
    SIZE(10), (const void *)module_from_wrapper, (const void *)primary_context,
    (const void *)stub_CUDART_INTERFACE_3, (const void *)stub_CUDART_INTERFACE_4,
    (const void *)stub_CUDART_INTERFACE_5, (const void *)module_from_wrapper_ex,
    (const void *)stub_CUDART_INTERFACE_7, (const void *)module_from_fatbin_ex,
    (const void *)stub_CUDART_INTERFACE_9,
};

/* ------------------------------------------------- tools callback hooks */
static uintptr_t hook_words[1024];
static unsigned char hook_bytes[14];

static void hooks_words(void **p, size_t *n)
{
    TRACE("TOOLS_HOOKS[2]\n");
    *p = hook_words;
    *n = sizeof hook_words / sizeof hook_words[0];
}

static void hooks_bytes(void **p, size_t *n)
{
    TRACE("TOOLS_HOOKS[6]\n");
    *p = hook_bytes;
    *n = sizeof hook_bytes;
}

static const void *tools_hooks[7] = {
    SIZE(7), (const void *)stub_TOOLS_HOOKS_1, (const void *)hooks_words,
    (const void *)stub_TOOLS_HOOKS_3, (const void *)stub_TOOLS_HOOKS_4,
    (const void *)stub_TOOLS_HOOKS_5, (const void *)hooks_bytes,
};

static const void *tools_tls[3] = {
    SIZE(3), (const void *)stub_TOOLS_TLS_1, (const void *)stub_TOOLS_TLS_2,
};

/* ------------------------------------------------- context-local storage */
struct cls { struct cls *next; CUcontext ctx; void *key, *value; void (*dtor)(CUcontext, void *, void *); };
static struct cls *cls_list;

static CUresult cls_context(CUcontext *ctx)
{
    if (!*ctx)
        *ctx = drv_current_ctx();
    return drv_ctx_valid(*ctx) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

static CUresult cls_insert(CUcontext ctx, void *key, void *value,
                           void (*dtor)(CUcontext, void *, void *))
{
    TRACE("CONTEXT_LOCAL_STORAGE[0](%p, %p, %p)\n", (void *)ctx, key, value);
    CUresult st = cls_context(&ctx);
    if (st)
        return st;
    LOCK();
    struct cls *c = cls_list;
    while (c && !(c->ctx == ctx && c->key == key))
        c = c->next;
    if (!c && (c = calloc(1, sizeof *c))) {
        c->ctx = ctx;
        c->key = key;
        c->next = cls_list;
        cls_list = c;
    }
    if (c) {
        c->value = value;
        c->dtor = dtor;
    }
    UNLOCK();
    return c ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult cls_remove(CUcontext ctx, void *key)
{
    TRACE("CONTEXT_LOCAL_STORAGE[1](%p, %p)\n", (void *)ctx, key);
    CUresult st = cls_context(&ctx);
    if (st)
        return st;
    LOCK();
    struct cls **pp = &cls_list;
    while (*pp && !((*pp)->ctx == ctx && (*pp)->key == key))
        pp = &(*pp)->next;
    struct cls *c = *pp;
    if (c)
        *pp = c->next;
    UNLOCK();
    free(c);
    return c ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult cls_get(void **value, CUcontext ctx, void *key)
{
    CUresult st = cls_context(&ctx);
    if (st || !value)
        return st ? st : CUDA_ERROR_INVALID_VALUE;
    LOCK();
    struct cls *c = cls_list;
    while (c && !(c->ctx == ctx && c->key == key))
        c = c->next;
    if (c)
        *value = c->value;
    UNLOCK();
    TRACE("CONTEXT_LOCAL_STORAGE[2](%p, %p) -> %s\n", (void *)ctx, key, c ? "found" : "none");
    return c ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* a context ends (cuCtxDestroy, cuDevicePrimaryCtxReset): its values go, and
 * each owner's destructor is called, as the runtime expects */
void drv_cls_release(CUcontext ctx)
{
    struct cls *gone = NULL;
    LOCK();
    for (struct cls **pp = &cls_list; *pp;) {
        struct cls *c = *pp;
        if (c->ctx == ctx) {
            *pp = c->next;
            c->next = gone;
            gone = c;
        } else {
            pp = &c->next;
        }
    }
    UNLOCK();
    while (gone) {
        struct cls *c = gone;
        gone = c->next;
        TRACE("CONTEXT_LOCAL_STORAGE destructor(%p, %p, %p)\n", (void *)ctx, c->key, c->value);
        if (c->dtor)
            c->dtor(ctx, c->key, c->value);
        free(c);
    }
}

static const void *context_local_storage[4] = {
    (const void *)cls_insert, (const void *)cls_remove, (const void *)cls_get,
    (const void *)stub_CONTEXT_LOCAL_STORAGE_3,
};

/* ------------------------------------------------- context wrapper */
/* called once at start-up with (the runtime's context-local-storage key,
 * 0x40, NULL); the runtime ignores its failure and keeps its per-context
 * data in CONTEXT_LOCAL_STORAGE instead, so the refusal is not named as an
 * unsupported call (PTXC_EXPORT_TRACE shows it) */
static CUresult wrapper_3(void *a, void *b, void *c)
{
    TRACE("CONTEXT_WRAPPER[3](%p, %p, %p): not supported, the runtime goes on\n", a, b, c);
    return CUDA_ERROR_NOT_SUPPORTED;
}

static CUresult unwrap_context(CUcontext ctx, unsigned *wrapped, CUcontext *inner)
{
    TRACE("CONTEXT_WRAPPER[2](%p)\n", (void *)ctx);
    (void)inner;
    CUresult st = cls_context(&ctx);
    if (st || !wrapped)
        return st ? st : CUDA_ERROR_INVALID_VALUE;
    *wrapped = 0;                        /* ptxc's contexts wrap nothing */
    return CUDA_SUCCESS;
}

static const void *context_wrapper[6] = {
    SIZE(6), (const void *)stub_CONTEXT_WRAPPER_1, (const void *)unwrap_context,
    (const void *)wrapper_3, (const void *)stub_CONTEXT_WRAPPER_4,
    (const void *)stub_CONTEXT_WRAPPER_5,
};

/* ------------------------------------------------- the runtime's check */
static CUresult integrity(uint32_t runtime_version, uint64_t timestamp, unsigned char *out)
{
    TRACE("INTEGRITY[1](%u, %llu)\n", runtime_version, (unsigned long long)timestamp);
    return drv_integrity_check(runtime_version, timestamp, out);
}

static const void *integrity_table[3] = {
    SIZE(3), (const void *)integrity, (const void *)stub_INTEGRITY_2,
};

const void *drv_integrity_slot(void) { return (const void *)integrity; }

/* ------------------------------------------------- the lookup */
static const struct { unsigned char uuid[16]; const char *name; const void **table; } tables[] = {
    [EXPORT_CUDART] = { { 0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a,
                          0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9 },
                        "CUDART_INTERFACE", cudart_interface },
    [EXPORT_HOOKS] = { { 0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74,
                         0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66 },
                       "TOOLS_HOOKS", tools_hooks },
    [EXPORT_TLS] = { { 0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47,
                       0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc },
                     "TOOLS_TLS", tools_tls },
    [EXPORT_CLS] = { { 0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11,
                       0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93 },
                     "CONTEXT_LOCAL_STORAGE", context_local_storage },
    [EXPORT_WRAPPER] = { { 0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43,
                           0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e },
                         "CONTEXT_WRAPPER", context_wrapper },
    [EXPORT_INTEGRITY] = { { 0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b,
                             0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2 },
                           "INTEGRITY", integrity_table },
};

const void *drv_export_table(int which) { return tables[which].table; }

static const void *static_runtime;       /* the object NVIDIA's runtime is linked into */

static const void *object_of(const void *code)
{
    Dl_info info;
    return code && dladdr(code, &info) ? info.dli_fbase : NULL;
}

int drv_static_runtime(const void *caller)
{
    return static_runtime && object_of(caller) == static_runtime;
}

EXPORT CUresult cuGetExportTable(const void **table, const void *uuid)
{
    DRV_CHILD_GUARD();
    if (table)
        *table = NULL;
    if (!table || !uuid)
        return CUDA_ERROR_INVALID_VALUE;
    const unsigned char *u = uuid;
    for (int i = 0; i < EXPORT_TABLES; i++)
        if (!memcmp(u, tables[i].uuid, 16)) {
            TRACE("table %s\n", tables[i].name);
            if (i == EXPORT_CUDART && !static_runtime)
                static_runtime = object_of(__builtin_return_address(0));
            *table = tables[i].table;
            return CUDA_SUCCESS;
        }
    TRACE("table %02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x: none\n",
          u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
          u[14], u[15]);
    return CUDA_ERROR_INVALID_VALUE;
}
