/* Fat binaries, kernels and module variables: what nvcc's host stubs call.
 *
 * A static constructor per .cu file calls __cudaRegisterFatBinary (the
 * embedded fat binary goes to ptxc, which decodes its PTX when a kernel or
 * variable of it is first used), then __cudaRegisterFunction per kernel and
 * __cudaRegisterVar / __cudaRegisterManagedVar per variable. A launch
 * (`k<<<g, b, s, st>>>(args)`) is __cudaPushCallConfiguration, then the stub's
 * __cudaPopCallConfiguration, __cudaGetKernel and __cudaLaunchKernel with
 * args[i] pointing at the i-th argument; the shim packs the argument bytes
 * with the parameter layout ptxc sends (the kernel's PTX .param list).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

#define FATBINC_MAGIC 0x466243b1u
#define FATBIN_MAGIC 0xba55ed50u

struct module { uint32_t id; };

struct kernel {
    const void *host_fun;
    uint32_t id;
    char *name;
    int have_info;
    uint32_t nparams, param_bytes;
    uint32_t *offsets, *sizes;
    int64_t attrs[KATTR_COUNT];
};

struct var {
    const void *host_var;
    void **managed_ptr;       /* __managed__: where the host code finds the variable */
    struct module *module;
    char *name;
    size_t size;
    uint64_t address;         /* 0 until ptxc placed it */
};

static struct kernel *kernels;
static size_t nkernels, cap_kernels;
static struct var *vars;
static size_t nvars, cap_vars;

static void *grow(void *p, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return p;
    *cap = *cap ? *cap * 2 : 32;
    p = realloc(p, *cap * elem);
    if (!p) {
        fprintf(stderr, "ptxc: out of memory\n");
        shim_fatal(PTXC_EXIT_NO_PTXC);
    }
    return p;
}

/* -------------------------------------------------------- fat binaries */
/* the shared library that holds addr, NULL for the executable itself (a
 * library's SASS-only kernels are then named by the library: modules.py) */
static const char *library_of(const void *addr)
{
    Dl_info info;
    static char exe[4096];
    if (!exe[0] && readlink("/proc/self/exe", exe, sizeof exe - 1) < 0)
        exe[0] = '?';
    if (!dladdr(addr, &info) || !info.dli_fname || !info.dli_fname[0])
        return NULL;
    char real[4096];
    const char *path = realpath(info.dli_fname, real) ? real : info.dli_fname;
    return strcmp(path, exe) == 0 ? NULL : info.dli_fname;
}

/* the bytes of the fat binary container at data (0: none) */
static uint64_t fatbin_size(const char *data)
{
    if (!data || get32(data) != FATBIN_MAGIC)
        return 0;
    uint16_t hs;
    memcpy(&hs, data + 6, 2);
    return hs + get64(data + 8);
}

/* A wrapper of version 2 is nvlink's (-rdc=true): its fat binary holds the
 * linked SASS only, and its 4th field the NULL-ended list of the objects'
 * own fat binaries, which keep their PTX (crt/link.stub). They follow the
 * linked one in the request (runtime/rdc.py links their PTX). */
static const char *const *prelinked(const uint32_t *w)
{
    if (!w || w[0] != FATBINC_MAGIC || w[1] != 2)
        return NULL;
    return *(const char *const *const *)((const char *)w + 16);
}

EXPORT void **__cudaRegisterFatBinary(void *wrapper)
{
    struct module *m = calloc(1, sizeof *m);
    if (shim_child)              /* a library loaded in a forked child: no kernels */
        return (void **)m;
    const uint32_t *w = wrapper;
    const char *data = NULL;
    if (w && w[0] == FATBINC_MAGIC)
        data = *(const char *const *)((const char *)wrapper + 8);
    uint64_t size = fatbin_size(data), total = size;
    const char *const *objects = prelinked(w);
    for (size_t i = 0; objects && objects[i]; i++)
        total += fatbin_size(objects[i]);
    char req[16];
    put64(req, (uint64_t)(uintptr_t)wrapper);
    put32(req + 8, w && w[0] == FATBINC_MAGIC ? w[1] : 0);   /* 2: linked with -rdc=true */
    const char *lib = wrapper ? library_of(wrapper) : NULL;
    size_t nlib = lib && data ? strlen(lib) : 0;
    char *body = total != size || nlib ? malloc(total + nlib + 1) : NULL;
    put32(req + 12, (uint32_t)nlib);     /* the library's path follows */
    if (body) {
        memcpy(body, data, size);
        char *q = body + size;
        for (size_t i = 0; objects && objects[i]; i++) {
            uint64_t n = fatbin_size(objects[i]);
            memcpy(q, objects[i], n);
            q += n;
        }
        memcpy(q, lib, nlib);
    }
    struct reply r;
    shim_call(OP_REGISTER_FATBIN, req, sizeof req, body ? body : data, total + nlib, &r);
    free(body);
    m->id = r.len >= 4 ? get32(r.data) : 0;
    reply_free(&r);
    return (void **)m;
}

