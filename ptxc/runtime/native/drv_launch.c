/* Launches, function attributes and occupancy of the driver API.
 *
 * Follows the CUDA Driver API reference, "Execution Control" and
 * "Occupancy". A launch is the runtime half's OP_LAUNCH on ptxc's kernel
 * id: synchronous, measured, its printf output and device fault handed to
 * devout.c like a runtime launch. Arguments come from kernelParams
 * (kernelParams[i] points at argument i) or from the `extra` buffer
 * (CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE), packed at the offsets of the
 * PTX .param list. Occupancy is the runtime half's computation
 * (register.c's occupancy_blocks, the rules of ptxc.gpus.occupancy).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

enum { FA_MAX_THREADS = 0, FA_SHARED = 1, FA_CONST = 2, FA_LOCAL = 3, FA_NUM_REGS = 4,
       FA_PTX_VERSION = 5, FA_BINARY_VERSION = 6, FA_CACHE_MODE_CA = 7, FA_MAX_DYN_SHARED = 8,
       FA_CARVEOUT = 9, FA_MAX = 16 };

/* what cuFuncSetAttribute set, per function (few functions set any) */
struct set_attr { struct set_attr *next; void *f; int attr; int value; };
static struct set_attr *set_attrs;

static int *set_value(void *f, int attr)
{
    for (struct set_attr *s = set_attrs; s; s = s->next)
        if (s->f == f && s->attr == attr)
            return &s->value;
    return NULL;
}

/* the largest dynamic shared memory a launch of f may ask for */
static uint64_t max_dynamic(void *f, const int64_t *attrs)
{
    int *v = set_value(f, FA_MAX_DYN_SHARED);
    uint64_t per_block = gpu_info()[GPU_SHARED_PER_BLOCK];
    uint64_t stat = (uint64_t)attrs[KATTR_SHARED];
    return v ? (uint64_t)*v : per_block > stat ? per_block - stat : 0;
}

/* ---------------------------------------------------------------- launch */
static CUresult pack(char *params, uint32_t n, uint32_t nbytes, const uint32_t *offs,
                     const uint32_t *sizes, void **args, void **extra)
{
    if (args) {
        for (uint32_t i = 0; i < n; i++)
            if (offs[i] + (uint64_t)sizes[i] <= nbytes)
                memcpy(params + offs[i], args[i], sizes[i]);
        return CUDA_SUCCESS;
    }
    const void *buf = NULL;
    size_t size = 0;
    for (int i = 0; extra && extra[i] != CU_LAUNCH_PARAM_END && i < 64; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            buf = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1])
            size = *(size_t *)extra[i + 1];
        else
            return CUDA_ERROR_INVALID_VALUE;
    }
    if (n && (!buf || size < nbytes))
        return CUDA_ERROR_INVALID_VALUE;
    if (buf)
        memcpy(params, buf, nbytes);
    return CUDA_SUCCESS;
}

static __thread const void *launch_caller;  /* cuLaunchKernel's return address */

static CUresult send_launch(struct drv_function *f, const unsigned *g, const unsigned *b,
                            unsigned shared, CUstream s, const char *params, uint32_t nbytes,
                            uint32_t flags)
{
    char req[56];
    memset(req, 0, sizeof req);
    put32(req, drv_function_id(f));
    for (int i = 0; i < 3; i++) {
        put32(req + 4 + 4 * i, g[i]);
        put32(req + 16 + 4 * i, b[i]);
    }
    put32(req + 28, flags);
    put64(req + 32, shared);
    put64(req + 40, stream_id(s));
    put64(req + 48, graph_launch_number());
    fflush(NULL);                     /* the application's output so far comes before ptxc's */
    struct reply r;
    shim_call(OP_LAUNCH, req, sizeof req, params, nbytes, &r);
    CUresult st = drv_from_runtime(r.status);
    if (r.status == cudaErrorInvalidConfiguration && drv_static_runtime(launch_caller))
        st = (CUresult)cudaErrorInvalidConfiguration;   /* see drv_static_runtime */
    if (!r.status) {
        device_launch_result(r.data, r.len);
        device_clock_launch(r.data, r.len);     /* events time driver launches too (stream.c) */
    }
    reply_free(&r);
    return st;
}

