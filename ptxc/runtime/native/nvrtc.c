/* ptxc's NVRTC (libnvrtc.so.13): the real NVRTC, and the PTX of each cubin.
 *
 * cuda.core's Program.compile("cubin") and other NVRTC users compile CUDA
 * C++ to SASS for the device they see, which ptxc cannot run. `ptxc run`
 * preloads this library under the name libnvrtc.so.13 (runtime/driver_env.py),
 * so NVRTC users get it; every call goes to the real NVRTC (found through
 * $PTXC_NVRTC, which ptxc run sets when its own environment has one, else
 * next to the Python packages the process has loaded, else in the CUDA
 * toolkit). When a program is compiled for a real architecture (-arch=sm_XX),
 * the same source, headers and name expressions are compiled once more for
 * compute_XX, and the PTX is kept with the cubin the program hands out
 * (nvrtcGetCUBIN): cuModuleLoadData of those bytes then loads the PTX
 * (drv_module.c, nvrtc_ptx_for). Follows nvrtc.h of CUDA 13.
 *
 * The calls ptxc only forwards have the generic signature of up to six
 * integer or pointer arguments (true of every NVRTC function; the x86-64
 * System V convention passes them in the same registers).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

#define NVRTC_ERROR_INTERNAL_ERROR 11
#define NVRTC_SONAME "libnvrtc.so.13"

typedef long (*generic_fn)(long, long, long, long, long, long);
static void *real_lib;

/* a directory of loaded Python packages (.../site-packages/) */
static int find_site(struct dl_phdr_info *info, size_t size, void *out)
{
    (void)size;
    const char *p = info->dlpi_name ? strstr(info->dlpi_name, "/site-packages/") : NULL;
    if (!p)
        return 0;
    snprintf(out, 4096, "%.*s", (int)(p - info->dlpi_name) + 15, info->dlpi_name);
    return 1;
}

static void *try_open(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h && dlsym(h, "nvrtcVersion") == dlsym(RTLD_DEFAULT, "nvrtcVersion")) {
        dlclose(h);                    /* ptxc's own library, not NVRTC */
        return NULL;
    }
    return h;
}

static void *real(void)
{
    if (real_lib)
        return real_lib;
    char site[4096] = "", path[4200];
    const char *env = getenv("PTXC_NVRTC");
    if (env && *env)
        real_lib = try_open(env);
    if (!real_lib && dl_iterate_phdr(find_site, site)) {
        const char *subdirs[] = { "nvidia/cu13/lib/", "nvidia/cuda_nvrtc/lib/" };
        for (int i = 0; i < 2 && !real_lib; i++) {
            snprintf(path, sizeof path, "%s%s" NVRTC_SONAME, site, subdirs[i]);
            real_lib = try_open(path);
        }
    }
    const char *home = getenv("CUDA_HOME");
    if (!real_lib && home) {
        snprintf(path, sizeof path, "%s/lib64/" NVRTC_SONAME, home);
        real_lib = try_open(path);
    }
    if (!real_lib)
        real_lib = try_open("/usr/local/cuda/lib64/" NVRTC_SONAME);
    if (!real_lib)
        fprintf(stderr, "ptxc: NVRTC was called but no libnvrtc.so.13 was found (set "
                        "PTXC_NVRTC=/path/to/libnvrtc.so.13)\n");
    return real_lib;
}

static generic_fn fn(const char *name)
{
    void *h = real();
    return h ? (generic_fn)dlsym(h, name) : NULL;
}

