/* Streams and events of the driver API: the runtime half's (stream.c).
 *
 * Follows the CUDA Driver API reference, "Stream Management" and "Event
 * Management". A CUstream is a cudaStream_t and a CUevent a cudaEvent_t (as
 * in CUDA), so each call is the runtime call, its error translated and the
 * runtime's last error left alone; cuEventElapsedTime therefore reports
 * exactly what cudaEventElapsedTime reports.
 */
#define _GNU_SOURCE
#include "driver.h"

#define STREAM_FLAGS 0x1u              /* CU_STREAM_NON_BLOCKING */
#define EVENT_FLAGS 0xfu               /* BLOCKING_SYNC | DISABLE_TIMING | INTERPROCESS | ... */

CUcontext drv_current_ctx(void);

EXPORT CUresult cuStreamCreateWithPriority(CUstream *s, unsigned flags, int priority)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (st)
        return st;
    if (!s || (flags & ~STREAM_FLAGS))
        return CUDA_ERROR_INVALID_VALUE;
    return RT(cudaStreamCreateWithPriority(s, flags, priority));
}
EXPORT CUresult cuStreamCreate(CUstream *s, unsigned flags)
{
    DRV_CHILD_GUARD();
    return cuStreamCreateWithPriority(s, flags, 0);
}

static CUresult handle_ok(CUstream s)
{
    CUresult st = drv_ctx_check();
    return st ? st : stream_valid(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
    DRV_CHILD_GUARD();
    CUresult st = handle_ok(s);
    return st ? st : RT(cudaStreamDestroy(s));
}
ALIAS(cuStreamDestroy, cuStreamDestroy_v2);

EXPORT CUresult cuStreamSynchronize(CUstream s)
{
    DRV_CHILD_GUARD();
    CUresult st = handle_ok(s);
    return st ? st : RT(cudaStreamSynchronize(s));
}
EXPORT CUresult cuStreamQuery(CUstream s)
{
    DRV_CHILD_GUARD();
    CUresult st = handle_ok(s);
    return st ? st : RT(cudaStreamQuery(s));
}
EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags)
{
    DRV_CHILD_GUARD();
    CUresult st = handle_ok(s);
    return st ? st : RT(cudaStreamWaitEvent(s, e, flags));
}

typedef void (*cu_callback)(CUstream, CUresult, void *);
EXPORT CUresult cuStreamAddCallback(CUstream s, cu_callback cb, void *data, unsigned flags)
{
    DRV_CHILD_GUARD();
    CUresult st = handle_ok(s);
    if (st)
        return st;
    if (!cb || flags)
        return CUDA_ERROR_INVALID_VALUE;
    return RT(cudaStreamAddCallback(s, (void (*)(cudaStream_t, cudaError_t, void *))cb, data, 0));
}
EXPORT CUresult cuLaunchHostFunc(CUstream s, void (*fn)(void *), void *data)
{
    DRV_CHILD_GUARD();
    CUresult st = handle_ok(s);
    if (st)
        return st;
    return fn ? RT(cudaLaunchHostFunc(s, fn, data)) : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuStreamGetFlags(CUstream s, unsigned *flags)
{
    DRV_CHILD_GUARD();
    CUresult st = handle_ok(s);
    return st ? st : RT(cudaStreamGetFlags(s, flags));
}
EXPORT CUresult cuStreamGetPriority(CUstream s, int *priority)
{
    DRV_CHILD_GUARD();
    CUresult st = handle_ok(s);
    return st ? st : RT(cudaStreamGetPriority(s, priority));
}
EXPORT CUresult cuStreamGetId(CUstream s, unsigned long long *id)
{
    DRV_CHILD_GUARD();
    CUresult st = handle_ok(s);
    return st ? st : RT(cudaStreamGetId(s, id));
}
EXPORT CUresult cuStreamGetCtx(CUstream s, CUcontext *ctx)
{
    DRV_CHILD_GUARD();
    CUresult st = handle_ok(s);
    if (st)
        return st;
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    *ctx = drv_current_ctx();
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamGetDevice(CUstream s, CUdevice *dev)
{
    DRV_CHILD_GUARD();
    CUresult st = handle_ok(s);
    if (st)
        return st;
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    *dev = 0;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamAttachMemAsync(CUstream s, CUdeviceptr p, size_t n, unsigned flags)
{
    DRV_CHILD_GUARD();
    (void)p; (void)n; (void)flags;
    return handle_ok(s);
}

/* ------------------------------------------------------------- events */
EXPORT CUresult cuEventCreate(CUevent *e, unsigned flags)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    if (st)
        return st;
    if (!e || (flags & ~EVENT_FLAGS))
        return CUDA_ERROR_INVALID_VALUE;
    return RT(cudaEventCreateWithFlags(e, flags));
}
EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    return st ? st : RT(cudaEventDestroy(e));
}
ALIAS(cuEventDestroy, cuEventDestroy_v2);
EXPORT CUresult cuEventRecord(CUevent e, CUstream s)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    return st ? st : RT(cudaEventRecord(e, s));
}
EXPORT CUresult cuEventRecordWithFlags(CUevent e, CUstream s, unsigned flags)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    return st ? st : RT(cudaEventRecordWithFlags(e, s, flags));
}
EXPORT CUresult cuEventQuery(CUevent e)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    return st ? st : RT(cudaEventQuery(e));
}
EXPORT CUresult cuEventSynchronize(CUevent e)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    return st ? st : RT(cudaEventSynchronize(e));
}
EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    return st ? st : RT(cudaEventElapsedTime(ms, start, end));
}
ALIAS(cuEventElapsedTime, cuEventElapsedTime_v2);

/* the runtime's capture state of the stream (capture.c): capture begun through
 * the driver API is unsupported, so a stream captures only when the runtime
 * half began it */
EXPORT CUresult cuStreamIsCapturing(CUstream s, int *status)
{
    DRV_CHILD_GUARD();
    CUresult st = drv_ctx_check();
    return st ? st : RT(cudaStreamIsCapturing(s, status));
}

ALIAS(cuStreamSynchronize_ptsz, cuStreamSynchronize);
ALIAS(cuStreamIsCapturing_ptsz, cuStreamIsCapturing);
ALIAS(cuStreamQuery_ptsz, cuStreamQuery);
ALIAS(cuStreamWaitEvent_ptsz, cuStreamWaitEvent);
ALIAS(cuStreamAddCallback_ptsz, cuStreamAddCallback);
ALIAS(cuLaunchHostFunc_ptsz, cuLaunchHostFunc);
ALIAS(cuStreamGetFlags_ptsz, cuStreamGetFlags);
ALIAS(cuStreamGetPriority_ptsz, cuStreamGetPriority);
ALIAS(cuStreamGetId_ptsz, cuStreamGetId);
ALIAS(cuStreamGetCtx_ptsz, cuStreamGetCtx);
ALIAS(cuStreamGetDevice_ptsz, cuStreamGetDevice);
ALIAS(cuStreamAttachMemAsync_ptsz, cuStreamAttachMemAsync);
ALIAS(cuEventRecord_ptsz, cuEventRecord);
ALIAS(cuEventRecordWithFlags_ptsz, cuEventRecordWithFlags);
