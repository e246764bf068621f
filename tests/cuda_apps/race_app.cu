// A CUDA application with a shared-memory race, a barrier in a divergent
// branch and a full-mask shuffle in a divergent branch, for
// `ptxc check --tool racecheck|synccheck|all` (tests/test_check_app.py).
// Its kernels are those of tests/cuda/racecheck.cu and synccheck.cu.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void reverse_nosync(const float *in, float *out)
{
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = in[t];
    out[t] = s[63 - t];
}

__global__ void sync_in_if(int *out)
{
    int t = threadIdx.x;
    if (t < 16)
        __syncthreads();
    out[t] = t;
}

__global__ void shfl_divergent(const int *in, int *out)
{
    int t = threadIdx.x;
    int v = in[t];
    if (t < 16)
        v = __shfl_sync(0xffffffff, v, 0);
    out[t] = v;
}

int main()
{
    float h_in[64], h_out[64];
    int h_i[32], h_o[32];
    for (int i = 0; i < 64; i++)
        h_in[i] = i;
    for (int i = 0; i < 32; i++)
        h_i[i] = i + 5;
    float *in, *out;
    int *iin, *iout;
    cudaMalloc(&in, sizeof h_in);
    cudaMalloc(&out, sizeof h_out);
    cudaMalloc(&iin, sizeof h_i);
    cudaMalloc(&iout, sizeof h_o);
    cudaMemcpy(in, h_in, sizeof h_in, cudaMemcpyHostToDevice);
    cudaMemcpy(iin, h_i, sizeof h_i, cudaMemcpyHostToDevice);
    reverse_nosync<<<1, 64>>>(in, out);
    sync_in_if<<<1, 32>>>(iout);
    shfl_divergent<<<1, 32>>>(iin, iout);
    cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(h_o, iout, sizeof h_o, cudaMemcpyDeviceToHost);
    long s = 0;
    for (int i = 0; i < 32; i++)
        s += h_o[i];
    printf("sync: %s\nsum %ld\n", cudaGetErrorString(e), s);
    return 0;
}