EXPORT void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun,
                                   const char *name, int thread_limit, void *tid, void *bid,
                                   void *bdim, void *gdim, int *wsize)
{
    (void)device_fun; (void)thread_limit; (void)tid; (void)bid; (void)bdim; (void)gdim; (void)wsize;
    struct module *m = (struct module *)handle;
    if (shim_child)
        return;
    LOCK();
    kernels = grow(kernels, &cap_kernels, nkernels, sizeof *kernels);
    struct kernel *k = &kernels[nkernels++];
    memset(k, 0, sizeof *k);
    k->host_fun = host_fun;
    k->name = strdup(name ? name : "");
    char req[12];
    put32(req, m ? m->id : 0);
    put64(req + 4, (uint64_t)(uintptr_t)host_fun);
    struct reply r;
    shim_call(OP_REGISTER_FUNCTION, req, sizeof req, k->name, strlen(k->name), &r);
    k->id = r.len >= 4 ? get32(r.data) : 0;
    reply_free(&r);
    UNLOCK();
}

static void add_var(void **handle, const void *host_var, void **managed_ptr, const char *name,
                    size_t size)
{
    if (shim_child)
        return;
    LOCK();
    vars = grow(vars, &cap_vars, nvars, sizeof *vars);
    struct var *v = &vars[nvars++];
    memset(v, 0, sizeof *v);
    v->host_var = host_var;
    v->managed_ptr = managed_ptr;
    v->module = (struct module *)handle;
    v->name = strdup(name ? name : "");
    v->size = size;
    UNLOCK();
}

EXPORT void __cudaRegisterVar(void **handle, char *host_var, char *device_address,
                              const char *name, int ext, size_t size, int constant, int global)
{
    (void)device_address; (void)ext; (void)constant; (void)global;
    add_var(handle, host_var, NULL, name, size);
}

EXPORT void __cudaRegisterManagedVar(void **handle, void **host_ptr_address, char *device_address,
                                     const char *name, int ext, size_t size, int constant,
                                     int global)
{
    (void)device_address; (void)ext; (void)constant; (void)global;
    add_var(handle, host_ptr_address, host_ptr_address, name, size);
}

/* place variable v (ptxc maps its module's memory here); 0 or a cudaError_t */
static cudaError_t resolve_var(struct var *v)
{
    if (v->address)
        return cudaSuccess;
    if (shim_dead())
        return cudaErrorCudartUnloading;
    char req[4];
    put32(req, v->module ? v->module->id : 0);
    struct reply r;
    shim_call(OP_SYMBOL, req, sizeof req, v->name, strlen(v->name), &r);
    cudaError_t st = r.status;
    if (!st && r.len < 24)
        st = cudaErrorUnknown;
    if (!st) {
        uint32_t n = get32(r.data + 16), segs[8];
        st = n <= 8 ? map_reply_mappings(&r, 24, (int)n, segs) : cudaErrorUnknown;
        if (!st) {
            uint64_t a = get64(r.data);
            for (uint32_t i = 0; i < n; i++)     /* a segment ptxc had to renumber */
                if (a >> 32 == get32(r.data + 24 + MAPPING_BYTES * i))
                    a = (uint64_t)segs[i] << 32 | (a & 0xffffffffu);
            v->address = a;
            v->size = get64(r.data + 8);
        }
    }
    reply_free(&r);
    return st;
}

EXPORT void __cudaRegisterFatBinaryEnd(void **handle)
{
    if (shim_child)
        return;
    LOCK();
    for (size_t i = 0; i < nvars; i++) {
        struct var *v = &vars[i];
        if (v->module == (struct module *)handle && v->managed_ptr) {
            if (resolve_var(v) == cudaSuccess)
                *v->managed_ptr = (void *)(uintptr_t)v->address;
        }
    }
    UNLOCK();
}

EXPORT void __cudaUnregisterFatBinary(void **handle) { (void)handle; }
EXPORT char __cudaInitModule(void **handle) { (void)handle; return 1; }

