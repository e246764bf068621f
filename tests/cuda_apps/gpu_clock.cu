// cudaEventElapsedTime under `ptxc run --clock model|host` (tests/test_gpu_clock.py).
// Events: e0, N launches of fill<<<3, 128>>> and a blocking copy, e1, one
// cudaGraphLaunch of a captured graph with two scale<<<3, 128>>> nodes, e2;
// with "heavy": a launch of heavy<<<1, 1024>>> (96 registers per thread
// under ptxas -O3, so a block does not fit on an SM: the time model cannot
// predict it), e3. Prints the elapsed milliseconds e0-e1, e1-e2 (and
// e2-e3), then PASS when p[i] == 6 i.
//   usage: gpu_clock [N [heavy]]
#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void fill(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = i;
}

__global__ void scale(int *p, int n, int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] *= k;
}

__global__ void heavy(const float *in, float *out, int n)
{
    float v[80];
    int t = threadIdx.x;
#pragma unroll
    for (int j = 0; j < 80; j++)
        v[j] = in[(t * 7 + j * 13) % n];
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 80; j++)
        s = s * v[79 - j] + v[j] * v[(j * 31) % 80];
    out[t] = s;
}

static float elapsed(cudaEvent_t a, cudaEvent_t b)
{
    float ms = -1.0f;
    if (cudaEventElapsedTime(&ms, a, b) != cudaSuccess)
        printf("cudaEventElapsedTime failed\n");
    return ms;
}

int main(int argc, char **argv)
{
    const int n = 300;
    int launches = argc > 1 ? atoi(argv[1]) : 3;
    bool with_heavy = argc > 2 && !strcmp(argv[2], "heavy");
    int *d, h[n];
    float *fin, *fout;
    cudaMalloc(&d, sizeof h);
    cudaMalloc(&fin, 1024 * sizeof(float));
    cudaMalloc(&fout, 1024 * sizeof(float));
    cudaMemset(fin, 0, 1024 * sizeof(float));
    cudaEvent_t e[4];
    for (int i = 0; i < 4; i++)
        cudaEventCreate(&e[i]);

    cudaEventRecord(e[0], 0);
    for (int i = 0; i < launches; i++)
        fill<<<3, 128>>>(d, n);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);   // adds no modelled time
    cudaEventRecord(e[1], 0);

    cudaStream_t s;
    cudaGraph_t g;
    cudaGraphExec_t ge;
    cudaStreamCreate(&s);
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    scale<<<3, 128, 0, s>>>(d, n, 2);
    scale<<<3, 128, 0, s>>>(d, n, 3);
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&ge, g, 0);
    cudaGraphLaunch(ge, s);
    cudaEventRecord(e[2], s);
    cudaStreamSynchronize(s);

    printf("launches_ms %.9g\n", elapsed(e[0], e[1]));
    printf("graph_ms %.9g\n", elapsed(e[1], e[2]));
    if (with_heavy) {
        heavy<<<1, 1024>>>(fin, fout, 1024);
        cudaEventRecord(e[3], 0);
        cudaDeviceSynchronize();
        printf("heavy_ms %.9g\n", elapsed(e[2], e[3]));
    }
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    int ok = 1;
    for (int i = 0; i < n; i++)
        ok &= h[i] == 6 * i;
    printf("%s\n", ok ? "PASS" : "FAIL");
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cudaStreamDestroy(s);
    cudaFree(d);
    cudaFree(fin);
    cudaFree(fout);
    return !ok;
}
