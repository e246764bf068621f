/* Device memory in the application: one mapping per allocation.
 *
 * ptxc owns the allocation table and picks a segment number s for every
 * allocation; the memory is a memfd that both processes map, here at address
 * s << 32 (so a device pointer is the same number in the application and in
 * kernels). The shim keeps a mirror of the table (size, kind, live or freed)
 * to check copies and sets itself: an invalid pointer or range returns
 * cudaErrorInvalidValue, as CUDA does, instead of crashing.
 *
 * A graph allocation (graph_mem.c) keeps its segment for its whole life: its
 * range holds an inaccessible placeholder mapping while its memory does not
 * exist (before its allocation node runs, after a free), and the memory is
 * mapped over it (shim_alloc_at); stream-ordered allocations (mempool.c) are
 * ordinary allocations that their pool accounts for.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mempool.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define SEG_SHIFT 32
#define SEG_MASK ((1ull << SEG_SHIFT) - 1)
enum { SEG_NONE = 0, SEG_LIVE = 1, SEG_FREED = 2 };

struct seg { uint64_t size; uint64_t mapped; int kind; int state; unsigned flags; };
static struct seg *segs;
static uint32_t nsegs;
static uint64_t device_bytes;         /* live cudaMalloc-like bytes (cudaMemGetInfo) */

static struct seg *seg_at(uint32_t s)
{
    if (s >= nsegs) {
        uint32_t n = nsegs ? nsegs : 64;
        while (n <= s)
            n *= 2;
        struct seg *t = realloc(segs, n * sizeof *t);
        if (!t)
            return NULL;
        memset(t + nsegs, 0, (n - nsegs) * sizeof *t);
        segs = t;
        nsegs = n;
    }
    return &segs[s];
}

/* the live segment holding p (NULL if none) */
static struct seg *live_seg(const void *p)
{
    uint64_t s = (uint64_t)(uintptr_t)p >> SEG_SHIFT;
    return s < nsegs && segs[s].state == SEG_LIVE ? &segs[s] : NULL;
}

/* does p lie in a segment ptxc handed out (live or freed)? */
int in_device_space(const void *p)
{
    uint64_t s = (uint64_t)(uintptr_t)p >> SEG_SHIFT;
    return s < nsegs && segs[s].state != SEG_NONE;
}

int is_mapped_range(const void *p, size_t n)
{
    struct seg *g = live_seg(p);
    uint64_t off = (uint64_t)(uintptr_t)p & SEG_MASK;
    return g && off <= g->size && n <= g->size - off;
}

/* ------------------------------------------------ ptxc check (initcheck, API errors) */
static int checking = -1;

static int check_host(void)
{
    if (checking < 0) {
        const char *s = getenv(PTXC_CHECK_ENV);
        checking = s && s[0] == '1';
    }
    return checking;
}

/* Under ptxc check, tell ptxc which device bytes a host copy or set wrote:
 * `rows` rows of `width` bytes, `dpitch` apart at dst; src is the device
 * source of a copy (its rows `spitch` apart) or NULL (host data, a set). */
void shim_note_write(const void *dst, const void *src, size_t width, size_t rows,
                     size_t dpitch, size_t spitch)
{
    if (!check_host() || !in_device_space(dst) || !width || !rows)
        return;
    char req[48];
    put64(req, (uint64_t)(uintptr_t)dst);
    put64(req + 8, src && in_device_space(src) ? (uint64_t)(uintptr_t)src : 0);
    put64(req + 16, width);
    put64(req + 24, rows);
    put64(req + 32, dpitch);
    put64(req + 40, spitch);
    struct reply r;
    shim_call(OP_HOST_WRITE, req, sizeof req, NULL, 0, &r);
    reply_free(&r);
}

/* Under ptxc check, report a memory call that failed its argument checks
 * (compute-sanitizer's "Program hit cudaErrorInvalidValue ... on CUDA API
 * call to cudaFree"); returns st. */
static cudaError_t api_check(const char *call, cudaError_t st, const void *p, size_t n)
{
    if (!st || !check_host() || shim_dead())
        return st;
    char req[24];
    put32(req, (uint32_t)st);
    put32(req + 4, 0);
    put64(req + 8, (uint64_t)(uintptr_t)p);
    put64(req + 16, n);
    struct reply r;
    shim_call(OP_API_ERROR, req, sizeof req, call, strlen(call), &r);
    reply_free(&r);
    return st;
}

