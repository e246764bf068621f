// Device printf and assert through the executor (tests/test_device_calls.py).
// nvcc -ptx -arch=sm_90 -O3 device_calls.cu -o device_calls.sm90.ptx
#include <cassert>
#include <cstdio>

// Every thread of 2 CTAs x 40 threads (two warps, the second partial) prints
// one line; odd threads print a second line from a loop of i iterations
// (i = threadIdx.x % 3), so lanes of one warp print different numbers of
// lines; ret[] gets printf's return value of the first call.
extern "C" __global__ void prints(int *ret, const char *name, double x)
{
    int t = threadIdx.x, b = blockIdx.x;
    ret[b * blockDim.x + t] = printf("%s b=%d t=%02d x=%.3f %lld\n", name, b, t, x * t,
                                     (long long)b << 40 | t);
    if (t & 1)
        for (int i = 0; i < t % 3; i++)
            printf("odd %d.%d i=%d\n", b, t, i);
}

// thread t of CTA b fails when b * blockDim.x + t >= n
extern "C" __global__ void checks(int n)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    printf("check %d\n", g);
    assert(g < n);
}

// the format string comes from a kernel argument (any device pointer)
extern "C" __global__ void wild(const char *fmt, int v)
{
    printf(fmt, v);
}
