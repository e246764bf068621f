/* Streams and events with synchronous semantics: every launch and copy is
 * finished when its call returns, so a stream is only a name (its number
 * goes into the launch report) and an event records a clock: the modelled
 * device clock under `ptxc run --clock model` (below), the host time under
 * --clock host; cudaEventElapsedTime is the difference, in milliseconds.
 * A stream in a stream capture records instead (capture.c decides: the
 * capture_* calls below).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shim.h"
#include "mempool.h"

#define STREAM_MAGIC 0x5354524du
#define EVENT_MAGIC 0x4556544eu

struct CUstream_st { uint32_t magic; uint32_t flags; int priority; uint64_t id; };
struct CUevent_st { uint32_t magic; uint32_t flags; int recorded; double t; uint64_t untimed; };

static uint64_t next_stream = 1;

uint64_t stream_id(cudaStream_t s)
{
    /* 0, cudaStreamLegacy (1) and cudaStreamPerThread (2): the default stream */
    if ((uintptr_t)s <= 2 || s->magic != STREAM_MAGIC)
        return 0;
    return s->id;
}

static int bad_stream(cudaStream_t s) { return (uintptr_t)s > 2 && s->magic != STREAM_MAGIC; }
static int bad_event(cudaEvent_t e) { return !e || e->magic != EVENT_MAGIC; }

EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned flags, int priority)
{
    CHILD_GUARD();
    if (!s)
        return set_error(cudaErrorInvalidValue);
    struct CUstream_st *t = calloc(1, sizeof *t);
    if (!t)
        return set_error(cudaErrorMemoryAllocation);
    t->magic = STREAM_MAGIC;
    t->flags = flags;
    t->priority = priority;
    LOCK();
    t->id = next_stream++;
    UNLOCK();
    *s = t;
    return cudaSuccess;
}
EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    CHILD_GUARD();
    return cudaStreamCreateWithPriority(s, flags, 0);
}
EXPORT cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    CHILD_GUARD();
    return cudaStreamCreateWithPriority(s, 0, 0);
}

EXPORT cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    CHILD_GUARD();
    if ((uintptr_t)s <= 2)
        return cudaSuccess;
    if (bad_stream(s))
        return set_error(cudaErrorInvalidResourceHandle);
    capture_forget(s);            /* capture.c and stream_attr.c keep state by handle */
    stream_attr_forget(s);
    s->magic = 0;
    free(s);
    return cudaSuccess;
}

static cudaError_t stream_ok(cudaStream_t s)
{
    return set_error(bad_stream(s) ? cudaErrorInvalidResourceHandle : cudaSuccess);
}
/* synchronising with a capturing stream is an error that ends its capture */
EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    CHILD_GUARD();
    cudaError_t c = bad_stream(s) ? cudaSuccess : capture_sync(s, 0);
    if (c)
        return set_error(c);
    cudaError_t e = device_sync();      /* devout.c: device output, device faults */
    mempool_sync();                     /* pools release memory (mempool.c) */
    return e ? set_error(e) : stream_ok(s);
}
EXPORT cudaError_t cudaStreamQuery(cudaStream_t s)
{
    CHILD_GUARD();
    return cudaStreamSynchronize(s);
}
EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags)
{
    CHILD_GUARD();
    if (bad_event(e) || bad_stream(s))
        return set_error(cudaErrorInvalidResourceHandle);
    return set_error(capture_event_wait(s, e, flags));   /* joins a capture (capture.c) */
}
unsigned stream_flags(cudaStream_t s) { return (uintptr_t)s <= 2 || bad_stream(s) ? 0 : s->flags; }
int stream_valid(cudaStream_t s) { return !bad_stream(s); }
EXPORT cudaError_t cudaStreamGetFlags(cudaStream_t s, unsigned *flags)
{
    CHILD_GUARD();
    if (bad_stream(s) || !flags)
        return set_error(cudaErrorInvalidValue);
    *flags = (uintptr_t)s <= 2 ? 0 : s->flags;
    return cudaSuccess;
}
EXPORT cudaError_t cudaStreamGetPriority(cudaStream_t s, int *priority)
{
    CHILD_GUARD();
    if (bad_stream(s) || !priority)
        return set_error(cudaErrorInvalidValue);
    *priority = (uintptr_t)s <= 2 ? 0 : s->priority;
    return cudaSuccess;
}
EXPORT cudaError_t cudaStreamGetId(cudaStream_t s, unsigned long long *id)
{
    CHILD_GUARD();
    if (bad_stream(s) || !id)
        return set_error(cudaErrorInvalidValue);
    *id = stream_id(s);
    return cudaSuccess;
}

typedef void (*stream_callback)(cudaStream_t, cudaError_t, void *);
typedef void (*host_fn)(void *);

EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t s, stream_callback cb, void *data, unsigned flags)
{
    CHILD_GUARD();
    (void)flags;
    if (bad_stream(s) || !cb)
        return set_error(cudaErrorInvalidValue);
    int c = capture_state(s);     /* CUDA refuses stream callbacks in a capture */
    if (c)
        return set_error(c < 0 ? capture_refuse(s) : c);
    device_flush();                 /* devout.c: device output before a callback */
    cb(s, device_sticky(), data);
    return cudaSuccess;
}
EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t s, host_fn fn, void *data)
{
    CHILD_GUARD();
    if (bad_stream(s) || !fn)
        return set_error(cudaErrorInvalidValue);
    int c = capture_state(s);     /* a capturing stream records a host node */
    if (c)
        return set_error(c < 0 ? capture_host(s, fn, data) : c);
    fn(data);
    return cudaSuccess;
}