/* the side of a failed copy to report: a device destination out of range, else the source */
static const void *bad_side(const void *dst, const void *src, size_t n)
{
    return in_device_space(dst) && !is_mapped_range(dst, n) ? dst : src;
}

static uint64_t page_round(uint64_t n)
{
    uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
    return (n + pg - 1) / pg * pg;
}

static int try_map(uint32_t s, uint64_t size, int fd)
{
    void *want = (void *)((uintptr_t)s << SEG_SHIFT);
    uint64_t len = page_round(size ? size : 1);
    void *got = mmap(want, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
    if (got == MAP_FAILED)
        return 0;
    if (got != want) {            /* a kernel without MAP_FIXED_NOREPLACE took it as a hint */
        munmap(got, len);
        return 0;
    }
    /* a forked child does not get ptxc's memory: on a GPU device memory is
       not the child's either, and a child writing this shared mapping would
       change the parent's data (docs/runtime.md, "fork and exec") */
    madvise(got, len, MADV_DONTFORK);
    struct seg *g = seg_at(s);
    if (!g) {
        munmap(got, len);
        return 0;
    }
    g->size = size;
    g->mapped = len;
    g->state = SEG_LIVE;
    return 1;
}

/* Map the `count` mappings of reply r (at byte `at` of its payload, one
 * descriptor each); when an address range is taken, ask ptxc for another
 * segment. The final segment numbers go to segs_out. 0 or a cudaError_t. */
int map_reply_mappings(struct reply *r, size_t at, int count, uint32_t *segs_out)
{
    for (int i = 0; i < count; i++) {
        const char *m = r->data + at + MAPPING_BYTES * i;
        uint32_t s = get32(m), kind = get32(m + 4);
        uint64_t size = get64(m + 8);
        int fd = i < r->nfds ? r->fds[i] : -1;
        if (fd < 0)
            return cudaErrorUnknown;
        for (int tries = 0; !try_map(s, size, fd); tries++) {
            if (tries > 64)
                return cudaErrorMemoryAllocation;
            char req[4];
            put32(req, s);
            struct reply n;
            shim_call(OP_REMAP, req, 4, NULL, 0, &n);
            if (n.status || n.len < MAPPING_BYTES || n.nfds < 1) {
                int st = n.status ? n.status : cudaErrorMemoryAllocation;
                reply_free(&n);
                return st;
            }
            s = get32(n.data);
            close(fd);
            fd = n.fds[0];
            n.fds[0] = -1;
            reply_free(&n);
        }
        close(fd);
        if (i < r->nfds)
            r->fds[i] = -1;
        segs[s].kind = (int)kind;
        if (kind != KIND_MODULE && kind != KIND_HOST)
            device_bytes += size;
        segs_out[i] = s;
    }
    return 0;
}

/* Under ptxc check: where an allocation is made, for the leak check
 * (compute-sanitizer's "Saved host backtrace ... at allocation time"): the
 * return addresses of the application's frames (those outside this
 * library, at most SITE_FRAMES), each as its offset in its object (what
 * the object's symbols and line tables use) and the object's path ("": the
 * executable). Appended to the OP_MALLOC request after u64 size, u32 kind:
 * u32 n, n x u64 offset, the call's name, NUL, n x (path, NUL). */
#define SITE_FRAMES 8
static size_t alloc_site(char *buf, size_t cap, const char *call)
{
    void *frames[SITE_FRAMES + 8];
    int n = backtrace(frames, SITE_FRAMES + 8);
    Dl_info self;
    if (!dladdr((void *)alloc_site, &self))
        self.dli_fbase = NULL;
    uint64_t offsets[SITE_FRAMES];
    const char *objects[SITE_FRAMES];
    uint32_t k = 0;
    for (int i = 0; i < n && k < SITE_FRAMES; i++) {
        Dl_info info;
        struct link_map *lm = NULL;
        if (!dladdr1(frames[i], &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
            continue;
        if (info.dli_fbase == self.dli_fbase)        /* the shim's own frames */
            continue;
        offsets[k] = (uint64_t)(uintptr_t)frames[i] - (uint64_t)lm->l_addr;
        objects[k++] = lm->l_name ? lm->l_name : "";
    }
    size_t len = 4 + 8 * (size_t)k + strlen(call) + 1;
    for (uint32_t i = 0; i < k; i++)
        len += strlen(objects[i]) + 1;
    if (len > cap)
        return 0;
    put32(buf, k);
    char *q = buf + 4;
    for (uint32_t i = 0; i < k; i++, q += 8)
        put64(q, offsets[i]);
    q = stpcpy(q, call) + 1;
    for (uint32_t i = 0; i < k; i++)
        q = stpcpy(q, objects[i]) + 1;
    return (size_t)(q - buf);
}

static cudaError_t alloc(void **p, size_t size, int kind, unsigned flags, const char *call)
{
    if (!p)
        return cudaErrorInvalidValue;
    *p = NULL;
    if (size == 0)
        return cudaSuccess;
    if (shim_dead())
        return cudaErrorCudartUnloading;
    LOCK();
    char req[12 + 4096];
    put64(req, size);
    put32(req + 8, (uint32_t)kind);
    size_t n = 12;
    if (check_host())
        n += alloc_site(req + 12, sizeof req - 12, call);
    struct reply r;
    shim_call(OP_MALLOC, req, n, NULL, 0, &r);
    int st = r.status;
    uint32_t s = 0;
    if (!st)
        st = r.len >= MAPPING_BYTES ? map_reply_mappings(&r, 0, 1, &s) : cudaErrorUnknown;
    reply_free(&r);
    if (!st) {
        segs[s].flags = flags;
        *p = (void *)((uintptr_t)s << SEG_SHIFT);
    }
    UNLOCK();
    return st;
}

/* an inaccessible mapping that holds the range of a graph allocation */
static int placeholder(void *at, uint64_t len)
{
    int fixed = at ? MAP_FIXED : 0;
    void *got = mmap(at, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | fixed, -1, 0);
    return got != MAP_FAILED && (!at || got == at);
}

static cudaError_t release(void *p, int host)
{
    if (!p)
        return cudaSuccess;
    if (shim_dead())
        return cudaErrorCudartUnloading;
    LOCK();
    struct seg *g = live_seg(p);
    cudaError_t st = cudaSuccess;
    if (!g || ((uintptr_t)p & SEG_MASK) || g->kind == KIND_MODULE
        || (g->kind == KIND_HOST) != host) {
        st = cudaErrorInvalidValue;
    } else {
        uint32_t s = (uint32_t)((uintptr_t)p >> SEG_SHIFT);
        if (mempool_released(s))        /* a graph allocation keeps its address */
            placeholder(p, g->mapped);
        else
            munmap(p, g->mapped);
        g->state = SEG_FREED;
        if (g->kind != KIND_HOST)
            device_bytes -= g->size;
        char req[4];
        put32(req, (uint32_t)((uintptr_t)p >> SEG_SHIFT));
        struct reply r;
        shim_call(OP_FREE, req, 4, NULL, 0, &r);
        reply_free(&r);
    }
    UNLOCK();
    return st;
}

EXPORT cudaError_t cudaMalloc(void **p, size_t size)
{
    CHILD_GUARD();
    return set_error(alloc(p, size, KIND_DEVICE, 0, "cudaMalloc"));
}
EXPORT cudaError_t cudaMallocManaged(void **p, size_t size, unsigned flags)
{
    CHILD_GUARD();
    return set_error(alloc(p, size, KIND_MANAGED, flags, "cudaMallocManaged"));
}
EXPORT cudaError_t cudaMallocHost(void **p, size_t size)
{
    CHILD_GUARD();
    return set_error(alloc(p, size, KIND_HOST, 0, "cudaMallocHost"));
}
EXPORT cudaError_t cudaHostAlloc(void **p, size_t size, unsigned flags)
{
    CHILD_GUARD();
    return set_error(alloc(p, size, KIND_HOST, flags, "cudaHostAlloc"));
}
EXPORT cudaError_t cudaFree(void *p)
{
    CHILD_GUARD();
    return set_error(api_check("cudaFree", release(p, 0), p, 0));
}
EXPORT cudaError_t cudaFreeHost(void *p)
{
    CHILD_GUARD();
    return set_error(api_check("cudaFreeHost", release(p, 1), p, 0));
}
static size_t pitch_of(size_t width) { return (width + 511) / 512 * 512; }

EXPORT cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height)
{
    CHILD_GUARD();
    if (!pitch)
        return set_error(cudaErrorInvalidValue);
    *pitch = pitch_of(width);
    return set_error(alloc(p, *pitch * height, KIND_DEVICE, 0, "cudaMallocPitch"));
}

EXPORT cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pp, struct cudaExtent e)
{
    CHILD_GUARD();
    if (!pp)
        return set_error(cudaErrorInvalidValue);
    size_t pitch = pitch_of(e.width);
    void *p = NULL;
    cudaError_t st = alloc(&p, pitch * e.height * e.depth, KIND_DEVICE, 0, "cudaMalloc3D");
    pp->ptr = p;
    pp->pitch = pitch;
    pp->xsize = e.width;
    pp->ysize = e.height;
    return set_error(st);
}

/* ------------------------------------------------------------ copies */
/* may p..p+n be read or written as memory of the kind the copy says? */
static int side_ok(const void *p, size_t n, int device)
{
    if (device)
        return is_mapped_range(p, n);
    /* a host pointer: anything but a bad range of ptxc's own segments */
    return !in_device_space(p) || is_mapped_range(p, n);
}

/* the device sides of a copy of this kind: bit 0 dst, bit 1 src (-1: bad kind) */
static int device_sides(const void *dst, const void *src, int kind)
{
    switch (kind) {
    case cudaMemcpyHostToHost: return 0;
    case cudaMemcpyHostToDevice: return 1;
    case cudaMemcpyDeviceToHost: return 2;
    case cudaMemcpyDeviceToDevice: return 3;
    case cudaMemcpyDefault: return in_device_space(dst) | in_device_space(src) << 1;
    default: return -1;
    }
}

/* may dst..dst+dn be written and src..src+sn be read by a copy of this kind? */
static cudaError_t check_copy(void *dst, size_t dn, const void *src, size_t sn, int kind)
{
    int sides = device_sides(dst, src, kind);
    if (sides < 0)
        return cudaErrorInvalidMemcpyDirection;
    if (dn == 0 && sn == 0)
        return cudaSuccess;
    if (!dst || !src)
        return cudaErrorInvalidValue;
    return side_ok(dst, dn, sides & 1) && side_ok(src, sn, sides & 2) ? cudaSuccess
                                                                       : cudaErrorInvalidValue;
}

cudaError_t shim_copy(void *dst, const void *src, size_t n, int kind)
{
    LOCK();
    cudaError_t st = check_copy(dst, n, src, n, kind);
    if (!st && n) {
        memmove(dst, src, n);
        shim_note_write(dst, src, n, 1, n, n);
    }
    UNLOCK();
    return st;
}

EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, int kind)
{
    CHILD_GUARD();
    int c = capture_state(NULL);  /* the legacy stream: an error while a capture is on */
    if (c > 0)
        return set_error(c);
    cudaError_t e = device_sync();      /* a blocking copy synchronises (devout.c) */
    return set_error(e ? e : api_check("cudaMemcpy", shim_copy(dst, src, n, kind), bad_side(dst, src, n), n));
}
EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, int kind, cudaStream_t s)
{
    CHILD_GUARD();
    int c = capture_state(s);     /* a capturing stream records a memcpy node (capture.c) */
    if (c)
        return set_error(c < 0 ? capture_copy(s, dst, n, src, n, n, 1, kind) : c);
    return set_error(api_check("cudaMemcpyAsync", shim_copy(dst, src, n, kind), bad_side(dst, src, n), n));
}

