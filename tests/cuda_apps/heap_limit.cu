// cudaDeviceSetLimit(cudaLimitMallocHeapSize, ...) under ptxc run
// (tests/test_runtime_heap.py): the heap gets the requested size, and the
// limit cannot change once a kernel has used malloc (cudaErrorInvalidValue,
// as cudaDeviceSetLimit's documentation says).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void grab(size_t n, int *ok)
{
    char *p = (char *)malloc(n);
    *ok = p != NULL;
    if (p) {
        p[n - 1] = 1;
        free(p);
    }
}

static int try_grab(size_t n, int *d_ok)
{
    int ok = -1;
    grab<<<1, 1>>>(n, d_ok);
    cudaMemcpy(&ok, d_ok, sizeof ok, cudaMemcpyDeviceToHost);
    printf("grab %zu: %d\n", n, ok);
    return ok;
}

int main()
{
    size_t limit = 0;
    cudaDeviceGetLimit(&limit, cudaLimitMallocHeapSize);
    printf("default limit %zu\n", limit);
    int set1 = cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64u << 20);
    cudaDeviceGetLimit(&limit, cudaLimitMallocHeapSize);
    printf("set 64 MiB: %d, limit %zu\n", set1, limit);
    int *d_ok;
    cudaMalloc(&d_ok, sizeof(int));
    int big = try_grab(32u << 20, d_ok);            // fits in 64 MiB, not in 8 MiB
    int set2 = cudaDeviceSetLimit(cudaLimitMallocHeapSize, 256u << 20);
    cudaGetLastError();
    printf("set after a malloc kernel: %d\n", set2);
    int huge = try_grab(96u << 20, d_ok);           // the heap is still 64 MiB
    cudaFree(d_ok);
    bool pass = set1 == 0 && big == 1 && set2 == (int)cudaErrorInvalidValue && huge == 0;
    printf("%s\n", pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
}
