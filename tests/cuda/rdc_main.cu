// Relocatable device code (tests/test_rdc_link.py):
//   nvcc -ptx -rdc=true -arch=sm_90 -O3 rdc_main.cu -o rdc_main.sm90.rdc.ptx
// p[i] = scale(p[i]) + offset(i) with scale, calls and holder (== &calls)
// defined in rdc_lib.cu;
// a device printf (a local $str) like rdc_lib.cu's; dynamic shared memory.
#include "rdc_link.h"

extern "C" __global__ void apply(float *p, int n)
{
    extern __shared__ float stage[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    stage[threadIdx.x] = i < n ? p[i] : 0.0f;
    __syncthreads();
    if (i < n) {
        p[i] = scale(stage[threadIdx.x]) + offset<float>(i) + (holder == &calls ? 0.0f : 100.0f);
        atomicAdd(&calls, 1);
    }
    if (i == 0)
        printf("apply: %d\n", n);
}
