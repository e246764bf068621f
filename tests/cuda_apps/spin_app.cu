// An application whose kernel never ends (it waits for a flag nobody sets):
// tests/test_interrupt.py interrupts `ptxc run` with SIGINT and kills it
// with SIGKILL while this kernel runs.
#include <cstdio>
#include <cuda_runtime.h>

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
    printf("launching\n");
    fflush(stdout);
    spin<<<1, 32>>>(flag, out);
    cudaError_t err = cudaDeviceSynchronize();
    printf("%s\n", cudaGetErrorString(err));
    return 0;
}
