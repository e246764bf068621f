// Recursion on the per-thread call stack under ptxc run and ptxc check
// (tests/test_call_stack.py): alt(n) = n - alt(n - 1), alt(0) = 0, that is
// (n + 1) / 2, takes n + 1 activations of one 16-byte frame (ptxas -v and
// ptxc agree). Usage: recursion N [STACK_BYTES]: sets cudaLimitStackSize when
// STACK_BYTES is given, runs alt(N) in one thread, prints the limit, the
// result and the error of the launch.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__device__ int alt(int n)
{
    if (n == 0)
        return 0;
    return n - alt(n - 1);
}

__global__ void run(int n, int *out)
{
    *out = alt(n);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10;
    size_t limit = 0;
    cudaDeviceGetLimit(&limit, cudaLimitStackSize);
    printf("default stack %zu\n", limit);
    if (argc > 2) {
        cudaError_t st = cudaDeviceSetLimit(cudaLimitStackSize, (size_t)atol(argv[2]));
        cudaDeviceGetLimit(&limit, cudaLimitStackSize);
        printf("set %s: %d, stack %zu\n", argv[2], (int)st, limit);
    }
    int *d_out, out = -1;
    cudaMalloc(&d_out, sizeof(int));
    cudaMemset(d_out, 0xff, sizeof(int));
    run<<<1, 1>>>(n, d_out);
    cudaError_t err = cudaDeviceSynchronize();
    cudaMemcpy(&out, d_out, sizeof out, cudaMemcpyDeviceToHost);
    printf("alt(%d) = %d, error %d (%s)\n", n, out, (int)err, cudaGetErrorName(err));
    return err == cudaSuccess ? 0 : 1;
}
