// A cooperative launch in the style of cuda-samples' reductionMultiBlockCG:
// the grid is sized by the occupancy API, every CTA reduces a grid-stride
// slice, grid.sync(), CTA 0 adds the partial sums. The host checks the sum,
// that an oversized cooperative grid is refused, and prints PASS or FAIL.
#include <cstdio>
#include <cooperative_groups.h>
#include <cuda_runtime.h>
namespace cg = cooperative_groups;

__global__ void reduce(const int *in, int *partial, long long *total, int n)
{
    cg::grid_group grid = cg::this_grid();
    __shared__ int acc;
    if (threadIdx.x == 0)
        acc = 0;
    __syncthreads();
    int s = 0;
    for (int i = grid.thread_rank(); i < n; i += grid.size())
        s += in[i];
    atomicAdd(&acc, s);
    __syncthreads();
    if (threadIdx.x == 0)
        partial[blockIdx.x] = acc;
    grid.sync();
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        long long t = 0;
        for (unsigned b = 0; b < gridDim.x; ++b)
            t += partial[b];
        *total = t;
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    int threads = 128, per_sm = 0;
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce, threads, 0);
    int blocks = prop.multiProcessorCount * (per_sm < 2 ? per_sm : 2);
    int *h = (int *)malloc(n * sizeof(int)), *d_in, *d_partial;
    long long *d_total, total = 0, want = 0;
    for (int i = 0; i < n; ++i) {
        h[i] = (i * 7919) % 1000 - 500;
        want += h[i];
    }
    cudaMalloc(&d_in, n * sizeof(int));
    cudaMalloc(&d_partial, blocks * sizeof(int));
    cudaMalloc(&d_total, sizeof(long long));
    cudaMemcpy(d_in, h, n * sizeof(int), cudaMemcpyHostToDevice);
    void *args[] = {&d_in, &d_partial, &d_total, &n};
    cudaError_t err = cudaLaunchCooperativeKernel((void *)reduce, blocks, threads, args, 0, 0);
    if (err == cudaSuccess)
        err = cudaMemcpy(&total, d_total, sizeof total, cudaMemcpyDeviceToHost);
    if (err != cudaSuccess) {
        printf("FAIL: %s\n", cudaGetErrorString(err));
        return 1;
    }
    int too_many = prop.multiProcessorCount * per_sm + 1;
    cudaError_t big = cudaLaunchCooperativeKernel((void *)reduce, too_many, threads, args, 0, 0);
    printf("oversized grid of %d blocks: %s\n", too_many, cudaGetErrorName(big));
    if (total != want || big != cudaErrorCooperativeLaunchTooLarge) {
        printf("FAIL: sum %lld, expected %lld\n", total, want);
        return 1;
    }
    printf("PASS: %d blocks of %d threads summed %d values to %lld\n", blocks, threads, n, total);
    return 0;
}
