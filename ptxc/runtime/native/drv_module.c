/* Modules, libraries, functions, kernels and module globals of the driver API.
 *
 * Follows the CUDA Driver API reference, "Module Management" and "Library
 * Management". An image (PTX text, a fat binary, a cubin, or the image of a
 * cuLinkComplete / ptxc's nvJitLink, drv_link.c) goes to ptxc whole
 * (OP_MODULE_LOAD); ptxc finds its PTX (runtime/driver_modules.py) or says
 * why there is none, and answers a module id and its kernels. A library
 * (cuLibraryLoadData) is a module here, and a CUkernel is a CUfunction:
 * cuKernelGetFunction returns the same handle. Globals are the module's
 * .global and .const variables, mapped like the runtime's symbols.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"

#define MODULE_MAGIC 0x4d4f4431u
#define FUNCTION_MAGIC 0x46554e31u
#define FATBINC_MAGIC 0x466243b1u
#define FATBIN_MAGIC 0xba55ed50u

struct drv_module {
    uint32_t magic;
    uint32_t id;                      /* ptxc's module (a registry entry) */
    int library;
    uint32_t nkernels;
    char **kernel_names;
    struct drv_function **functions;  /* one per kernel name, made on request */
};

struct drv_function {
    uint32_t magic;
    uint32_t id;                      /* ptxc's kernel id (OP_LAUNCH) */
    struct drv_module *module;
    char *name;
    int have_info;
    uint32_t nparams, param_bytes;
    uint32_t *offsets, *sizes;
    int64_t attrs[KATTR_COUNT];
};

static int module_ok(struct drv_module *m) { return m && m->magic == MODULE_MAGIC; }

struct drv_function *drv_function_of(void *handle)
{
    struct drv_function *f = handle;
    return f && f->magic == FUNCTION_MAGIC && module_ok(f->module) ? f : NULL;
}

uint32_t drv_function_id(struct drv_function *f) { return f->id; }
const char *drv_function_name(struct drv_function *f) { return f->name; }

/* ----------------------------------------------------- image sizes */
static uint64_t elf_size(const unsigned char *p)
{
    if (p[4] != 2)                          /* ELFCLASS64 only (cubins are) */
        return 0;
    uint64_t shoff = get64((const char *)p + 0x28), phoff = get64((const char *)p + 0x20);
    uint16_t shentsize, shnum, phentsize, phnum;
    memcpy(&phentsize, p + 0x36, 2);
    memcpy(&phnum, p + 0x38, 2);
    memcpy(&shentsize, p + 0x3a, 2);
    memcpy(&shnum, p + 0x3c, 2);
    uint64_t end = shoff + (uint64_t)shentsize * shnum;
    if (phoff + (uint64_t)phentsize * phnum > end)
        end = phoff + (uint64_t)phentsize * phnum;
    for (uint16_t i = 0; i < shnum; i++) {  /* a section after the header table */
        const char *sh = (const char *)p + shoff + (uint64_t)i * shentsize;
        uint32_t type = get32(sh + 4);
        uint64_t off = get64(sh + 0x18), size = get64(sh + 0x20);
        if (type != 8 && off + size > end)  /* SHT_NOBITS has no bytes */
            end = off + size;
    }
    return end;
}

/* the image's bytes and size: PTX text (with its NUL), a fat binary (also
 * behind its wrapper), an ELF cubin, or a linked image */
static const void *image_bytes(const void *image, size_t *size)
{
    const unsigned char *p = image;
    if (strnlen(image, 4) < 4) {            /* too short for a magic number: text */
        *size = strlen(image) + 1;
        return image;
    }
    if (get32(image) == FATBINC_MAGIC)
        p = *(const unsigned char *const *)((const char *)image + 8);
    if (get32((const char *)p) == FATBIN_MAGIC) {
        uint16_t hs;
        memcpy(&hs, p + 6, 2);
        *size = hs + get64((const char *)p + 8);
    } else if (!memcmp(p, "\177ELF", 4)) {
        *size = elf_size(p);
    } else if (!memcmp(p, LINKED_MAGIC, 8)) {
        *size = get64((const char *)p + 8);
    } else {
        *size = strlen((const char *)p) + 1;
    }
    return p;
}

