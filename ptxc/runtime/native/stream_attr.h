/* The stream-attribute types of CUDA 13's driver_types.h that
 * stream_attr.c uses (tests/test_runtime_graphs.py checks their layouts and
 * values against the real header when nvcc is installed). */
#ifndef PTXC_STREAM_ATTR_H
#define PTXC_STREAM_ATTR_H

#include "shim.h"

enum {
    cudaLaunchAttributeAccessPolicyWindow = 1, cudaLaunchAttributeSynchronizationPolicy = 3,
    cudaLaunchAttributePriority = 8, cudaLaunchAttributeMemSyncDomainMap = 9,
    cudaLaunchAttributeMemSyncDomain = 10,
};
#define STREAM_ATTR_COUNT 11
enum { cudaSyncPolicyAuto = 1, cudaSyncPolicyBlockingSync = 4 };
enum { cudaAccessPropertyNormal = 0, cudaAccessPropertyStreaming = 1,
       cudaAccessPropertyPersisting = 2 };
enum { cudaLimitPersistingL2CacheSize = 6 };

struct cudaAccessPolicyWindow {
    void *base_ptr;
    size_t num_bytes;
    float hitRatio;
    int hitProp;
    int missProp;
};

/* cudaStreamAttrValue (= cudaLaunchAttributeValue): 64 bytes */
typedef union { char pad[64]; struct cudaAccessPolicyWindow window; int i; } attr_value;

#endif
