// compute-sanitizer's behaviour under `ptxc check` (tests/test_check_sanitizer.py).
//   abort     fill<<<3, 100>>>(d, 256) writes d[256], one int past the end of
//             its 1024-byte allocation (thread 56 of CTA 2: one error); then
//             twice<<<>>> doubles d; the application prints what each call
//             returned and d[0..2] (copied back; -1 if the copy failed)
//   leak      allocates 6 buffers and frees one: 4 device allocations leak
//             (cudaMalloc 100 and 300 bytes, cudaMallocPitch 3 rows of 100
//             bytes = 3 x 512 = 1536 bytes, cudaMallocManaged 64 bytes:
//             2000 bytes); cudaMallocHost memory is not device memory
//   filters   a_bad<<<1, 32>>> then b_bad<<<1, 32>>>: each reads p[32] of a
//             32-int buffer once (lane 31 reads p[t + 1])
//   fail      as abort, then returns 3
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void fill(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n)                       // bug: i == n writes past the end
        p[i] = i;
}

__global__ void twice(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] *= 2;
}

__global__ void a_bad(const int *p, int *out)
{
    out[threadIdx.x] = p[threadIdx.x + 1];
}

__global__ void b_bad(const int *p, int *out)
{
    out[threadIdx.x] = p[threadIdx.x + 1] + 1;
}

static int abort_mode()
{
    const int n = 256;
    int h[n], *d;
    for (int i = 0; i < n; i++)
        h[i] = -1;
    cudaMalloc(&d, n * sizeof(int));
    fill<<<3, 100>>>(d, n);
    cudaError_t launch = cudaGetLastError();
    cudaError_t sync = cudaDeviceSynchronize();
    twice<<<1, n>>>(d, n);
    cudaError_t next = cudaGetLastError();
    cudaError_t copy = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("launch: %s\nsync: %s\nnext launch: %s\ncopy: %s\nd[0..2] = %d %d %d\n",
           cudaGetErrorName(launch), cudaGetErrorName(sync), cudaGetErrorName(next),
           cudaGetErrorName(copy), h[0], h[1], h[2]);
    cudaFree(d);
    return 0;
}

static int leak_mode()
{
    void *a, *b, *c, *m, *h, *f;
    size_t pitch;
    cudaMalloc(&a, 100);
    cudaMalloc(&f, 200);
    cudaMalloc(&b, 300);
    cudaMallocPitch(&c, &pitch, 100, 3);
    cudaMallocManaged(&m, 64);
    cudaMallocHost(&h, 128);
    cudaFree(f);
    printf("pitch %zu\n", pitch);
    return 0;
}

static int filters_mode()
{
    int *p, *out;
    cudaMalloc(&p, 32 * sizeof(int));
    cudaMalloc(&out, 32 * sizeof(int));
    cudaMemset(p, 0, 32 * sizeof(int));
    a_bad<<<1, 32>>>(p, out);
    b_bad<<<1, 32>>>(p, out);
    printf("sync: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    cudaFree(p);
    cudaFree(out);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "abort";
    if (!strcmp(mode, "leak"))
        return leak_mode();
    if (!strcmp(mode, "filters"))
        return filters_mode();
    int status = abort_mode();
    return !strcmp(mode, "fail") ? 3 : status;
}