static cudaError_t copy2d(void *dst, size_t dpitch, const void *src, size_t spitch,
                          size_t width, size_t height, int kind)
{
    if (width > dpitch || width > spitch)
        return cudaErrorInvalidPitchValue;
    if (width == 0 || height == 0)
        return cudaSuccess;
    LOCK();
    cudaError_t st = check_copy(dst, dpitch * (height - 1) + width, src,
                                spitch * (height - 1) + width, kind);
    if (!st) {
        for (size_t y = 0; y < height; y++)
            memmove((char *)dst + y * dpitch, (const char *)src + y * spitch, width);
        shim_note_write(dst, src, width, height, dpitch, spitch);
    }
    UNLOCK();
    return st;
}

EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                                size_t width, size_t height, int kind)
{
    CHILD_GUARD();
    int c = capture_state(NULL);
    if (c > 0)
        return set_error(c);
    cudaError_t e = device_sync();      /* blocking (devout.c) */
    return set_error(e ? e : api_check("cudaMemcpy2D", copy2d(dst, dpitch, src, spitch, width,
                                                              height, kind), bad_side(dst, src, width), width * height));
}
EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                                     size_t width, size_t height, int kind, cudaStream_t s)
{
    CHILD_GUARD();
    int c = capture_state(s);
    if (c)
        return set_error(c < 0 ? capture_copy(s, dst, dpitch, src, spitch, width, height, kind) : c);
    return set_error(api_check("cudaMemcpy2DAsync", copy2d(dst, dpitch, src, spitch, width, height,
                                                           kind), bad_side(dst, src, width), width * height));
}

