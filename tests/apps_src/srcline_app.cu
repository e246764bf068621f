// Host program around tests/cuda/srcline.cu for `ptxc run --by source` and
// `ptxc run --html` (tests/test_source_lines.py, tests/test_html_browser.py).
// Built at test time: nvcc -cudart shared -arch=sm_90 -O3 -lineinfo
//   -I tests/cuda tests/apps_src/srcline_app.cu -o srcline_app
// Two launches of srcline (1 CTA of 64 threads, n = 48, stride = 2 and 1) and
// one of scale_all; prints PASS when the output matches the CPU.
#include <cstdio>
#include "../cuda/srcline.cu"

extern "C" __global__ void scale_all(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;        // @scale_all
    if (i < n) x[i] = scale(x[i], 2);                     // @scale_all_body
}

static float host_scale(float v, int k) { return v * (float)k + 0.5f; }

int main()
{
    const int N = 64, n = 48;
    float a[N], out[N], ref[N];
    for (int i = 0; i < N; ++i) a[i] = (float)i;
    float *da, *dout;
    cudaMalloc(&da, N * sizeof(float));
    cudaMalloc(&dout, N * sizeof(float));
    cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
    int ok = 1;
    for (int stride = 2; stride >= 1; --stride) {
        cudaMemset(dout, 0, sizeof out);
        srcline<<<1, N>>>(da, dout, n, stride);
        cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost);
        for (int i = 0; i < n; ++i) {
            float v = a[(i * stride) % n];
            for (int k = 0; k < (i & 3); ++k) v = host_scale(v, k + 2);
            ref[i] = v;
            if (out[i] != ref[i]) ok = 0;
        }
    }
    scale_all<<<2, 32>>>(dout, n);
    cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; ++i)
        if (out[i] != host_scale(ref[i], 2)) ok = 0;
    printf(ok ? "PASS\n" : "FAIL\n");
    return ok ? 0 : 1;
}
