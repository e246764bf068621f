// Three short launches, then one that never ends (its kernel waits for a
// flag nobody sets): tests/test_interrupt.py interrupts `ptxc run` and
// `ptxc check` (Ctrl-C, SIGTERM) in the fourth launch; the report must
// keep the three that completed.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void fill(int *out, int v)
{
    out[threadIdx.x] = v + threadIdx.x;
}

__global__ void spin(volatile int *flag, int *out)
{
    int n = 0;
    while (*flag == 0)
        n++;
    out[threadIdx.x] = n;
}

int main()
{
    int *flag, *out;
    cudaMalloc(&flag, sizeof(int));
    cudaMalloc(&out, 32 * sizeof(int));
    cudaMemset(flag, 0, sizeof(int));
    for (int i = 0; i < 3; i++)
        fill<<<1, 32>>>(out, i);
    cudaDeviceSynchronize();
    printf("3 launches done\n");       // stdout is a pipe: written when the application exits
    spin<<<1, 32>>>(flag, out);
    cudaError_t err = cudaDeviceSynchronize();
    printf("%s\n", cudaGetErrorString(err));
    return 0;
}