static CUresult launch(void *handle, const unsigned *g, const unsigned *b, unsigned shared,
                       CUstream s, void **args, void **extra, uint32_t flags)
{
    CUresult st = drv_ctx_check();
    if (st)
        return st;
    struct drv_function *f = drv_function_of(handle);
    if (!f || !stream_valid(s))
        return CUDA_ERROR_INVALID_HANDLE;
    if (args && extra)
        return CUDA_ERROR_INVALID_VALUE;
    int c = capture_state(s);
    if (c)
        return c > 0 ? drv_from_runtime(c) : drv_unsupported("cuLaunchKernel in a stream capture");
    if (shim_dead())
        return CUDA_ERROR_DEINITIALIZED;
    LOCK();
    device_flush();                   /* a launch flushes the earlier launches' device output */
    if (device_faulted()) {           /* a faulted context runs nothing more */
        UNLOCK();
        return drv_from_runtime(device_sticky());
    }
    uint32_t n, nbytes;
    const uint32_t *offs, *sizes;
    const int64_t *attrs;
    st = drv_function_info(f, &n, &nbytes, &offs, &sizes, &attrs);
    if (!st && n && !args && !extra)
        st = CUDA_ERROR_INVALID_VALUE;
    if (!st && shared > max_dynamic(f, attrs))
        st = CUDA_ERROR_INVALID_VALUE;
    char *params = st ? NULL : calloc(1, nbytes + 1);
    if (!st && !params)
        st = CUDA_ERROR_OUT_OF_MEMORY;
    if (!st)
        st = pack(params, n, nbytes, offs, sizes, args, extra);
    if (!st)
        st = send_launch(f, g, b, shared, s, params, nbytes, flags);
    free(params);
    UNLOCK();
    const char *blocking = getenv("CUDA_LAUNCH_BLOCKING");
    if (!st && blocking && blocking[0] == '1')
        device_flush();
    return st;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                               unsigned by, unsigned bz, unsigned shared, CUstream s, void **args,
                               void **extra)
{
    DRV_CHILD_GUARD();
    unsigned g[3] = { gx, gy, gz }, b[3] = { bx, by, bz };
    launch_caller = __builtin_return_address(0);
    CUresult st = launch(f, g, b, shared, s, args, extra, 0);
    launch_caller = NULL;
    return st;
}
ALIAS(cuLaunchKernel_ptsz, cuLaunchKernel);

/* every CTA of a cooperative launch must be resident at once */
static CUresult cooperative_fits(void *handle, const unsigned *g, const unsigned *b, unsigned shared)
{
    int per_sm = 0;
    uint64_t threads = (uint64_t)b[0] * b[1] * b[2];
    CUresult st = threads && threads <= 1024
        ? cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, handle, (int)threads, shared)
        : CUDA_ERROR_INVALID_VALUE;
    if (!st && (uint64_t)g[0] * g[1] * g[2] > (uint64_t)per_sm * gpu_info()[GPU_SM_COUNT])
        st = CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
    return st;
}

EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                          unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                          CUstream s, void **args)
{
    DRV_CHILD_GUARD();
    unsigned g[3] = { gx, gy, gz }, b[3] = { bx, by, bz };
    CUresult st = drv_function_of(f) ? cooperative_fits(f, g, b, shared) : CUDA_ERROR_INVALID_HANDLE;
    return st ? st : launch(f, g, b, shared, s, args, NULL, LAUNCH_COOPERATIVE);
}
ALIAS(cuLaunchCooperativeKernel_ptsz, cuLaunchCooperativeKernel);

EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **args, void **extra)
{
    DRV_CHILD_GUARD();
    if (!cfg || (cfg->numAttrs && !cfg->attrs))
        return CUDA_ERROR_INVALID_VALUE;
    uint32_t flags = 0;
    for (unsigned i = 0; i < cfg->numAttrs; i++) {
        const CUlaunchAttribute *a = &cfg->attrs[i];
        if (a->id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && a->value.cooperative)
            flags = LAUNCH_COOPERATIVE;
        else if (a->id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION &&
                 (uint64_t)a->value.clusterDim.x * a->value.clusterDim.y * a->value.clusterDim.z > 1)
            return drv_unsupported("cuLaunchKernelEx with thread block clusters");
    }
    unsigned g[3] = { cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ };
    unsigned b[3] = { cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ };
    if (flags) {
        CUresult st = drv_function_of(f) ? cooperative_fits(f, g, b, cfg->sharedMemBytes)
                                         : CUDA_ERROR_INVALID_HANDLE;
        if (st)
            return st;
    }
    launch_caller = __builtin_return_address(0);
    CUresult st = launch(f, g, b, cfg->sharedMemBytes, cfg->hStream, args, extra, flags);
    launch_caller = NULL;
    return st;
}
ALIAS(cuLaunchKernelEx_ptsz, cuLaunchKernelEx);

/* ------------------------------------------------------ function attributes */
static CUresult info_of(void *handle, const int64_t **attrs)
{
    CUresult st = drv_ctx_check();
    if (st)
        return st;
    struct drv_function *f = drv_function_of(handle);
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    uint32_t n, nb;
    const uint32_t *o, *s;
    return drv_function_info(f, &n, &nb, &o, &s, attrs);
}

