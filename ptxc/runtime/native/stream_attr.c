/* Stream attributes (cudaStreamSetAttribute, cudaStreamGetAttribute,
 * cudaStreamCopyAttributes) and the persisting-L2 reset.
 *
 * CUDA 13 (driver_types.h): cudaStreamAttrValue is cudaLaunchAttributeValue,
 * a 64-byte union; the attributes valid for streams are the access policy
 * window (1), the synchronisation policy (3), the priority (8), the memory
 * synchronisation domain map (9) and domain (10). ptxc has no L2 cache model
 * and runs every operation at once, so the values change no result: they
 * are checked as CUDA documents (a hit ratio in [0, 1], access properties
 * in range, a known policy), stored per stream and returned. Unset
 * attributes read as CUDA's defaults (an empty window, cudaSyncPolicyAuto,
 * the stream's creation priority, the map {0, 1}, domain 0).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "stream_attr.h"

struct attrs {
    cudaStream_t stream;
    unsigned set;                  /* bit a: attribute a was set */
    attr_value v[STREAM_ATTR_COUNT];
};

static struct attrs *table;
static size_t ntable, room;

static struct attrs *find(cudaStream_t s, int create)
{
    for (size_t i = 0; i < ntable; i++)
        if (table[i].stream == s)
            return &table[i];
    if (!create)
        return NULL;
    if (ntable >= room) {
        size_t r = room ? 2 * room : 16;
        struct attrs *t = realloc(table, r * sizeof *t);
        if (!t)
            return NULL;
        table = t;
        room = r;
    }
    struct attrs *a = &table[ntable++];
    memset(a, 0, sizeof *a);
    a->stream = s;
    return a;
}

void stream_attr_forget(cudaStream_t s)
{
    LOCK();
    struct attrs *a = find(s, 0);
    if (a)
        *a = table[--ntable];
    UNLOCK();
}

static int stream_attribute(int id)
{
    return id == cudaLaunchAttributeAccessPolicyWindow || id == cudaLaunchAttributeSynchronizationPolicy || id == cudaLaunchAttributePriority
        || id == cudaLaunchAttributeMemSyncDomainMap || id == cudaLaunchAttributeMemSyncDomain;
}

static int value_ok(int id, const attr_value *v)
{
    const struct cudaAccessPolicyWindow *w = &v->window;
    switch (id) {
    case cudaLaunchAttributeAccessPolicyWindow:
        return w->hitRatio >= 0.0f && w->hitRatio <= 1.0f
            && w->hitProp >= cudaAccessPropertyNormal && w->hitProp <= cudaAccessPropertyPersisting
            && (w->missProp == cudaAccessPropertyNormal || w->missProp == cudaAccessPropertyStreaming);
    case cudaLaunchAttributeSynchronizationPolicy:
        return v->i >= cudaSyncPolicyAuto && v->i <= cudaSyncPolicyBlockingSync;
    default:
        return 1;
    }
}

cudaError_t cudaStreamGetPriority(cudaStream_t s, int *priority);   /* stream.c */

static void default_value(cudaStream_t s, int id, attr_value *v)
{
    memset(v, 0, sizeof *v);
    if (id == cudaLaunchAttributeSynchronizationPolicy)
        v->i = cudaSyncPolicyAuto;
    else if (id == cudaLaunchAttributePriority)
        cudaStreamGetPriority(s, &v->i);
    else if (id == cudaLaunchAttributeMemSyncDomainMap)
        v->pad[1] = 1;             /* {default_ = 0, remote = 1} */
}

EXPORT cudaError_t cudaStreamSetAttribute(cudaStream_t s, int id, const attr_value *value)
{
    CHILD_GUARD();
    if (!stream_valid(s))
        return set_error(cudaErrorInvalidResourceHandle);
    if (!value || !stream_attribute(id) || !value_ok(id, value))
        return set_error(cudaErrorInvalidValue);
    LOCK();
    struct attrs *a = find(s, 1);
    if (a) {
        a->v[id] = *value;
        a->set |= 1u << id;
    }
    UNLOCK();
    return a ? cudaSuccess : set_error(cudaErrorMemoryAllocation);
}

EXPORT cudaError_t cudaStreamGetAttribute(cudaStream_t s, int id, attr_value *out)
{
    CHILD_GUARD();
    if (!stream_valid(s))
        return set_error(cudaErrorInvalidResourceHandle);
    if (!out || !stream_attribute(id))
        return set_error(cudaErrorInvalidValue);
    LOCK();
    struct attrs *a = find(s, 0);
    if (a && (a->set >> id & 1))
        *out = a->v[id];
    else
        default_value(s, id, out);
    UNLOCK();
    return cudaSuccess;
}

EXPORT cudaError_t cudaStreamCopyAttributes(cudaStream_t dst, cudaStream_t src)
{
    CHILD_GUARD();
    if (!stream_valid(dst) || !stream_valid(src))
        return set_error(cudaErrorInvalidResourceHandle);
    LOCK();
    struct attrs *from = find(src, 0), copy;
    if (from)
        copy = *from;
    struct attrs *to = find(dst, 1);
    if (to) {
        to->set = from ? copy.set : 0;
        if (from)
            memcpy(to->v, copy.v, sizeof copy.v);
    }
    UNLOCK();
    return to ? cudaSuccess : set_error(cudaErrorMemoryAllocation);
}

/* there are no persisting L2 lines to demote */
EXPORT cudaError_t cudaCtxResetPersistingL2Cache(void) { CHILD_GUARD(); return cudaSuccess; }

ALIAS(cudaStreamSetAttribute_ptsz, cudaStreamSetAttribute);
ALIAS(cudaStreamGetAttribute_ptsz, cudaStreamGetAttribute);
ALIAS(cudaStreamCopyAttributes_ptsz, cudaStreamCopyAttributes);
