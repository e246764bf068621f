// A small application for the crash report (tests/test_crash_report.py):
// one launch of scale, then the host checks y[i] == 2 i. Under
// PTXC_TEST_CRASH the ptxc process crashes in that launch, and the
// application must be told so (exit status 89), not "lost the connection".
#include <cstdio>
#include <cuda_runtime.h>

__global__ void scale(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = 2.0f * x[i];
}

int main()
{
    const int n = 256;
    float hx[n], hy[n];
    for (int i = 0; i < n; i++)
        hx[i] = (float)i;
    float *x, *y;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice);
    scale<<<2, 128>>>(x, y, n);
    cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += hy[i] != 2.0f * i;
    printf("crash_app: %d wrong\n", bad);
    return bad != 0;
}