/* ---------------------------------------------------------- loading */
CUresult drv_module_load(const void *image, size_t size, struct drv_module **out, int library)
{
    char req[8];
    put32(req, (uint32_t)library);
    put32(req + 4, 0);
    struct reply r;
    shim_call(OP_MODULE_LOAD, req, sizeof req, image, size, &r);
    CUresult st = r.status;
    if (st && r.len) {                     /* ptxc's one-line reason */
        fflush(NULL);
        fprintf(stderr, "ptxc: %s\n", r.data);
    }
    if (!st && r.len < 8)
        st = CUDA_ERROR_UNKNOWN;
    struct drv_module *m = NULL;
    if (!st && !(m = calloc(1, sizeof *m)))
        st = CUDA_ERROR_OUT_OF_MEMORY;
    if (!st) {
        m->magic = MODULE_MAGIC;
        m->id = get32(r.data);
        m->library = library;
        m->nkernels = get32(r.data + 4);
        m->kernel_names = calloc(m->nkernels + 1, sizeof *m->kernel_names);
        m->functions = calloc(m->nkernels + 1, sizeof *m->functions);
        const char *q = r.data + 8, *end = r.data + r.len;
        for (uint32_t i = 0; i < m->nkernels && q < end; i++, q += strlen(q) + 1)
            m->kernel_names[i] = strdup(q);
        *out = m;
    }
    reply_free(&r);
    return st;
}

/* A fat binary that lies in a loaded program or library (its .nv_fatbin) is
 * the registered code of a CUDA runtime linked statically into it (CuPy's
 * cub and thrust modules), which loads it just before launching one of its
 * kernels and whose caller may not check the launch's error. When it cannot
 * run here, ptxc stops the run, naming the library, rather than let the
 * program go on with results no kernel computed. */
static void embedded_failure(const void *image)
{
    Dl_info info;
    if (!dladdr(image, &info) || !info.dli_fname)
        return;
    const char *base = strrchr(info.dli_fname, '/');
    fflush(NULL);
    fprintf(stderr, "ptxc: error: %s has kernels that ptxc cannot run (above), registered by the "
                    "CUDA runtime linked statically into it (from %s); the run stops here rather "
                    "than go on without them (docs/python-gpu.md)\n",
            base ? base + 1 : info.dli_fname, info.dli_fname);
    shim_fatal(PTXC_EXIT_STOPPED);
}

static CUresult load_image(struct drv_module **out, const void *image, int library)
{
    CUresult st = drv_ctx_check();
    if (st)
        return st;
    if (!out || !image)
        return CUDA_ERROR_INVALID_VALUE;
    size_t size;
    const void *p = image_bytes(image, &size);
    if (!size)
        return CUDA_ERROR_INVALID_IMAGE;
    const char *ptx = !memcmp(p, "\177ELF", 4) ? nvrtc_ptx_for(p, size) : NULL;
    if (ptx) {                             /* a cubin of NVRTC's: its PTX (nvrtc.c) */
        p = ptx;
        size = strlen(ptx) + 1;
    }
    LOCK();
    st = drv_module_load(p, size, out, library);
    UNLOCK();
    if (st == CUDA_ERROR_NO_BINARY_FOR_GPU || st == CUDA_ERROR_INVALID_IMAGE ||
        st == CUDA_ERROR_INVALID_PTX)
        embedded_failure(image);
    return st;
}

static CUresult load_file(struct drv_module **out, const char *path, int library)
{
    if (!out || !path)
        return CUDA_ERROR_INVALID_VALUE;
    size_t n = 0;
    char *buf = drv_read_file(path, &n);      /* NUL-ended: PTX text ends there */
    if (!buf)
        return CUDA_ERROR_FILE_NOT_FOUND;
    CUresult st = load_image(out, buf, library);
    free(buf);
    return st;
}