/* ------------------------------------------------------------- sets */
static cudaError_t set2d(void *p, size_t pitch, int value, size_t width, size_t height)
{
    if (width > pitch && height > 1)
        return cudaErrorInvalidPitchValue;
    if (width == 0 || height == 0)
        return cudaSuccess;
    LOCK();
    cudaError_t st = is_mapped_range(p, pitch * (height - 1) + width) ? cudaSuccess
                                                                       : cudaErrorInvalidValue;
    if (!st) {
        for (size_t y = 0; y < height; y++)
            memset((char *)p + y * pitch, value, width);
        shim_note_write(p, NULL, width, height, pitch, 0);
    }
    UNLOCK();
    return st;
}

EXPORT cudaError_t cudaMemset(void *p, int value, size_t n)
{
    CHILD_GUARD();
    int c = capture_state(NULL);
    if (c > 0)
        return set_error(c);
    return set_error(api_check("cudaMemset", set2d(p, n, value, n, 1), p, n));
}
EXPORT cudaError_t cudaMemsetAsync(void *p, int value, size_t n, cudaStream_t s)
{
    CHILD_GUARD();
    int c = capture_state(s);     /* a capturing stream records a memset node */
    if (c)
        return set_error(c < 0 ? capture_memset(s, p, n, value, n, 1) : c);
    return set_error(api_check("cudaMemsetAsync", set2d(p, n, value, n, 1), p, n));
}
EXPORT cudaError_t cudaMemset2D(void *p, size_t pitch, int value, size_t width, size_t height)
{
    CHILD_GUARD();
    int c = capture_state(NULL);
    if (c > 0)
        return set_error(c);
    return set_error(set2d(p, pitch, value, width, height));
}
EXPORT cudaError_t cudaMemset2DAsync(void *p, size_t pitch, int value, size_t width, size_t height,
                                     cudaStream_t s)
{
    CHILD_GUARD();
    int c = capture_state(s);
    if (c)
        return set_error(c < 0 ? capture_memset(s, p, pitch, value, width, height) : c);
    return set_error(set2d(p, pitch, value, width, height));
}
EXPORT cudaError_t cudaMemset3D(struct cudaPitchedPtr pp, int value, struct cudaExtent e)
{
    CHILD_GUARD();
    cudaError_t st = cudaSuccess;
    for (size_t z = 0; z < e.depth && !st; z++)
        st = set2d((char *)pp.ptr + z * pp.pitch * pp.ysize, pp.pitch, value, e.width, e.height);
    return set_error(st);
}
EXPORT cudaError_t cudaMemset3DAsync(struct cudaPitchedPtr pp, int value, struct cudaExtent e,
                                     cudaStream_t s)
{
    CHILD_GUARD();
    int c = capture_state(s);
    if (c)
        return set_error(c < 0 ? capture_refuse(s) : c);
    return cudaMemset3D(pp, value, e);
}