#define FORWARD(name)                                                                      \
    EXPORT long name(long a, long b, long c, long d, long e, long f)                       \
    {                                                                                      \
        static generic_fn target;                                                          \
        if (!target)                                                                       \
            target = fn(#name);                                                            \
        return target ? target(a, b, c, d, e, f) : NVRTC_ERROR_INTERNAL_ERROR;             \
    }

FORWARD(nvrtcVersion)
FORWARD(nvrtcGetNumSupportedArchs)
FORWARD(nvrtcGetSupportedArchs)
FORWARD(nvrtcGetPTXSize)
FORWARD(nvrtcGetPTX)
FORWARD(nvrtcGetCUBINSize)
FORWARD(nvrtcGetLTOIRSize)
FORWARD(nvrtcGetLTOIR)
FORWARD(nvrtcGetOptiXIRSize)
FORWARD(nvrtcGetOptiXIR)
FORWARD(nvrtcGetProgramLogSize)
FORWARD(nvrtcGetProgramLog)
FORWARD(nvrtcGetLoweredName)
FORWARD(nvrtcGetPCHHeapSize)
FORWARD(nvrtcSetPCHHeapSize)
FORWARD(nvrtcGetPCHCreateStatus)
FORWARD(nvrtcGetPCHHeapSizeRequired)
FORWARD(nvrtcSetFlowCallback)
FORWARD(nvrtcGetTileIRSize)
FORWARD(nvrtcGetTileIR)
FORWARD(nvrtcInstallBundledHeaders)
FORWARD(nvrtcGetBundledHeadersInfo)
FORWARD(nvrtcRemoveBundledHeaders)
FORWARD(__nvrtcCPEx)
FORWARD(__nvrtcNvvmHandle)

EXPORT const char *nvrtcGetErrorString(int result)
{
    generic_fn f = fn("nvrtcGetErrorString");
    return f ? (const char *)f(result, 0, 0, 0, 0, 0) : "NVRTC_ERROR_INTERNAL_ERROR";
}

/* ------------------------------------------------- programs and their PTX */
struct program {
    struct program *next;
    void *handle;                     /* the real nvrtcProgram */
    char *src, *name;
    int nheaders;
    char **headers, **includes;
    int nexprs;
    char **exprs;
    char *ptx;                        /* the compute_XX PTX of an sm_XX compilation */
};
struct kept { struct kept *next; char *cubin; size_t size; char *ptx; };
static struct program *programs;
static struct kept *kept;

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static struct program *program_of(void *handle)
{
    for (struct program *p = programs; p; p = p->next)
        if (p->handle == handle)
            return p;
    return NULL;
}

EXPORT int nvrtcCreateProgram(void **prog, const char *src, const char *name, int n,
                              const char *const *headers, const char *const *includes)
{
    generic_fn f = fn("nvrtcCreateProgram");
    int st = f ? (int)f((long)prog, (long)src, (long)name, n, (long)headers, (long)includes)
               : NVRTC_ERROR_INTERNAL_ERROR;
    struct program *p = st == 0 ? calloc(1, sizeof *p) : NULL;
    if (p) {
        LOCK();
        *p = (struct program){ programs, *prog, dup_or_null(src), dup_or_null(name), n,
                               calloc(n + 1, sizeof(char *)), calloc(n + 1, sizeof(char *)) };
        for (int i = 0; i < n && headers && includes; i++) {
            p->headers[i] = dup_or_null(headers[i]);
            p->includes[i] = dup_or_null(includes[i]);
        }
        programs = p;
        UNLOCK();
    }
    return st;
}

EXPORT int nvrtcAddNameExpression(void *prog, const char *expr)
{
    generic_fn f = fn("nvrtcAddNameExpression");
    int st = f ? (int)f((long)prog, (long)expr, 0, 0, 0, 0) : NVRTC_ERROR_INTERNAL_ERROR;
    LOCK();
    struct program *p = st == 0 ? program_of(prog) : NULL;
    char **e = p ? realloc(p->exprs, (p->nexprs + 1) * sizeof *e) : NULL;
    if (e) {
        e[p->nexprs++] = strdup(expr);
        p->exprs = e;
    }
    UNLOCK();
    return st;
}

/* the options with -arch=sm_XX (any spelling) made compute_XX; 0 if none is sm_XX */
static int ptx_options(int n, const char *const *opts, char **out)
{
    int found = 0;
    for (int i = 0; i < n; i++) {
        const char *o = opts[i], *sm = strstr(o, "sm_");
        int arch = !strncmp(o, "-arch", 5) || !strncmp(o, "--gpu-architecture", 18);
        if (arch && sm) {
            if (asprintf(&out[i], "%.*scompute_%s", (int)(sm - o), o, sm + 3) < 0)
                return 0;
            found = 1;
        } else if (!strcmp(o, "-dlto") || !strcmp(o, "--dlink-time-opt") || !strcmp(o, "-lto")) {
            return 0;                  /* LTO-IR output: no cubin to key */
        } else {
            out[i] = strdup(o);
        }
    }
    return found;
}

/* compile p's source again for compute_XX: its PTX, NULL on failure */
static char *shadow_ptx(struct program *p, int n, const char *const *opts)
{
    char **popts = calloc(n + 1, sizeof *popts);
    void *shadow = NULL;
    char *ptx = NULL;
    generic_fn create = fn("nvrtcCreateProgram"), compile = fn("nvrtcCompileProgram");
    generic_fn size = fn("nvrtcGetPTXSize"), get = fn("nvrtcGetPTX"), add = fn("nvrtcAddNameExpression");
    generic_fn destroy = fn("nvrtcDestroyProgram");
    if (popts && ptx_options(n, opts, popts) && create && compile && size && get && add &&
        !create((long)&shadow, (long)p->src, (long)p->name, p->nheaders, (long)p->headers,
                (long)p->includes)) {
        for (int i = 0; i < p->nexprs; i++)
            add((long)shadow, (long)p->exprs[i], 0, 0, 0, 0);
        size_t len = 0;
        if (!compile((long)shadow, n, (long)popts, 0, 0, 0) && !size((long)shadow, (long)&len, 0, 0, 0, 0) &&
            (ptx = calloc(1, len + 1)) && get((long)shadow, (long)ptx, 0, 0, 0, 0)) {
            free(ptx);
            ptx = NULL;
        }
        destroy((long)&shadow, 0, 0, 0, 0, 0);
    }
    for (int i = 0; popts && i < n; i++)
        free(popts[i]);
    free(popts);
    return ptx;
}

EXPORT int nvrtcCompileProgram(void *prog, int n, const char *const *opts)
{
    generic_fn f = fn("nvrtcCompileProgram");
    int st = f ? (int)f((long)prog, n, (long)opts, 0, 0, 0) : NVRTC_ERROR_INTERNAL_ERROR;
    LOCK();
    struct program *p = st == 0 ? program_of(prog) : NULL;
    if (p && p->src) {
        free(p->ptx);
        p->ptx = shadow_ptx(p, n, opts);
    }
    UNLOCK();
    return st;
}

EXPORT int nvrtcGetCUBIN(void *prog, char *cubin)
{
    generic_fn f = fn("nvrtcGetCUBIN"), size = fn("nvrtcGetCUBINSize");
    int st = f ? (int)f((long)prog, (long)cubin, 0, 0, 0, 0) : NVRTC_ERROR_INTERNAL_ERROR;
    LOCK();
    struct program *p = st == 0 ? program_of(prog) : NULL;
    size_t n = 0;
    struct kept *k = p && p->ptx && size && !size((long)prog, (long)&n, 0, 0, 0, 0)
                     ? calloc(1, sizeof *k) : NULL;
    if (k && (k->cubin = malloc(n))) {
        memcpy(k->cubin, cubin, n);
        *k = (struct kept){ kept, k->cubin, n, strdup(p->ptx) };
        kept = k;
    } else {
        free(k);
    }
    UNLOCK();
    return st;
}

EXPORT int nvrtcDestroyProgram(void **prog)
{
    void *handle = prog ? *prog : NULL;
    generic_fn f = fn("nvrtcDestroyProgram");
    int st = f ? (int)f((long)prog, 0, 0, 0, 0, 0) : NVRTC_ERROR_INTERNAL_ERROR;
    LOCK();
    for (struct program **pp = &programs; *pp; pp = &(*pp)->next)
        if ((*pp)->handle == handle) {
            struct program *p = *pp;
            *pp = p->next;
            for (int i = 0; i < p->nheaders; i++) {
                free(p->headers[i]);
                free(p->includes[i]);
            }
            for (int i = 0; i < p->nexprs; i++)
                free(p->exprs[i]);
            free(p->headers); free(p->includes); free(p->exprs);
            free(p->src); free(p->name); free(p->ptx); free(p);
            break;
        }
    UNLOCK();
    return st;
}

/* the PTX kept for a cubin NVRTC produced in this process (NULL: none) */
const char *nvrtc_ptx_for(const void *image, size_t size)
{
    for (struct kept *k = kept; k; k = k->next)
        if (k->size == size && !memcmp(k->cubin, image, size))
            return k->ptx;
    return NULL;
}
