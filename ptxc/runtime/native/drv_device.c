/* The driver API's device: one GPU, the model of `ptxc run --gpu`.
 *
 * Follows the CUDA Driver API reference, "Device Management": ordinal 0 is
 * the only device (another is CUDA_ERROR_INVALID_DEVICE), and every call
 * before cuInit returns CUDA_ERROR_NOT_INITIALIZED. The attributes are
 * those of the runtime half's cudaDeviceGetAttribute (the two enums have the
 * same numbers), so both APIs describe the same device; the memory-pool and
 * virtual-memory attributes are 0, so that libraries allocate with cuMemAlloc.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "driver.h"

#define ATTR_MAX 148                  /* CU_DEVICE_ATTRIBUTE_MAX of CUDA 13 */
#define ATTR_PCI_BUS_ID 33
#define ATTR_VIRTUAL_MEMORY 102
#define ATTR_MEMORY_POOLS 115

static CUresult check_dev(CUdevice dev)
{
    DRV_INIT();
    return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

EXPORT CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    if (ordinal != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *dev = 0;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *n)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (!n)
        return CUDA_ERROR_INVALID_VALUE;
    *n = 1;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    DRV_CHILD_GUARD();
    CUresult st = check_dev(dev);
    if (st)
        return st;
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "%s", gpu_name());
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetUuid_v2(unsigned char *uuid, CUdevice dev)
{
    DRV_CHILD_GUARD();
    CUresult st = check_dev(dev);
    if (st)
        return st;
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(uuid, "ptxc-cpu-device", 16);   /* cudaGetDeviceProperties' uuid */
    return CUDA_SUCCESS;
}
ALIAS(cuDeviceGetUuid, cuDeviceGetUuid_v2);

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    DRV_CHILD_GUARD();
    CUresult st = check_dev(dev);
    if (st)
        return st;
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    *bytes = gpu_info()[GPU_TOTAL_MEM];
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetAttribute(int *value, int attr, CUdevice dev)
{
    DRV_CHILD_GUARD();
    CUresult st = check_dev(dev);
    if (st)
        return st;
    if (!value || attr < 1 || attr >= ATTR_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    if (attr == ATTR_VIRTUAL_MEMORY || attr == ATTR_MEMORY_POOLS || attr == ATTR_PCI_BUS_ID) {
        *value = 0;
        return CUDA_SUCCESS;
    }
    return RT(cudaDeviceGetAttribute(value, attr, 0));
}

EXPORT CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
    DRV_CHILD_GUARD();
    CUresult st = check_dev(dev);
    if (st)
        return st;
    if (!major || !minor)
        return CUDA_ERROR_INVALID_VALUE;
    *major = (int)gpu_info()[GPU_MAJOR];
    *minor = (int)gpu_info()[GPU_MINOR];
    return CUDA_SUCCESS;
}

/* CUdevprop (deprecated, still exported) */
struct cu_devprop {
    int maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3], sharedMemPerBlock;
    int totalConstantMemory, SIMDWidth, memPitch, regsPerBlock, clockRate, textureAlign;
};

EXPORT CUresult cuDeviceGetProperties(struct cu_devprop *p, CUdevice dev)
{
    DRV_CHILD_GUARD();
    CUresult st = check_dev(dev);
    if (st)
        return st;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    const uint64_t *g = gpu_info();
    *p = (struct cu_devprop){ (int)g[GPU_MAX_THREADS_PER_BLOCK], { 1024, 1024, 64 },
                              { 2147483647, 65535, 65535 }, (int)g[GPU_SHARED_PER_BLOCK],
                              (int)g[GPU_CONST_MEM], 32, 2147483647, (int)g[GPU_REGS_PER_BLOCK],
                              (int)g[GPU_CLOCK_KHZ], 512 };
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetPCIBusId(char *bus, int len, CUdevice dev)
{
    DRV_CHILD_GUARD();
    CUresult st = check_dev(dev);
    if (st)
        return st;
    if (!bus || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(bus, (size_t)len, "0000:00:00.0");
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetByPCIBusId(CUdevice *dev, const char *bus)
{
    DRV_CHILD_GUARD();
    DRV_INIT();
    if (!dev || !bus)
        return CUDA_ERROR_INVALID_VALUE;
    if (strcmp(bus, "0000:00:00.0") != 0 && strcmp(bus, "00:00.0") != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *dev = 0;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer)
{
    DRV_CHILD_GUARD();
    CUresult st = check_dev(dev);
    if (!st)
        st = check_dev(peer);
    if (st)
        return st;
    if (!can)
        return CUDA_ERROR_INVALID_VALUE;
    *can = 0;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetExecAffinitySupport(int *pi, int type, CUdevice dev)
{
    DRV_CHILD_GUARD();
    (void)type;
    CUresult st = check_dev(dev);
    if (st)
        return st;
    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    *pi = 0;
    return CUDA_SUCCESS;
}
