// A CUDA application with deliberate initialisation and API errors, for
// `ptxc check --tool initcheck|memcheck|all` (tests/test_initcheck_app.py,
// where the expected reports are derived).
#include <cstdio>
#include <cuda_runtime.h>

#define N 100

__global__ void scale(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 2.0f * in[i];
}

__global__ void count(unsigned *counter)
{
    atomicAdd(counter, 1u);
}

static float sum(const float *d)
{
    float h[N], s = 0;
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (int i = 0; i < N; i++)
        s += h[i];
    return s;
}

int main()
{
    float host[N], *a, *b, *c, *d, *e, *g, *m;
    unsigned *counter;
    for (int i = 0; i < N; i++)
        host[i] = i + 1;
    cudaMalloc(&a, N * sizeof(float));
    cudaMalloc(&b, N * sizeof(float));
    cudaMalloc(&c, N * sizeof(float));
    cudaMalloc(&d, N * sizeof(float));
    cudaMalloc(&e, N * sizeof(float));
    cudaMalloc(&counter, sizeof(unsigned));
    cudaMalloc(&g, N * sizeof(float));
    cudaMallocManaged(&m, N * sizeof(float));
    cudaMemcpy(a, host, 64 * sizeof(float), cudaMemcpyHostToDevice);   // a partial copy
    scale<<<4, 32>>>(a, b, N);         // reads a[64..99]: never written
    scale<<<4, 32>>>(b, c, N);         // b was written by the kernel before: clean
    cudaMemset(d, 0, 50 * sizeof(float));
    scale<<<4, 32>>>(d, c, N);         // reads d[50..99]: never written
    count<<<1, 32>>>(counter);         // the first atomicAdd reads an unwritten counter
    cudaMemcpy(e, a, N * sizeof(float), cudaMemcpyDeviceToDevice);   // e is as initialised as a
    scale<<<4, 32>>>(e, c, N);         // reads e[64..99]
    cudaMemset2D(g, 40, 0, 20, 10);    // 10 rows of 20 bytes, 40 apart: g[10r .. 10r+4]
    scale<<<4, 32>>>(g, c, N);         // reads g[10r+5 .. 10r+9]
    for (int i = 0; i < N; i++)
        m[i] = 1.0f;                   // managed memory written by the host: not tracked
    scale<<<4, 32>>>(m, c, N);
    cudaDeviceSynchronize();
    printf("b sum %.1f\n", sum(b));
    printf("c sum %.1f\n", sum(c));
    printf("free inside: %d\n", (int)cudaFree(b + 1));
    printf("free: %d\n", (int)cudaFree(c));
    printf("free again: %d\n", (int)cudaFree(c));
    printf("copy past the end: %d\n", (int)cudaMemcpy(a, host, 2 * N * sizeof(float) - 8,
                                                     cudaMemcpyHostToDevice));
    cudaGetLastError();
    return 0;
}
