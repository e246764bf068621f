// A CUDA application with deliberate memory errors, for `ptxc check` and
// `ptxc run --on-error=continue` (tests/test_memcheck_app.py). Its kernels
// are those of tests/cuda/memcheck.cu (`errors` and `north`).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void north(const float *J, float *out, int cols)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int index = row * cols + col;
    int index_n = index - cols;
    out[index] = J[index] - J[index_n];
}

__global__ void errors(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = in[i] + in[i + 1];
    if (i % 8 == 5)
        v += *(const float *)((const char *)in + 4 * i + 2);
    out[i] = v;
    if (i >= n - 4)
        out[i + 4] = v;
}

int main()
{
    const int n = 100, rows = 8, cols = 16;
    float h_in[n], h_out[n], h_J[rows * cols], h_o[rows * cols];
    for (int i = 0; i < n; i++)
        h_in[i] = i + 1;
    for (int i = 0; i < rows * cols; i++)
        h_J[i] = 3 * i + 1;
    float *in, *out, *J, *o;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, n * sizeof(float));
    cudaMalloc(&J, rows * cols * sizeof(float));
    cudaMalloc(&o, rows * cols * sizeof(float));
    cudaMemcpy(in, h_in, sizeof h_in, cudaMemcpyHostToDevice);
    cudaMemcpy(J, h_J, sizeof h_J, cudaMemcpyHostToDevice);
    errors<<<4, 32>>>(in, out, n);
    north<<<dim3(2, 2), dim3(8, 4)>>>(J, o, cols);
    cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(h_out, out, sizeof h_out, cudaMemcpyDeviceToHost);
    cudaMemcpy(h_o, o, sizeof h_o, cudaMemcpyDeviceToHost);
    double s1 = 0, s2 = 0;
    for (int i = 0; i < n; i++)
        s1 += h_out[i];
    for (int i = 0; i < rows * cols; i++)
        s2 += h_o[i];
    printf("sync: %s\nerrors sum %.1f\nnorth sum %.1f\n", cudaGetErrorString(e), s1, s2);
    return 0;
}
