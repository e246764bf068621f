// Device faults under ptxc run (tests/test_runtime_printf.py), in the style
// of cuda-samples simpleAssert: `device_faults assert|trap|oob`.
// 2 CTAs x 32 threads; N = 60, so threads 28..31 of CTA 1 fail the assert;
// thread 5 of CTA 1 traps; thread 31 of CTA 1 stores out of bounds.
// The host prints what cudaDeviceSynchronize returns, then shows that the
// error is sticky: cudaMalloc, a second launch and cudaGetLastError (twice)
// return it too. Device printf output before the fault is printed.
#include <cassert>
#include <cstdio>
#include <cstring>

__global__ void testKernel(int N)
{
    int gtid = blockIdx.x * blockDim.x + threadIdx.x;
    assert(gtid < N);
}

__global__ void trapKernel(int *out)
{
    if (threadIdx.x == 0)
        printf("trapKernel block %d\n", blockIdx.x);
    if (blockIdx.x == 1 && threadIdx.x == 5)
        __trap();
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

__global__ void oobKernel(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i == n - 1 ? i + 1 : i] = i;
}

static void report(const char *what, cudaError_t e)
{
    printf("%s: %s (%d)\n", what, cudaGetErrorName(e), (int)e);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "assert";
    int *out;
    report("malloc", cudaMalloc(&out, 64 * sizeof(int)));
    if (!strcmp(mode, "assert"))
        testKernel<<<2, 32>>>(60);
    else if (!strcmp(mode, "trap"))
        trapKernel<<<2, 32>>>(out);
    else
        oobKernel<<<2, 32>>>(out, 64);
    report("launch", cudaGetLastError());
    printf("host after launch\n");
    report("sync", cudaDeviceSynchronize());
    int *more;
    report("malloc after", cudaMalloc(&more, 16));
    testKernel<<<1, 1>>>(60);
    report("second launch", cudaGetLastError());
    report("last error again", cudaGetLastError());
    report("sync again", cudaDeviceSynchronize());
    return 0;
}