/* ------------------------------------------------------------ symbols */
static struct var *find_var(const void *symbol)
{
    for (size_t i = 0; i < nvars; i++)
        if (vars[i].host_var == symbol)
            return &vars[i];
    return NULL;
}

/* the device address of `symbol` + offset, checked for n bytes */
static cudaError_t symbol_range(const void *symbol, size_t offset, size_t n, char **out)
{
    struct var *v = find_var(symbol);
    if (!v)
        return cudaErrorInvalidSymbol;
    cudaError_t st = resolve_var(v);
    if (st)
        return st;
    if (offset > v->size || n > v->size - offset)
        return cudaErrorInvalidValue;
    *out = (char *)(uintptr_t)v->address + offset;
    return cudaSuccess;
}

cudaError_t shim_copy(void *dst, const void *src, size_t n, int kind);

static cudaError_t to_symbol(const void *symbol, const void *src, size_t n, size_t offset, int kind)
{
    if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    LOCK();
    char *dst = NULL;
    cudaError_t st = symbol_range(symbol, offset, n, &dst);
    if (!st)
        st = shim_copy(dst, src, n, kind);
    UNLOCK();
    return st;
}

static cudaError_t from_symbol(void *dst, const void *symbol, size_t n, size_t offset, int kind)
{
    if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    LOCK();
    char *src = NULL;
    cudaError_t st = symbol_range(symbol, offset, n, &src);
    if (!st)
        st = shim_copy(dst, src, n, kind);
    UNLOCK();
    return st;
}

EXPORT cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t n, size_t offset,
                                      int kind)
{
    CHILD_GUARD();
    cudaError_t e = device_sync();      /* blocking (devout.c) */
    return set_error(e ? e : to_symbol(symbol, src, n, offset, kind));
}
EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t n,
                                           size_t offset, int kind, cudaStream_t s)
{
    CHILD_GUARD();
    int c = capture_state(s);     /* not recorded by stream capture: refused there */
    if (c)
        return set_error(c < 0 ? capture_refuse(s) : c);
    return set_error(to_symbol(symbol, src, n, offset, kind));
}
EXPORT cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t n, size_t offset,
                                        int kind)
{
    CHILD_GUARD();
    cudaError_t e = device_sync();      /* blocking (devout.c) */
    return set_error(e ? e : from_symbol(dst, symbol, n, offset, kind));
}
EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t n,
                                             size_t offset, int kind, cudaStream_t s)
{
    CHILD_GUARD();
    int c = capture_state(s);     /* not recorded by stream capture: refused there */
    if (c)
        return set_error(c < 0 ? capture_refuse(s) : c);
    return set_error(from_symbol(dst, symbol, n, offset, kind));
}

EXPORT cudaError_t cudaGetSymbolAddress(void **p, const void *symbol)
{
    CHILD_GUARD();
    if (!p)
        return set_error(cudaErrorInvalidValue);
    LOCK();
    char *a = NULL;
    cudaError_t st = symbol_range(symbol, 0, 0, &a);
    UNLOCK();
    if (!st)
        *p = a;
    return set_error(st);
}

EXPORT cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol)
{
    CHILD_GUARD();
    if (!size)
        return set_error(cudaErrorInvalidValue);
    LOCK();
    char *a = NULL;
    cudaError_t st = symbol_range(symbol, 0, 0, &a);
    struct var *v = find_var(symbol);
    if (!st)
        *size = v->size;
    UNLOCK();
    return set_error(st);
}

/* ------------------------------------------------------------ kernels */
static struct kernel *find_kernel(const void *host_fun)
{
    for (size_t i = 0; i < nkernels; i++)
        if (kernels[i].host_fun == host_fun)
            return &kernels[i];
    return NULL;
}

/* the parameter layout and attributes of k (asked once); 0 or a cudaError_t */
static cudaError_t kernel_info(struct kernel *k)
{
    if (k->have_info)
        return cudaSuccess;
    if (shim_dead())
        return cudaErrorCudartUnloading;
    char req[4];
    put32(req, k->id);
    struct reply r;
    shim_call(OP_KERNEL_INFO, req, sizeof req, NULL, 0, &r);
    cudaError_t st = r.status;
    if (!st && r.len < 16)
        st = cudaErrorUnknown;
    if (!st) {
        uint32_t n = get32(r.data), nattr = get32(r.data + 8);
        if (r.len < 16 + 8ull * n + 8ull * nattr) {
            st = cudaErrorUnknown;
        } else {
            k->nparams = n;
            k->param_bytes = get32(r.data + 4);
            k->offsets = calloc(n + 1, 4);
            k->sizes = calloc(n + 1, 4);
            for (uint32_t i = 0; i < n; i++) {
                k->offsets[i] = get32(r.data + 16 + 8 * i);
                k->sizes[i] = get32(r.data + 20 + 8 * i);
            }
            for (uint32_t i = 0; i < nattr && i < KATTR_COUNT; i++)
                k->attrs[i] = (int64_t)get64(r.data + 16 + 8 * n + 8 * i);
            k->have_info = 1;
        }
    }
    reply_free(&r);
    return st;
}