EXPORT CUresult cuFuncGetAttribute(int *value, int attr, CUfunction f)
{
    DRV_CHILD_GUARD();
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    const int64_t *a;
    CUresult st = info_of(f, &a);
    if (st)
        return st;
    int *set = set_value(f, attr);
    switch (attr) {
    case FA_MAX_THREADS: *value = (int)a[KATTR_MAX_THREADS]; break;
    case FA_SHARED: *value = (int)a[KATTR_SHARED]; break;
    case FA_CONST: *value = (int)a[KATTR_CONST]; break;
    case FA_LOCAL: *value = (int)a[KATTR_LOCAL]; break;
    case FA_NUM_REGS: *value = (int)a[KATTR_NUM_REGS]; break;
    case FA_PTX_VERSION: *value = (int)a[KATTR_PTX_VERSION]; break;
    case FA_BINARY_VERSION: *value = (int)a[KATTR_BINARY_VERSION]; break;
    case FA_MAX_DYN_SHARED: *value = (int)max_dynamic(f, a); break;
    case FA_CARVEOUT: *value = set ? *set : -1; break;
    default:
        if (attr < 0 || attr >= FA_MAX)
            return CUDA_ERROR_INVALID_VALUE;
        *value = set ? *set : 0;
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult cuFuncSetAttribute(CUfunction f, int attr, int value)
{
    DRV_CHILD_GUARD();
    const int64_t *a;
    CUresult st = info_of(f, &a);
    if (st)
        return st;
    if (attr == FA_MAX_DYN_SHARED &&
        (value < 0 || (uint64_t)value + (uint64_t)a[KATTR_SHARED] >
                          gpu_info()[GPU_SHARED_PER_BLOCK_OPTIN]))
        return CUDA_ERROR_INVALID_VALUE;
    if (attr != FA_MAX_DYN_SHARED && attr != FA_CARVEOUT && attr < 10)
        return CUDA_ERROR_INVALID_VALUE;         /* the read-only attributes */
    if (attr >= FA_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    int *slot = set_value(f, attr);
    if (!slot) {
        struct set_attr *s = calloc(1, sizeof *s);
        if (s) {
            *s = (struct set_attr){ set_attrs, f, attr, value };
            set_attrs = s;
        }
    } else {
        *slot = value;
    }
    UNLOCK();
    return CUDA_SUCCESS;
}

EXPORT CUresult cuFuncSetCacheConfig(CUfunction f, int config)
{
    DRV_CHILD_GUARD();
    const int64_t *a;
    CUresult st = info_of(f, &a);
    return st ? st : config < 0 || config > 3 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
EXPORT CUresult cuFuncSetSharedMemConfig(CUfunction f, int config)
{
    DRV_CHILD_GUARD();
    const int64_t *a;
    CUresult st = info_of(f, &a);
    return st ? st : config < 0 || config > 2 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

static CUresult check_device(CUdevice dev) { return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; }

EXPORT CUresult cuKernelGetAttribute(int *value, int attr, CUkernel k, CUdevice dev)
{
    DRV_CHILD_GUARD();
    CUresult st = check_device(dev);
    return st ? st : cuFuncGetAttribute(value, attr, k);
}
EXPORT CUresult cuKernelSetAttribute(int attr, int value, CUkernel k, CUdevice dev)
{
    DRV_CHILD_GUARD();
    CUresult st = check_device(dev);
    return st ? st : cuFuncSetAttribute(k, attr, value);
}
EXPORT CUresult cuKernelSetCacheConfig(CUkernel k, int config, CUdevice dev)
{
    DRV_CHILD_GUARD();
    CUresult st = check_device(dev);
    return st ? st : cuFuncSetCacheConfig(k, config);
}

/* --------------------------------------------------------------- occupancy */
static CUresult blocks_per_sm(int *blocks, void *f, int block_size, size_t dyn)
{
    const int64_t *a;
    CUresult st = info_of(f, &a);
    if (st)
        return st;
    if (!blocks || block_size <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    *blocks = (int)occupancy_blocks(gpu_info(), (uint64_t)block_size, (uint64_t)a[KATTR_NUM_REGS],
                                    (uint64_t)a[KATTR_SHARED] + dyn);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *blocks, CUfunction f,
                                                                     int block_size, size_t dyn,
                                                                     unsigned flags)
{
    DRV_CHILD_GUARD();
    (void)flags;
    return blocks_per_sm(blocks, f, block_size, dyn);
}
EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, CUfunction f,
                                                            int block_size, size_t dyn)
{
    DRV_CHILD_GUARD();
    return blocks_per_sm(blocks, f, block_size, dyn);
}

typedef size_t (*b2d_size)(int block_size);

/* cudaOccMaxPotentialOccupancyBlockSize's search: block sizes from the
 * largest allowed down in warps; the most resident threads wins, ties keep
 * the larger block */
EXPORT CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int *min_grid, int *block, CUfunction f,
                                                          b2d_size dyn_of, size_t dyn, int limit,
                                                          unsigned flags)
{
    DRV_CHILD_GUARD();
    (void)flags;
    const int64_t *a;
    CUresult st = info_of(f, &a);
    if (st)
        return st;
    if (!min_grid || !block)
        return CUDA_ERROR_INVALID_VALUE;
    int max = (int)a[KATTR_MAX_THREADS];
    if (limit > 0 && limit < max)
        max = limit;
    int best = 0, best_blocks = 0, best_size = 0;
    for (int size = (max + 31) / 32 * 32; size > 0; size -= 32) {
        int bs = size > max ? max : size, n = 0;
        size_t d = dyn_of ? dyn_of(bs) : dyn;
        if ((st = blocks_per_sm(&n, f, bs, d)))
            return st;
        if (n * bs > best) {
            best = n * bs;
            best_blocks = n;
            best_size = bs;
        }
    }
    *min_grid = best_blocks * (int)gpu_info()[GPU_SM_COUNT];
    *block = best_size;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block, CUfunction f,
                                                 b2d_size dyn_of, size_t dyn, int limit)
{
    DRV_CHILD_GUARD();
    return cuOccupancyMaxPotentialBlockSizeWithFlags(min_grid, block, f, dyn_of, dyn, limit, 0);
}

EXPORT CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *out, CUfunction f, int nblocks,
                                                        int block_size)
{
    DRV_CHILD_GUARD();
    const int64_t *a;
    CUresult st = info_of(f, &a);
    if (st)
        return st;
    if (!out || nblocks <= 0 || block_size <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    const uint64_t *g = gpu_info();
    uint64_t per_block = g[GPU_SHARED_PER_SM] / (uint64_t)nblocks;
    uint64_t used = (uint64_t)a[KATTR_SHARED] + g[GPU_RESERVED_SHARED_PER_BLOCK];
    uint64_t avail = per_block > used ? per_block - used : 0;
    uint64_t optin = g[GPU_SHARED_PER_BLOCK_OPTIN] - (uint64_t)a[KATTR_SHARED];
    *out = (avail < optin ? avail : optin) / 128 * 128;
    return CUDA_SUCCESS;
}
