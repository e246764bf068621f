/* Contexts: the primary context and each thread's context stack.
 *
 * Follows the CUDA Driver API reference, "Primary Context Management" and
 * "Context Management". Every context shares the one device's memory (ptxc
 * has one allocation table); a context is a handle with flags, an id and a
 * place on the stacks. A thread whose stack is empty works in the primary
 * context, as a thread does after the CUDA runtime has made the primary
 * context current (CuPy mixes runtime and driver calls on that assumption);
 * cuCtxPopCurrent on an empty stack is still CUDA_ERROR_INVALID_CONTEXT.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "driver.h"
#include "drv_export.h"

#define CTX_MAGIC 0x43545831u
#define STACK_MAX 64
#define FLAGS_MASK 0x3fu              /* CU_CTX_SCHED_MASK | MAP_HOST | LMEM_RESIZE_TO_MAX | ... */

struct CUctx_st { uint32_t magic; int primary; unsigned flags; unsigned long long id; };

static struct CUctx_st primary = { CTX_MAGIC, 1, 0, 1 };
static int primary_refs;
static unsigned long long next_id = 2;
static __thread CUcontext stack[STACK_MAX];
static __thread int depth;

static int ctx_ok(CUcontext c) { return c && c->magic == CTX_MAGIC; }

static CUcontext current(void) { return depth ? stack[depth - 1] : &primary; }

CUresult drv_ctx_check(void)
{
    DRV_INIT();
    return ctx_ok(current()) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUcontext drv_current_ctx(void) { return current(); }
CUcontext drv_primary_ctx(void) { return &primary; }
int drv_ctx_valid(CUcontext c) { return ctx_ok(c); }

/* ---------------------------------------------------------- primary */
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    primary_refs++;
    UNLOCK();
    *ctx = &primary;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    CUresult st = primary_refs > 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
    if (!st)
        primary_refs--;
    UNLOCK();
    return st;
}
ALIAS(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2);

EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    primary_refs = 0;
    primary.flags = 0;
    UNLOCK();
    drv_cls_release(&primary);         /* a static runtime's state of the context (drv_export.c) */
    device_reset();                    /* a fresh context: no sticky error (devout.c) */
    return CUDA_SUCCESS;
}
ALIAS(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset_v2);

EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned *flags, int *active)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = primary.flags;
    *active = primary_refs > 0;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned flags)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    if (flags & ~FLAGS_MASK)
        return CUDA_ERROR_INVALID_VALUE;
    primary.flags = flags;
    return CUDA_SUCCESS;
}
ALIAS(cuDevicePrimaryCtxSetFlags, cuDevicePrimaryCtxSetFlags_v2);

/* ------------------------------------------------------------ stack */
EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (ctx && !ctx_ok(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!ctx) {
        if (depth)
            depth--;
    } else if (depth) {
        stack[depth - 1] = ctx;
    } else {
        stack[depth++] = ctx;
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    *ctx = current();
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (!ctx_ok(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (depth >= STACK_MAX)
        return CUDA_ERROR_OUT_OF_MEMORY;
    stack[depth++] = ctx;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *ctx)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (!depth)
        return CUDA_ERROR_INVALID_CONTEXT;
    CUcontext c = stack[--depth];
    if (ctx)
        *ctx = c;
    return CUDA_SUCCESS;
}

static CUresult create(CUcontext *ctx, unsigned flags, CUdevice dev)
{
    DRV_INIT();
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    if (flags & ~FLAGS_MASK)
        return CUDA_ERROR_INVALID_VALUE;
    if (depth >= STACK_MAX)
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct CUctx_st *c = calloc(1, sizeof *c);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    LOCK();
    *c = (struct CUctx_st){ CTX_MAGIC, 0, flags, next_id++ };
    UNLOCK();
    stack[depth++] = c;
    *ctx = c;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxCreate_v2(CUcontext *ctx, unsigned flags, CUdevice dev)
{
    DRV_CHILD_GUARD();
    return create(ctx, flags, dev);
}
EXPORT CUresult cuCtxCreate_v3(CUcontext *ctx, void *affinity, int n, unsigned flags, CUdevice dev)
{
    DRV_CHILD_GUARD();
    if (n > 0 && affinity)
        return drv_unsupported("cuCtxCreate_v3 (execution affinity)");
    return create(ctx, flags, dev);
}
EXPORT CUresult cuCtxCreate_v4(CUcontext *ctx, void *params, unsigned flags, CUdevice dev)
{
    DRV_CHILD_GUARD();
    if (params)
        return drv_unsupported("cuCtxCreate_v4 (context parameters)");
    return create(ctx, flags, dev);
}

EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (!ctx_ok(ctx) || ctx->primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    for (int i = 0; i < depth; i++)       /* this thread's stack; others keep a stale handle */
        if (stack[i] == ctx) {
            for (int j = i; j + 1 < depth; j++)
                stack[j] = stack[j + 1];
            depth--;
            i--;
        }
    drv_cls_release(ctx);
    ctx->magic = 0;
    free(ctx);
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------- the current one */
EXPORT CUresult cuCtxGetDevice(CUdevice *dev)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (st)
        return st;
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    *dev = 0;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSynchronize(void)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    return st ? st : drv_from_runtime(device_sync());
}

/* CUDA 13: the context named, or the current one when ctx is NULL */
EXPORT CUresult cuCtxGetDevice_v2(CUdevice *dev, CUcontext ctx)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (ctx && !ctx_ok(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    return cuCtxGetDevice(dev);
}

EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (ctx && !ctx_ok(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    return cuCtxSynchronize();
}

EXPORT CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned *version)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    if (ctx && !ctx_ok(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    *version = 3020;                  /* the _v2 API (what the driver reports since CUDA 3.2) */
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetFlags(unsigned *flags)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (st)
        return st;
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = current()->flags;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetFlags(unsigned flags)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (st)
        return st;
    if (flags & ~FLAGS_MASK)
        return CUDA_ERROR_INVALID_VALUE;
    current()->flags = flags;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetId(CUcontext ctx, unsigned long long *id)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (!id)
        return CUDA_ERROR_INVALID_VALUE;
    if (!ctx)
        ctx = current();
    if (!ctx_ok(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    *id = ctx->id;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetLimit(size_t *value, int limit)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    return st ? st : RT(cudaDeviceGetLimit(value, limit));
}
EXPORT CUresult cuCtxSetLimit(int limit, size_t value)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    return st ? st : RT(cudaDeviceSetLimit(limit, value));
}

EXPORT CUresult cuCtxGetCacheConfig(int *config)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (!st && !config)
        st = CUDA_ERROR_INVALID_VALUE;
    if (!st)
        *config = 0;
    return st;
}
EXPORT CUresult cuCtxSetCacheConfig(int config)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    return st ? st : config < 0 || config > 3 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
EXPORT CUresult cuCtxGetSharedMemConfig(int *config)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (!st && !config)
        st = CUDA_ERROR_INVALID_VALUE;
    if (!st)
        *config = 1;
    return st;
}
EXPORT CUresult cuCtxSetSharedMemConfig(int config)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    return st ? st : config < 0 || config > 2 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    return st ? st : RT(cudaDeviceGetStreamPriorityRange(least, greatest));
}

EXPORT CUresult cuCtxResetPersistingL2Cache(void) { DRV_CHILD_GUARD(); return drv_ctx_check(); }