/* flags: LAUNCH_COOPERATIVE (every CTA resident at once: grid-wide sync) */
static cudaError_t launch_flags(struct kernel *k, dim3 grid, dim3 block, void **args,
                                size_t shared, cudaStream_t stream, uint32_t flags)
{
    if (!k)
        return cudaErrorInvalidDeviceFunction;
    int c = capture_state(stream);    /* a capturing stream records the launch (capture.c) */
    if (c)                            /* (no cooperative kernel nodes: refused) */
        return c > 0 ? c : flags ? capture_refuse(stream)
                                 : capture_kernel(stream, k->host_fun, grid, block, args, shared);
    if (shim_dead())
        return cudaErrorCudartUnloading;
    LOCK();
    device_flush();          /* a launch flushes the earlier launches' device output */
    if (device_faulted()) {  /* a GPU whose context faulted runs nothing more */
        UNLOCK();
        return device_sticky();
    }
    cudaError_t st = kernel_info(k);
    char *params = NULL;
    if (!st && k->nparams && !args)
        st = cudaErrorInvalidValue;
    if (!st) {
        params = calloc(1, k->param_bytes + 1);
        for (uint32_t i = 0; i < k->nparams; i++)
            if (k->offsets[i] + (uint64_t)k->sizes[i] <= k->param_bytes)
                memcpy(params + k->offsets[i], args[i], k->sizes[i]);
        char req[56];
        memset(req, 0, sizeof req);
        put32(req, k->id);
        put32(req + 4, grid.x);
        put32(req + 8, grid.y);
        put32(req + 12, grid.z);
        put32(req + 16, block.x);
        put32(req + 20, block.y);
        put32(req + 24, block.z);
        put32(req + 28, flags);
        put64(req + 32, shared);
        put64(req + 40, stream_id(stream));
        put64(req + 48, graph_launch_number());   /* 0 unless a graph node (graph_exec.c) */
        fflush(NULL);   /* the application's output so far comes before ptxc's */
        struct reply r;
        shim_call(OP_LAUNCH, req, sizeof req, params, k->param_bytes, &r);
        st = r.status;
        if (!st) {
            device_launch_result(r.data, r.len);
            device_clock_launch(r.data, r.len);     /* stream.c: the modelled device clock */
        }
        reply_free(&r);
        const char *blocking = getenv("CUDA_LAUNCH_BLOCKING");
        if (blocking && blocking[0] == '1')
            device_flush();
    }
    free(params);
    UNLOCK();
    return st;
}

static cudaError_t launch(struct kernel *k, dim3 grid, dim3 block, void **args, size_t shared,
                          cudaStream_t stream)
{
    return launch_flags(k, grid, block, args, shared, stream, 0);
}

/* for graph.c: the parameter layout of the kernel whose host stub is func */
cudaError_t kernel_param_layout(const void *func, uint32_t *nparams, uint32_t *nbytes,
                                const uint32_t **offsets, const uint32_t **sizes)
{
    LOCK();
    struct kernel *k = find_kernel(func);
    cudaError_t st = k ? kernel_info(k) : cudaErrorInvalidDeviceFunction;
    if (!st) {
        *nparams = k->nparams;
        *nbytes = k->param_bytes;
        *offsets = k->offsets;
        *sizes = k->sizes;
    }
    UNLOCK();
    return st;
}

EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *out, const void *host_fun)
{
    CHILD_GUARD();
    LOCK();
    struct kernel *k = find_kernel(host_fun);
    UNLOCK();
    if (!out || !k)
        return set_error(cudaErrorInvalidDeviceFunction);
    *out = k;
    return cudaSuccess;
}

EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 grid, dim3 block, void **args,
                                      size_t shared, cudaStream_t stream)
{
    CHILD_GUARD();
    return set_error(launch((struct kernel *)k, grid, block, args, shared, stream));
}

EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 grid, dim3 block, void **args,
                                           size_t shared, cudaStream_t stream)
{
    CHILD_GUARD();
    return set_error(launch((struct kernel *)k, grid, block, args, shared, stream));
}

EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
                                    size_t shared, cudaStream_t stream)
{
    CHILD_GUARD();
    LOCK();
    struct kernel *k = find_kernel(func);
    UNLOCK();
    return set_error(launch(k, grid, block, args, shared, stream));
}

EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 grid, dim3 block, void **args,
                                         size_t shared, cudaStream_t stream)
{
    CHILD_GUARD();
    return cudaLaunchKernel(func, grid, block, args, shared, stream);
}

/* A cooperative launch: every CTA must be resident at once, so the grid may
 * have at most (blocks per SM by the occupancy rules) x SMs CTAs
 * (cudaErrorCooperativeLaunchTooLarge otherwise), as the runtime checks. */
EXPORT cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 grid, dim3 block,
                                               void **args, size_t shared, cudaStream_t stream)
{
    CHILD_GUARD();
    int per_sm = 0;
    uint64_t threads = (uint64_t)block.x * block.y * block.z;
    cudaError_t st = threads && threads <= 0x7fffffff
        ? cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&per_sm, func, (int)threads,
                                                                 shared, 0)
        : cudaErrorInvalidConfiguration;
    if (st)
        return set_error(st);
    uint64_t ctas = (uint64_t)grid.x * grid.y * grid.z;
    if (ctas > (uint64_t)per_sm * gpu_info()[GPU_SM_COUNT])
        return set_error(cudaErrorCooperativeLaunchTooLarge);
    LOCK();
    struct kernel *k = find_kernel(func);
    UNLOCK();
    return set_error(launch_flags(k, grid, block, args, shared, stream, LAUNCH_COOPERATIVE));
}

EXPORT cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 grid, dim3 block,
                                                    void **args, size_t shared,
                                                    cudaStream_t stream)
{
    CHILD_GUARD();
    return cudaLaunchCooperativeKernel(func, grid, block, args, shared, stream);
}

/* ------------------------------------------------ call configuration */
struct config { dim3 grid, block; size_t shared; cudaStream_t stream; };
static __thread struct config config_stack[16];
static __thread int config_depth;

EXPORT unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, cudaStream_t s)
{
    if (shim_child)              /* <<<...>>> in a forked child: the launch is skipped */
        return child_error();
    if (config_depth >= 16)
        return 1;
    config_stack[config_depth++] = (struct config){ grid, block, shared, s };
    return 0;
}

EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void *stream)
{
    CHILD_GUARD();
    if (config_depth <= 0)
        return set_error(cudaErrorMissingConfiguration);
    struct config c = config_stack[--config_depth];
    *grid = c.grid;
    *block = c.block;
    *shared = c.shared;
    *(cudaStream_t *)stream = c.stream;
    return cudaSuccess;
}