/* ------------------------------------------------------- information */
EXPORT cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    CHILD_GUARD();
    uint64_t t = gpu_info()[GPU_TOTAL_MEM];
    LOCK();
    uint64_t used = device_bytes < t ? device_bytes : t;
    UNLOCK();
    if (free_bytes)
        *free_bytes = t - used;
    if (total)
        *total = t;
    return cudaSuccess;
}

EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a, const void *p)
{
    CHILD_GUARD();
    if (!a)
        return set_error(cudaErrorInvalidValue);
    memset(a, 0, sizeof *a);
    LOCK();
    struct seg *g = live_seg(p);
    a->device = g ? 0 : -2;
    if (g) {
        a->type = g->kind == KIND_HOST ? cudaMemoryTypeHost
                : g->kind == KIND_MANAGED ? cudaMemoryTypeManaged : cudaMemoryTypeDevice;
        a->devicePointer = (void *)p;
        a->hostPointer = a->type == cudaMemoryTypeDevice ? NULL : (void *)p;
    } else {
        a->type = cudaMemoryTypeUnregistered;
        a->hostPointer = (void *)p;
    }
    UNLOCK();
    return cudaSuccess;
}

EXPORT cudaError_t cudaHostGetDevicePointer(void **d, void *h, unsigned flags)
{
    CHILD_GUARD();
    (void)flags;
    LOCK();
    struct seg *g = live_seg(h);
    int ok = d && g && g->kind == KIND_HOST;
    UNLOCK();
    if (!ok)
        return set_error(cudaErrorInvalidValue);
    *d = h;
    return cudaSuccess;
}