/* -------------------------------------------------------- the clocks */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The modelled device clock (`ptxc run --clock model`, which sets
 * $PTXC_CLOCK=model): seconds, the sum of the modelled GPU times of the
 * kernel launches so far (graph kernel nodes included); the launch reply
 * carries each. Copies, sets, host functions and the host's own time add
 * nothing. A launch without a modelled time (ptxc could not predict it, or
 * it faulted) adds nothing either, but is counted in `untimed`: an elapsed
 * time across one is NaN, never a made-up number. */
static int model_clock = -1;
static double device_clock;
static uint64_t untimed;

static int clock_is_model(void)
{
    if (model_clock < 0) {
        const char *s = getenv(PTXC_CLOCK_ENV);
        model_clock = s && !strcmp(s, "model");
    }
    return model_clock;
}

/* a launch reply's payload (protocol.h): u32 timed at 12, f64 seconds at 16 */
void device_clock_launch(const char *data, size_t len)
{
    if (len < LAUNCH_REPLY_BYTES)
        return;
    LOCK();
    if (get32(data + 12)) {
        double s;
        memcpy(&s, data + 16, sizeof s);
        device_clock += s;
    } else {
        untimed++;
    }
    UNLOCK();
}

/* ------------------------------------------------------------- events */

EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags)
{
    CHILD_GUARD();
    if (!e)
        return set_error(cudaErrorInvalidValue);
    struct CUevent_st *t = calloc(1, sizeof *t);
    if (!t)
        return set_error(cudaErrorMemoryAllocation);
    t->magic = EVENT_MAGIC;
    t->flags = flags;
    *e = t;
    return cudaSuccess;
}
EXPORT cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    CHILD_GUARD();
    return cudaEventCreateWithFlags(e, 0);
}

EXPORT cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    CHILD_GUARD();
    if (bad_event(e))
        return set_error(cudaErrorInvalidResourceHandle);
    capture_forget(e);
    e->magic = 0;
    free(e);
    return cudaSuccess;
}

EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned flags)
{
    CHILD_GUARD();
    (void)flags;
    if (bad_event(e) || bad_stream(s))
        return set_error(cudaErrorInvalidResourceHandle);
    cudaError_t c = capture_event_record(e, s);   /* 0: not captured, record it now */
    if (c)
        return set_error(c < 0 ? cudaSuccess : c);
    LOCK();
    e->t = clock_is_model() ? device_clock : now();
    e->untimed = untimed;
    e->recorded = 1;
    UNLOCK();
    return cudaSuccess;
}
EXPORT cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    CHILD_GUARD();
    return cudaEventRecordWithFlags(e, s, 0);
}

EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    CHILD_GUARD();
    cudaError_t d = device_sync();      /* devout.c */
    mempool_sync();
    return set_error(d ? d : bad_event(e) ? cudaErrorInvalidResourceHandle : cudaSuccess);
}
EXPORT cudaError_t cudaEventQuery(cudaEvent_t e)
{
    CHILD_GUARD();
    return set_error(bad_event(e) ? cudaErrorInvalidResourceHandle : cudaSuccess);
}

EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    CHILD_GUARD();
    if (!ms)
        return set_error(cudaErrorInvalidValue);
    if (bad_event(a) || bad_event(b))
        return set_error(cudaErrorInvalidResourceHandle);
    if (!a->recorded || !b->recorded || (a->flags & 2) || (b->flags & 2))
        return set_error(cudaErrorInvalidResourceHandle);
    if (clock_is_model() && a->untimed != b->untimed) {
        static int warned;
        if (!warned) {
            warned = 1;
            fflush(NULL);       /* the application's output so far comes first */
            fprintf(stderr, "ptxc: warning: cudaEventElapsedTime: a kernel launch between the "
                            "two events has no modelled GPU time (ptxc's summary says why); "
                            "it returns NaN\n");
        }
        *ms = NAN;
        return cudaSuccess;
    }
    *ms = (float)((b->t - a->t) * 1e3);
    return cudaSuccess;
}

ALIAS(cudaStreamSynchronize_ptsz, cudaStreamSynchronize);
ALIAS(cudaStreamQuery_ptsz, cudaStreamQuery);
ALIAS(cudaStreamWaitEvent_ptsz, cudaStreamWaitEvent);
ALIAS(cudaStreamGetFlags_ptsz, cudaStreamGetFlags);
ALIAS(cudaStreamGetPriority_ptsz, cudaStreamGetPriority);
ALIAS(cudaStreamGetId_ptsz, cudaStreamGetId);
ALIAS(cudaStreamAddCallback_ptsz, cudaStreamAddCallback);
ALIAS(cudaLaunchHostFunc_ptsz, cudaLaunchHostFunc);
ALIAS(cudaEventRecord_ptsz, cudaEventRecord);
ALIAS(cudaEventRecordWithFlags_ptsz, cudaEventRecordWithFlags);