EXPORT CUresult cuModuleLoadData(CUmodule *m, const void *image) { DRV_CHILD_GUARD(); return load_image(m, image, 0); }
EXPORT CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, void *opts,
                                   void **vals)
{
    DRV_CHILD_GUARD();
    (void)n; (void)opts; (void)vals;       /* JIT options: nothing to compile here */
    return load_image(m, image, 0);
}
EXPORT CUresult cuModuleLoadFatBinary(CUmodule *m, const void *fatbin) { DRV_CHILD_GUARD(); return load_image(m, fatbin, 0); }
EXPORT CUresult cuModuleLoad(CUmodule *m, const char *path) { DRV_CHILD_GUARD(); return load_file(m, path, 0); }

EXPORT CUresult cuLibraryLoadData(CUlibrary *lib, const void *code, void *jit_opts, void **jit_vals,
                                  unsigned njit, void *lib_opts, void **lib_vals, unsigned nlib)
{
    DRV_CHILD_GUARD();
    (void)jit_opts; (void)jit_vals; (void)njit; (void)lib_opts; (void)lib_vals; (void)nlib;
    return load_image(lib, code, 1);
}
EXPORT CUresult cuLibraryLoadFromFile(CUlibrary *lib, const char *path, void *jit_opts,
                                      void **jit_vals, unsigned njit, void *lib_opts,
                                      void **lib_vals, unsigned nlib)
{
    DRV_CHILD_GUARD();
    (void)jit_opts; (void)jit_vals; (void)njit; (void)lib_opts; (void)lib_vals; (void)nlib;
    return load_file(lib, path, 1);
}

static CUresult unload(struct drv_module *m, int library)
{
    DRV_INIT();
    if (!module_ok(m) || m->library != library)
        return CUDA_ERROR_INVALID_HANDLE;
    LOCK();
    m->magic = 0;                          /* its functions are invalid handles from now on */
    UNLOCK();
    return CUDA_SUCCESS;
}
EXPORT CUresult cuModuleUnload(CUmodule m) { DRV_CHILD_GUARD(); return unload(m, 0); }
EXPORT CUresult cuLibraryUnload(CUlibrary lib) { DRV_CHILD_GUARD(); return unload(lib, 1); }

/* -------------------------------------------------------- functions */
static CUresult function(struct drv_module *m, const char *name, struct drv_function **out)
{
    DRV_INIT();
    if (!out || !name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!module_ok(m))
        return CUDA_ERROR_INVALID_HANDLE;
    LOCK();
    CUresult st = CUDA_ERROR_NOT_FOUND;
    for (uint32_t i = 0; i < m->nkernels; i++) {
        if (!m->kernel_names[i] || strcmp(m->kernel_names[i], name) != 0)
            continue;
        if (!m->functions[i]) {
            char req[4];
            put32(req, m->id);
            struct reply r;
            shim_call(OP_MODULE_FUNCTION, req, sizeof req, name, strlen(name), &r);
            struct drv_function *f = !r.status && r.len >= 4 ? calloc(1, sizeof *f) : NULL;
            if (f) {
                f->magic = FUNCTION_MAGIC;
                f->id = get32(r.data);
                f->module = m;
                f->name = m->kernel_names[i];
                m->functions[i] = f;
            }
            reply_free(&r);
        }
        if (m->functions[i]) {
            *out = m->functions[i];
            st = CUDA_SUCCESS;
        }
        break;
    }
    UNLOCK();
    return st;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    DRV_CHILD_GUARD();
    return function(m, name, f);
}
EXPORT CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name)
{
    DRV_CHILD_GUARD();
    return function(lib, name, k);
}

