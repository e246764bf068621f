// Relocatable device code (tests/test_rdc_link.py): defines scale and calls
// a second time (nvlink: "Multiple definition of '_Z5scalef'"):
//   nvcc -ptx -rdc=true -arch=sm_90 -O3 rdc_dup.cu -o rdc_dup.sm90.rdc.ptx
#include "rdc_link.h"

__device__ int calls;
__device__ float scale(float x) { return 2.0f * x; }

extern "C" __global__ void twice_scale(float *p) { p[0] = scale(p[0]) + calls; }
