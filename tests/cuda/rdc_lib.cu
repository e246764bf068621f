// Relocatable device code (tests/test_rdc_link.py):
//   nvcc -ptx -rdc=true -arch=sm_90 -O3 rdc_lib.cu -o rdc_lib.sm90.rdc.ptx
// The definitions rdc_main.cu uses (holder: a pointer initialised with
// calls' address), a kernel of its own with a printf.
#include "rdc_link.h"

__device__ int calls;
__device__ int *holder = &calls;           // initialised with another variable's address
__device__ float scale(float x) { return 3.0f * x; }

extern "C" __global__ void count(int *out)
{
    extern __shared__ double stage[];
    stage[threadIdx.x] = calls + offset<float>(threadIdx.x);
    out[threadIdx.x] = (int)stage[threadIdx.x];
    if (threadIdx.x == 0)
        printf("count: %d\n", calls);
}