EXPORT cudaError_t cudaHostGetFlags(unsigned *flags, void *h)
{
    CHILD_GUARD();
    LOCK();
    struct seg *g = live_seg(h);
    int ok = flags && g && g->kind == KIND_HOST;
    if (ok)
        *flags = g->flags;
    UNLOCK();
    return ok ? cudaSuccess : set_error(cudaErrorInvalidValue);
}

/* managed memory is host memory here: hints and prefetches have nothing to do */
EXPORT cudaError_t cudaMemPrefetchAsync(void) { CHILD_GUARD(); return cudaSuccess; }
EXPORT cudaError_t cudaMemAdvise(void) { CHILD_GUARD(); return cudaSuccess; }
EXPORT cudaError_t cudaStreamAttachMemAsync(void) { CHILD_GUARD(); return cudaSuccess; }

ALIAS(cudaMemcpy_ptds, cudaMemcpy);
ALIAS(cudaMemcpyAsync_ptsz, cudaMemcpyAsync);
ALIAS(cudaMemcpy2D_ptds, cudaMemcpy2D);
ALIAS(cudaMemcpy2DAsync_ptsz, cudaMemcpy2DAsync);
ALIAS(cudaMemset_ptds, cudaMemset);
ALIAS(cudaMemsetAsync_ptsz, cudaMemsetAsync);
ALIAS(cudaMemset2D_ptds, cudaMemset2D);
ALIAS(cudaMemset2DAsync_ptsz, cudaMemset2DAsync);
ALIAS(cudaMemset3D_ptds, cudaMemset3D);
ALIAS(cudaMemset3DAsync_ptsz, cudaMemset3DAsync);
ALIAS(cudaMemPrefetchAsync_ptsz, cudaMemPrefetchAsync);
ALIAS(cudaStreamAttachMemAsync_ptsz, cudaStreamAttachMemAsync);

/* Page-locking is meaningless here; registered memory stays host memory that
 * copies accept (any host pointer is fine for them). It is not mapped for
 * kernels: cudaHostGetDevicePointer on it fails. */
EXPORT cudaError_t cudaHostRegister(void *p, size_t size, unsigned flags)
{
    CHILD_GUARD();
    (void)flags;
    if (!p || !size)
        return set_error(cudaErrorInvalidValue);
    return cudaSuccess;
}
EXPORT cudaError_t cudaHostUnregister(void *p)
{
    CHILD_GUARD();
    return p ? cudaSuccess : set_error(cudaErrorInvalidValue);
}

