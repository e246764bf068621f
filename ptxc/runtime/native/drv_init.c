/* The driver API's entry: cuInit, versions, cuGetProcAddress, error names,
 * and what an unimplemented driver call does.
 *
 * Follows the CUDA Driver API reference (cuda.h of CUDA 13): "Initialization",
 * "Version Management", "Driver Entry Point Access" and "Error Handling".
 * An unimplemented call (a generated weak stub, build_shim.py) returns
 * CUDA_ERROR_NOT_SUPPORTED, says so once per name on stderr, and is named in
 * ptxc's report (OP_DRIVER_UNSUPPORTED); the application goes on, as it
 * would on a driver that lacks the feature.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

#define DRIVER_VERSION 13090           /* newer than the NVRTC wheels of CUDA 13 (their PTX loads) */
#define PROC_PER_THREAD 2          /* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */

static int initialized;

int drv_initialized(void) { return initialized; }

/* ------------------------------------------------------ unsupported calls */
struct seen { struct seen *next; const char *name; };
static struct seen *reported;

CUresult drv_unsupported(const char *name)
{
    LOCK();
    int first = 1;
    for (struct seen *s = reported; s; s = s->next)
        first &= strcmp(s->name, name) != 0;
    if (first) {
        struct seen *s = malloc(sizeof *s);
        if (s) {
            s->name = name;
            s->next = reported;
            reported = s;
        }
        fflush(NULL);
        fprintf(stderr, "ptxc: unsupported CUDA driver call: %s (returns CUDA_ERROR_NOT_SUPPORTED)\n",
                name);
        if (!shim_dead() && shim_connected()) {
            struct reply r;
            shim_call(OP_DRIVER_UNSUPPORTED, name, strlen(name), NULL, 0, &r);
            reply_free(&r);
        }
    }
    UNLOCK();
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* the runtime's codes that differ from the driver's (the others are equal) */
CUresult drv_from_runtime(cudaError_t e)
{
    switch (e) {
    case cudaErrorInvalidConfiguration: case cudaErrorInvalidPitchValue:
    case cudaErrorInvalidMemcpyDirection: case cudaErrorInvalidHostPointer:
    case cudaErrorInvalidDevicePointer:
        return CUDA_ERROR_INVALID_VALUE;
    case cudaErrorInvalidSymbol: return CUDA_ERROR_NOT_FOUND;
    case cudaErrorInvalidDeviceFunction: return CUDA_ERROR_INVALID_HANDLE;
    case cudaErrorMissingConfiguration: return CUDA_ERROR_INVALID_VALUE;
    default: return e;
    }
}

/* ------------------------------------------------------------- cuInit */
EXPORT CUresult cuInit(unsigned flags)
{
    DRV_CHILD_GUARD();
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    if (!initialized) {
        const char *fd = getenv(PTXC_FD_ENV);
        if ((!fd || !*fd) && !shim_connected()) {
            UNLOCK();
            fprintf(stderr, "ptxc: this libcuda.so.1 is ptxc's CUDA driver: run the application "
                            "with `ptxc run -- APP ARGS...`\n");
            return CUDA_ERROR_NO_DEVICE;
        }
        gpu_info();                  /* connects (conn.c) */
        initialized = 1;
    }
    UNLOCK();
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    *v = DRIVER_VERSION;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------ cuGetProcAddress */
struct proc { const char *name; int version; int per_thread; const char *symbol; };
static const struct proc procs[] = {
#include "cuda_proc_table.inc"
};

struct drv_export { const char *name; void *fn; };
extern const struct drv_export drv_exports[];   /* generated (build_shim.py), sorted */
extern const size_t drv_nexports;

static int by_name(const void *key, const void *e)
{
    return strcmp((const char *)key, ((const struct drv_export *)e)->name);
}

static void *exported(const char *name)
{
    const struct drv_export *e = bsearch(name, drv_exports, drv_nexports, sizeof *e, by_name);
    return e ? e->fn : NULL;
}

/* the exported function serving `name` at ABI `version`: 0 found, 1 no such
 * symbol, 2 the symbol exists only for later versions */
static int lookup(const char *name, int version, int per_thread, void **fn)
{
    const struct proc *best = NULL, *best_pt = NULL;
    int known = 0;
    for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++) {
        const struct proc *p = &procs[i];
        if (strcmp(p->name, name) != 0)
            continue;
        known = 1;
        if (p->version > version)
            continue;
        const struct proc **slot = p->per_thread ? &best_pt : &best;
        if (!*slot || p->version > (*slot)->version)
            *slot = p;
    }
    if (per_thread && best_pt)
        best = best_pt;
    if (best) {
        *fn = exported(best->symbol);
        return *fn ? 0 : 1;
    }
    if (known)
        return 2;
    *fn = exported(name);             /* a name without a typedef of its own */
    return *fn ? 0 : 1;
}

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                    unsigned long long flags, int *status)
{
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    void *fn = NULL;
    int st = lookup(symbol, version, (flags & PROC_PER_THREAD) != 0, &fn);
    *pfn = st ? NULL : fn;
    if (status)
        *status = st;
    return st ? CUDA_ERROR_NOT_FOUND : CUDA_SUCCESS;
}

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version,
                                 unsigned long long flags)
{
    return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}

ALIAS(cuGetProcAddress_v2_ptsz, cuGetProcAddress_v2);

/* ------------------------------------------------------------- errors */
static const struct { int code; const char *name; } names[] = {
#include "cuda_result_names.inc"
};

static const struct { int code; const char *text; } texts[] = {
    { CUDA_SUCCESS, "no error" },
    { CUDA_ERROR_INVALID_VALUE, "invalid argument" },
    { CUDA_ERROR_OUT_OF_MEMORY, "out of memory" },
    { CUDA_ERROR_NOT_INITIALIZED, "initialization error" },
    { CUDA_ERROR_DEINITIALIZED, "driver shutting down" },
    { CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected" },
    { CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal" },
    { CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid" },
    { CUDA_ERROR_INVALID_CONTEXT, "invalid device context" },
    { CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device" },
    { CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed" },
    { CUDA_ERROR_FILE_NOT_FOUND, "file not found" },
    { CUDA_ERROR_INVALID_HANDLE, "invalid resource handle" },
    { CUDA_ERROR_NOT_FOUND, "named symbol not found" },
    { CUDA_ERROR_NOT_READY, "device not ready" },
    { CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered" },
    { CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch" },
    { 710, "device-side assert triggered" },
    { 716, "misaligned address" },
    { 719, "unspecified launch failure" },
    { CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "too many blocks in cooperative launch" },
    { CUDA_ERROR_NOT_SUPPORTED, "operation not supported" },
    { CUDA_ERROR_UNKNOWN, "unknown error" },
};

EXPORT CUresult cuGetErrorName(CUresult e, const char **out)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].code == e) {
            *out = names[i].name;
            return CUDA_SUCCESS;
        }
    *out = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorString(CUresult e, const char **out)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (texts[i].code == e) {
            *out = texts[i].text;
            return CUDA_SUCCESS;
        }
    return cuGetErrorName(e, out);
}

/* profiler control: nothing to start or stop */
EXPORT CUresult cuProfilerStart(void) { DRV_CHILD_GUARD(); return CUDA_SUCCESS; }
EXPORT CUresult cuProfilerStop(void) { DRV_CHILD_GUARD(); return CUDA_SUCCESS; }