/* --------------------------------------------------- kernel attributes */
EXPORT cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *a, const void *func)
{
    CHILD_GUARD();
    LOCK();
    struct kernel *k = find_kernel(func);
    cudaError_t st = !a ? cudaErrorInvalidValue : !k ? cudaErrorInvalidDeviceFunction
                                                     : kernel_info(k);
    if (!st) {
        memset(a, 0, sizeof *a);
        a->sharedSizeBytes = (size_t)k->attrs[KATTR_SHARED];
        a->constSizeBytes = (size_t)k->attrs[KATTR_CONST];
        a->localSizeBytes = (size_t)k->attrs[KATTR_LOCAL];
        a->maxThreadsPerBlock = (int)k->attrs[KATTR_MAX_THREADS];
        a->numRegs = (int)k->attrs[KATTR_NUM_REGS];
        a->ptxVersion = (int)k->attrs[KATTR_PTX_VERSION];
        a->binaryVersion = (int)k->attrs[KATTR_BINARY_VERSION];
        a->maxDynamicSharedSizeBytes =
            (int)(gpu_info()[GPU_SHARED_PER_BLOCK_OPTIN] - (uint64_t)k->attrs[KATTR_SHARED]);
        a->preferredShmemCarveout = -1;
    }
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaFuncGetName(const char **name, const void *func)
{
    CHILD_GUARD();
    LOCK();
    struct kernel *k = find_kernel(func);
    UNLOCK();
    if (!name || !k)
        return set_error(!name ? cudaErrorInvalidValue : cudaErrorInvalidDeviceFunction);
    *name = k->name;
    return cudaSuccess;
}

static cudaError_t known_func(const void *func)
{
    LOCK();
    struct kernel *k = find_kernel(func);
    UNLOCK();
    return set_error(k ? cudaSuccess : cudaErrorInvalidDeviceFunction);
}

EXPORT cudaError_t cudaFuncSetAttribute(const void *func, int attr, int value)
{
    CHILD_GUARD();
    (void)attr; (void)value;
    return known_func(func);
}
EXPORT cudaError_t cudaFuncSetCacheConfig(const void *func, int config)
{
    CHILD_GUARD();
    (void)config;
    return known_func(func);
}
EXPORT cudaError_t cudaFuncSetSharedMemConfig(const void *func, int config)
{
    CHILD_GUARD();
    (void)config;
    return known_func(func);
}

/* resident blocks per SM: the tightest of the thread, block, shared memory
 * and register limits of the GPU model (CUDA's occupancy rules without the
 * allocation granularities) */
/* The rules of cudaOccMaxActiveBlocksPerMultiprocessor (cuda_occupancy.h) for
 * compute capability 7.x-9.x, the models the shim presents; ptxc/occupancy.py
 * is the same computation and docs/gpus.md states it. */
static uint64_t round_up_u64(uint64_t x, uint64_t unit) { return (x + unit - 1) / unit * unit; }

uint64_t occupancy_blocks(const uint64_t *g, uint64_t block_size, uint64_t regs,
                                 uint64_t smem)
{
    uint64_t warps = (block_size + 31) / 32;
    if (block_size > g[GPU_MAX_THREADS_PER_BLOCK])
        return 0;
    uint64_t n = g[GPU_MAX_BLOCKS_PER_SM];
    uint64_t by_warps = g[GPU_MAX_THREADS_PER_SM] / 32 / warps;
    n = by_warps < n ? by_warps : n;
    /* shared memory: (static + dynamic + reserved) in 256 B (cc 7) or 128 B units */
    uint64_t unit = g[GPU_MAJOR] == 7 ? 256 : 128;
    uint64_t alloc = round_up_u64(smem + g[GPU_RESERVED_SHARED_PER_BLOCK], unit);
    uint64_t limit = smem > g[GPU_SHARED_PER_BLOCK] ? g[GPU_SHARED_PER_BLOCK_OPTIN]
                                                    : g[GPU_SHARED_PER_BLOCK];
    if (g[GPU_MAJOR] >= 8)
        limit += g[GPU_RESERVED_SHARED_PER_BLOCK];
    if (alloc > limit)
        return 0;
    if (alloc && g[GPU_SHARED_PER_SM] / alloc < n)
        n = g[GPU_SHARED_PER_SM] / alloc;
    /* registers: 256-register units per warp, the file split in 4 sub-partitions */
    uint64_t per_warp = round_up_u64(regs * 32, 256);
    if (per_warp * round_up_u64(warps, 4) > g[GPU_REGS_PER_BLOCK])
        return 0;
    if (per_warp) {
        uint64_t by_regs = (g[GPU_REGS_PER_SM] / 4 / per_warp) * 4 / warps;
        n = by_regs < n ? by_regs : n;
    }
    return n;
}

EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int *blocks, const void *func, int block_size, size_t dyn_shared, unsigned flags)
{
    CHILD_GUARD();
    (void)flags;
    LOCK();
    struct kernel *k = find_kernel(func);
    cudaError_t st = !blocks || block_size <= 0 ? cudaErrorInvalidValue
                   : !k ? cudaErrorInvalidDeviceFunction : kernel_info(k);
    if (!st)
        *blocks = (int)occupancy_blocks(gpu_info(), (uint64_t)block_size,
                                        (uint64_t)k->attrs[KATTR_NUM_REGS],
                                        (uint64_t)k->attrs[KATTR_SHARED] + dyn_shared);
    UNLOCK();
    return set_error(st);
}

EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, const void *func,
                                                                 int block_size, size_t dyn_shared)
{
    CHILD_GUARD();
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(blocks, func, block_size,
                                                                  dyn_shared, 0);
}

ALIAS(cudaMemcpyToSymbol_ptds, cudaMemcpyToSymbol);
ALIAS(cudaMemcpyFromSymbol_ptds, cudaMemcpyFromSymbol);
ALIAS(cudaMemcpyToSymbolAsync_ptsz, cudaMemcpyToSymbolAsync);
ALIAS(cudaMemcpyFromSymbolAsync_ptsz, cudaMemcpyFromSymbolAsync);