static CUresult count(unsigned *n, struct drv_module *m)
{
    DRV_INIT();
    if (!n)
        return CUDA_ERROR_INVALID_VALUE;
    if (!module_ok(m))
        return CUDA_ERROR_INVALID_HANDLE;
    *n = m->nkernels;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuModuleGetFunctionCount(unsigned *n, CUmodule m) { DRV_CHILD_GUARD(); return count(n, m); }
EXPORT CUresult cuLibraryGetKernelCount(unsigned *n, CUlibrary lib) { DRV_CHILD_GUARD(); return count(n, lib); }

static CUresult enumerate(struct drv_function **out, unsigned n, struct drv_module *m)
{
    unsigned have;
    CUresult st = count(&have, m);
    if (st)
        return st;
    if (!out || n > have)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < n && !st; i++)
        st = function(m, m->kernel_names[i], &out[i]);
    return st;
}
EXPORT CUresult cuModuleEnumerateFunctions(CUfunction *fs, unsigned n, CUmodule m)
{
    DRV_CHILD_GUARD();
    return enumerate(fs, n, m);
}
EXPORT CUresult cuLibraryEnumerateKernels(CUkernel *ks, unsigned n, CUlibrary lib)
{
    DRV_CHILD_GUARD();
    return enumerate(ks, n, lib);
}

EXPORT CUresult cuLibraryGetModule(CUmodule *m, CUlibrary lib)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (!m)
        return CUDA_ERROR_INVALID_VALUE;
    if (!module_ok(lib))
        return CUDA_ERROR_INVALID_HANDLE;
    *m = lib;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuKernelGetFunction(CUfunction *f, CUkernel k)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (!f)
        return CUDA_ERROR_INVALID_VALUE;
    if (!drv_function_of(k))
        return CUDA_ERROR_INVALID_HANDLE;
    *f = k;
    return CUDA_SUCCESS;
}

