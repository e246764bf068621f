/* Device output and device faults: what a kernel's printf and a failed
 * assert / trap / bad access leave for the host (docs/runtime.md).
 *
 * ptxc runs every launch at once; the launch reply carries the launch's
 * device printf output, the lines a GPU prints on stderr (failed
 * assertions, ptxc's own diagnostic) and the error of a device fault. As the
 * CUDA C++ Programming Guide ("Formatted Output") describes for a GPU's
 * printf buffer, the text is written out at the next synchronising call
 * (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize, a
 * blocking cudaMemcpy*, cudaDeviceReset), at the start of the next launch,
 * before a stream callback, and (unlike a GPU, which may lose it) at exit.
 * It goes through the application's own stdout / stderr FILE streams, so it
 * takes its place among the application's printf output.
 *
 * A device fault is returned by the next synchronising call and is sticky
 * from then on (cudaErrorAssert, cudaErrorLaunchFailure,
 * cudaErrorIllegalAddress ...): every later call that goes through
 * set_error returns it, launches no longer run, and cudaGetLastError does
 * not clear it. cudaDeviceReset clears it (a fresh context).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

struct text { char *p; size_t n, cap; };

static struct text out, err;
static cudaError_t pending, sticky;

static void append(struct text *t, const char *p, size_t n)
{
    if (!n)
        return;
    if (t->n + n > t->cap) {
        size_t cap = (t->n + n) * 2;
        char *q = realloc(t->p, cap);
        if (!q)
            return;
        t->p = q;
        t->cap = cap;
    }
    memcpy(t->p + t->n, p, n);
    t->n += n;
}

static void write_out(struct text *t, FILE *f)
{
    if (t->n) {
        fwrite(t->p, 1, t->n, f);
        t->n = 0;
        fflush(f);
    }
}

void device_flush(void)
{
    LOCK();
    write_out(&out, stdout);
    write_out(&err, stderr);
    UNLOCK();
}

/* the payload of a launch reply: u32 error, u32 stdout bytes, u32 stderr bytes,
 * u32 timed, f64 modelled seconds (stream.c's device clock), bytes */
void device_launch_result(const char *data, size_t len)
{
    if (len < LAUNCH_REPLY_BYTES)
        return;
    uint32_t e = get32(data), no = get32(data + 4), ne = get32(data + 8);
    if (LAUNCH_REPLY_BYTES + (uint64_t)no + ne > len)
        return;
    const char *text = data + LAUNCH_REPLY_BYTES;
    LOCK();
    append(&out, text, no);
    append(&err, text + no, ne);
    if (e && !pending && !sticky)
        pending = (cudaError_t)e;
    UNLOCK();
}

cudaError_t device_sync(void)
{
    LOCK();
    device_flush();
    if (pending) {
        sticky = pending;
        pending = cudaSuccess;
    }
    cudaError_t e = sticky;
    UNLOCK();
    return e;
}

cudaError_t device_sticky(void) { return sticky; }
int device_faulted(void) { return pending || sticky; }

void device_reset(void)
{
    LOCK();
    device_flush();
    pending = sticky = cudaSuccess;
    UNLOCK();
}

__attribute__((destructor)) static void flush_at_exit(void)
{
    if ((out.n || err.n) && !shim_child)   /* a forked child's copy is the parent's to write */
        device_flush();
}
