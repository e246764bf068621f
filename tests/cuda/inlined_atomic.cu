// An atomicAdd inlined from CUDA's header (device_atomic_functions.hpp):
// memcheck and initcheck name the user's line first, then the header's
// (tests/test_inlined_lines.py).
//   nvcc -ptx -arch=sm_90 -O3 -lineinfo inlined_atomic.cu -o inlined_atomic.sm90.lineinfo.ptx
extern "C" __global__ void count(int *hist, const int *keys, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&hist[keys[i]], 1);                   // @atomic
}
