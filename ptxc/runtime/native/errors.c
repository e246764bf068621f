/* Errors: the last error of each host thread (cudaGetLastError resets it,
 * cudaPeekAtLastError does not) and the names and descriptions of codes. */
#include <stddef.h>

#include "shim.h"

static __thread cudaError_t last_error;

cudaError_t set_error(cudaError_t e)
{
    cudaError_t sticky = device_sticky();   /* a device fault is sticky (devout.c) */
    if (sticky)
        e = sticky;
    if (e != cudaSuccess)
        last_error = e;
    return e;
}

/* in a forked child (shim.h, CHILD_GUARD): every call fails with this, and
 * cudaGetLastError keeps returning it */
cudaError_t child_error(void)
{
    last_error = cudaErrorInitializationError;
    return cudaErrorInitializationError;
}

EXPORT cudaError_t cudaGetLastError(void)
{
    CHILD_GUARD();
    cudaError_t e = last_error;
    last_error = device_sticky();
    return e;
}

EXPORT cudaError_t cudaPeekAtLastError(void) { CHILD_GUARD(); return last_error; }

/* the driver half (driver.h) calls runtime functions without changing this */
cudaError_t shim_last_error(void) { return last_error; }
void shim_restore_error(cudaError_t e) { last_error = e; }

static const struct { int code; const char *name; } names[] = {
#include "cuda_error_names.inc"
};

/* descriptions of the codes the shim returns (the others: their name) */
static const struct { int code; const char *text; } texts[] = {
    { cudaSuccess, "no error" },
    { cudaErrorInvalidValue, "invalid argument" },
    { cudaErrorMemoryAllocation, "out of memory" },
    { cudaErrorInitializationError, "initialization error" },
    { cudaErrorCudartUnloading, "driver shutting down" },
    { cudaErrorInvalidConfiguration, "invalid configuration argument" },
    { cudaErrorInvalidPitchValue, "invalid pitch argument" },
    { cudaErrorInvalidSymbol, "invalid device symbol" },
    { cudaErrorInvalidHostPointer, "invalid host pointer" },
    { cudaErrorInvalidDevicePointer, "invalid device pointer" },
    { cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy" },
    { cudaErrorMissingConfiguration, "__global__ function call is not configured" },
    { cudaErrorInvalidDeviceFunction, "invalid device function" },
    { cudaErrorNoDevice, "no CUDA-capable device is detected" },
    { cudaErrorInvalidDevice, "invalid device ordinal" },
    { cudaErrorNoKernelImageForDevice, "no kernel image is available for execution on the device" },
    { cudaErrorInvalidResourceHandle, "invalid resource handle" },
    { cudaErrorNotReady, "device not ready" },
    { cudaErrorIllegalAddress, "an illegal memory access was encountered" },
    { cudaErrorAssert, "device-side assert triggered" },
    { cudaErrorMisalignedAddress, "misaligned address" },
    { cudaErrorLaunchFailure, "unspecified launch failure" },
    { cudaErrorNotSupported, "operation not supported" },
    { cudaErrorUnknown, "unknown error" },
};

EXPORT const char *cudaGetErrorName(cudaError_t e)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].code == e)
            return names[i].name;
    return "cudaErrorUnknown";
}

EXPORT const char *cudaGetErrorString(cudaError_t e)
{
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (texts[i].code == e)
            return texts[i].text;
    return cudaGetErrorName(e);
}