static CUresult owner(struct drv_module **m, void *handle)
{
    DRV_INIT();
    struct drv_function *f = drv_function_of(handle);
    if (!m)
        return CUDA_ERROR_INVALID_VALUE;
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    *m = f->module;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncGetModule(CUmodule *m, CUfunction f) { DRV_CHILD_GUARD(); return owner(m, f); }
EXPORT CUresult cuKernelGetLibrary(CUlibrary *lib, CUkernel k) { DRV_CHILD_GUARD(); return owner(lib, k); }

static CUresult name_of(const char **name, void *handle)
{
    DRV_INIT();
    struct drv_function *f = drv_function_of(handle);
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    *name = f->name;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncGetName(const char **name, CUfunction f) { DRV_CHILD_GUARD(); return name_of(name, f); }
EXPORT CUresult cuKernelGetName(const char **name, CUkernel k) { DRV_CHILD_GUARD(); return name_of(name, k); }

EXPORT CUresult cuFuncIsLoaded(int *state, CUfunction f)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (!state)
        return CUDA_ERROR_INVALID_VALUE;
    if (!drv_function_of(f))
        return CUDA_ERROR_INVALID_HANDLE;
    *state = 1;                            /* CU_FUNCTION_LOADING_STATE_LOADED */
    return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncLoad(CUfunction f)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    return drv_function_of(f) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
EXPORT CUresult cuModuleGetLoadingMode(int *mode)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (!mode)
        return CUDA_ERROR_INVALID_VALUE;
    *mode = 1;                             /* CU_MODULE_EAGER_LOADING */
    return CUDA_SUCCESS;
}

/* the parameter layout and attributes of f (asked once) */
CUresult drv_function_info(struct drv_function *f, uint32_t *nparams, uint32_t *nbytes,
                           const uint32_t **offsets, const uint32_t **sizes,
                           const int64_t **attrs)
{
    LOCK();
    CUresult st = CUDA_SUCCESS;
    if (!f->have_info) {
        char req[4];
        put32(req, f->id);
        struct reply r;
        shim_call(OP_KERNEL_INFO, req, sizeof req, NULL, 0, &r);
        st = r.status ? drv_from_runtime(r.status) : r.len < 16 ? CUDA_ERROR_UNKNOWN : 0;
        uint32_t n = st ? 0 : get32(r.data), nattr = st ? 0 : get32(r.data + 8);
        if (!st && r.len < 16 + 8ull * n + 8ull * nattr)
            st = CUDA_ERROR_UNKNOWN;
        if (!st) {
            f->nparams = n;
            f->param_bytes = get32(r.data + 4);
            f->offsets = calloc(n + 1, 4);
            f->sizes = calloc(n + 1, 4);
            for (uint32_t i = 0; i < n; i++) {
                f->offsets[i] = get32(r.data + 16 + 8 * i);
                f->sizes[i] = get32(r.data + 20 + 8 * i);
            }
            for (uint32_t i = 0; i < nattr && i < KATTR_COUNT; i++)
                f->attrs[i] = (int64_t)get64(r.data + 16 + 8 * n + 8 * i);
            f->have_info = 1;
        }
        reply_free(&r);
    }
    if (!st) {
        *nparams = f->nparams;
        *nbytes = f->param_bytes;
        *offsets = f->offsets;
        *sizes = f->sizes;
        *attrs = f->attrs;
    }
    UNLOCK();
    return st;
}

static CUresult param_info(void *handle, size_t index, size_t *offset, size_t *size)
{
    DRV_INIT();
    struct drv_function *f = drv_function_of(handle);
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    uint32_t n, nb;
    const uint32_t *offs, *sizes;
    const int64_t *attrs;
    CUresult st = drv_function_info(f, &n, &nb, &offs, &sizes, &attrs);
    if (st)
        return st;
    if (index >= n)
        return CUDA_ERROR_INVALID_VALUE;
    if (offset)
        *offset = offs[index];
    if (size)
        *size = sizes[index];
    return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t *offset, size_t *size)
{
    DRV_CHILD_GUARD();
    return param_info(f, i, offset, size);
}
EXPORT CUresult cuKernelGetParamInfo(CUkernel k, size_t i, size_t *offset, size_t *size)
{
    DRV_CHILD_GUARD();
    return param_info(k, i, offset, size);
}

/* ----------------------------------------------------------- globals */
static CUresult global(CUdeviceptr *dptr, size_t *bytes, struct drv_module *m, const char *name)
{
    DRV_INIT();
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!module_ok(m))
        return CUDA_ERROR_INVALID_HANDLE;
    LOCK();
    char req[4];
    put32(req, m->id);
    struct reply r;
    shim_call(OP_SYMBOL, req, sizeof req, name, strlen(name), &r);
    CUresult st = r.status ? drv_from_runtime(r.status) : r.len < 24 ? CUDA_ERROR_UNKNOWN : 0;
    uint32_t n = st ? 0 : get32(r.data + 16), segs[8];
    if (!st)
        st = n <= 8 ? drv_from_runtime(map_reply_mappings(&r, 24, (int)n, segs)) : CUDA_ERROR_UNKNOWN;
    if (!st) {
        uint64_t a = get64(r.data), size = get64(r.data + 8);
        for (uint32_t i = 0; i < n; i++) {   /* a segment ptxc had to renumber */
            uint32_t asked = get32(r.data + 24 + MAPPING_BYTES * i);
            if ((a >> 32) == asked)
                a = ((uint64_t)segs[i] << 32) | (a & 0xffffffffull);
        }
        if (dptr)
            *dptr = a;
        if (bytes)
            *bytes = size;
    }
    reply_free(&r);
    UNLOCK();
    return st;
}
EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr *d, size_t *n, CUmodule m, const char *name)
{
    DRV_CHILD_GUARD();
    return global(d, n, m, name);
}
EXPORT CUresult cuLibraryGetGlobal(CUdeviceptr *d, size_t *n, CUlibrary lib, const char *name)
{
    DRV_CHILD_GUARD();
    return global(d, n, lib, name);
}

/* a __managed__ variable (NVIDIA's static runtime stores its address where
 * the host code reads the variable): ptxc's device memory is the host's at
 * the same address, so it is the global itself, as __cudaRegisterManagedVar
 * makes it for the shared runtime (register.c) */
EXPORT CUresult cuLibraryGetManaged(CUdeviceptr *d, size_t *n, CUlibrary lib, const char *name)
{
    DRV_CHILD_GUARD();
    return global(d, n, lib, name);
}
