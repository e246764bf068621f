// Writes one int past a device malloc block (tests/test_heap_bounds.py):
// 4 threads each malloc 5 ints and write 6; a second kernel sums the first
// 5 (0 + 1 + 2 + 3 + 4 = 10 each) and frees the blocks. ptxc check reports
// the 4 overruns; a plain ptxc run, like a GPU without memcheck, runs on.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void over(int n, int extra, int **keep)
{
    int *p = (int *)malloc(n * sizeof(int));
    for (int i = 0; i < n + extra; i++)
        p[i] = i;
    keep[threadIdx.x] = p;
}

__global__ void sum_free(int n, int **keep, int *out)
{
    int *p = keep[threadIdx.x];
    int s = 0;
    for (int i = 0; i < n; i++)
        s += p[i];
    out[threadIdx.x] = s;
    free(p);
}

int main()
{
    int **keep, *out, h[4];
    cudaMalloc(&keep, 4 * sizeof(int *));
    cudaMalloc(&out, sizeof h);
    over<<<1, 4>>>(5, 1, keep);
    sum_free<<<1, 4>>>(5, keep, out);
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    printf("sums %d %d %d %d\n", h[0], h[1], h[2], h[3]);
    return 0;
}