/* ------------------------------------------- for the driver half (driver.h) */
cudaError_t shim_alloc(void **p, size_t size, int kind, unsigned flags, const char *call)
{
    return alloc(p, size, kind, flags, call);
}
cudaError_t shim_release(void *p, int host) { return release(p, host); }
cudaError_t shim_release_checked(const char *call, void *p)
{
    return api_check(call, release(p, 0), p, 0);
}
cudaError_t shim_copy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                        size_t height, int kind)
{
    return copy2d(dst, dpitch, src, spitch, width, height, kind);
}
cudaError_t shim_set2d(void *p, size_t pitch, int value, size_t width, size_t height)
{
    return set2d(p, pitch, value, width, height);
}
int shim_range(const void *p, uint64_t *base, uint64_t *size, int *kind, unsigned *flags)
{
    LOCK();
    struct seg *g = live_seg(p);
    if (g) {
        *base = (uint64_t)(uintptr_t)p & ~SEG_MASK;
        *size = g->size;
        *kind = g->kind;
        *flags = g->flags;
    }
    UNLOCK();
    return g != NULL && ((uint64_t)(uintptr_t)p & SEG_MASK) < g->size;
}

/* ------------------------------------ graph allocations (graph_mem.c) */
/* A segment for a graph allocation of `size` bytes whose range is held by a
 * placeholder here (ptxc retires the numbers whose range is taken). */
cudaError_t shim_reserve(uint64_t size, uint32_t *seg)
{
    if (shim_dead())
        return cudaErrorCudartUnloading;
    LOCK();
    cudaError_t st = cudaErrorMemoryAllocation;
    uint32_t bad = 0;
    for (int tries = 0; tries < 64; tries++) {
        char req[12];
        put64(req, size);
        put32(req + 8, bad);
        struct reply r;
        shim_call(OP_MEM_RESERVE, req, sizeof req, NULL, 0, &r);
        int ok = !r.status && r.len >= 4;
        uint32_t s = ok ? get32(r.data) : 0;
        st = r.status ? r.status : cudaErrorMemoryAllocation;
        reply_free(&r);
        if (!ok)
            break;
        void *want = (void *)((uintptr_t)s << SEG_SHIFT);
        uint64_t len = page_round(size);
        void *got = mmap(want, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE
                         | MAP_FIXED_NOREPLACE, -1, 0);
        if (got == want) {
            madvise(got, len, MADV_DONTFORK);
            struct seg *g = seg_at(s);
            if (!g) {
                munmap(got, len);
                break;
            }
            g->size = size;
            g->mapped = len;
            g->state = SEG_FREED;      /* a device address, no memory yet */
            g->kind = KIND_DEVICE;
            *seg = s;
            st = cudaSuccess;
            break;
        }
        if (got != MAP_FAILED)
            munmap(got, len);
        bad = s;
    }
    UNLOCK();
    return st;
}

/* make the memory of graph allocation `seg` (reserved, not live) */
cudaError_t shim_alloc_at(uint32_t seg, uint64_t size, const char *call)
{
    if (shim_dead())
        return cudaErrorCudartUnloading;
    LOCK();
    char req[16 + 4096];
    put64(req, size);
    put32(req + 8, KIND_DEVICE);
    put32(req + 12, seg);
    size_t n = 16;
    if (check_host())
        n += alloc_site(req + 16, sizeof req - 16, call);
    struct reply r;
    shim_call(OP_MALLOC_AT, req, n, NULL, 0, &r);
    cudaError_t st = r.status;
    if (!st && (r.len < MAPPING_BYTES || r.nfds < 1 || get32(r.data) != seg))
        st = cudaErrorUnknown;
    if (!st) {
        void *want = (void *)((uintptr_t)seg << SEG_SHIFT);
        uint64_t len = page_round(size);
        void *got = mmap(want, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, r.fds[0], 0);
        if (got != want) {
            st = cudaErrorMemoryAllocation;
            char fr[4];
            struct reply f;
            put32(fr, seg);
            shim_call(OP_FREE, fr, 4, NULL, 0, &f);
            reply_free(&f);
        } else {
            madvise(got, len, MADV_DONTFORK);
            struct seg *g = seg_at(seg);
            g->size = size;
            g->mapped = len;
            g->state = SEG_LIVE;
            g->kind = KIND_DEVICE;
            g->flags = 0;
            device_bytes += size;
        }
    }
    reply_free(&r);
    UNLOCK();
    return st;
}

/* device memory the runtime itself owns (graph_cond.c's conditional values):
 * kind KIND_MODULE, so it is neither the application's to free nor counted
 * in cudaMemGetInfo or the leak check */
cudaError_t shim_alloc_runtime(void **p, size_t size, const char *why)
{
    return alloc(p, size, KIND_MODULE, 0, why);
}
