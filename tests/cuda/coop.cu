// Grid-wide synchronisation in cooperative launches (cudaLaunchCooperativeKernel).
//   nvcc -ptx -arch=sm_90 -O3 coop.cu -o coop.sm90.ptx
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// Phase 1 writes data[i] = 2 i; after grid.sync() every thread reads its
// neighbour's value, written by another CTA: out[i] = 2 ((i + 1) % n).
extern "C" __global__ void neighbour(int *data, int *out, int n)
{
    cg::grid_group grid = cg::this_grid();
    int i = grid.thread_rank();
    if (i < n)
        data[i] = 2 * i;
    grid.sync();
    if (i < n)
        out[i] = data[(i + 1) % n];
}

// In the style of reductionMultiBlockCG: each CTA sums a grid-stride slice
// of in[] into partial[blockIdx.x]; after grid.sync() CTA 0 adds the
// partial sums into *total; a second grid.sync() lets every CTA read it.
extern "C" __global__ void grid_sum(const int *in, int *partial, int *total, int *seen, int n)
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
        int t = 0;
        for (int b = 0; b < gridDim.x; ++b)
            t += partial[b];
        *total = t;
    }
    grid.sync();
    if (threadIdx.x == 0)
        seen[blockIdx.x] = *total;
}

// Waits for a flag nobody sets: a grid-wide wait that never ends.
extern "C" __global__ void wait_forever(int *flag)
{
    if (threadIdx.x == 0) {
        int v;
        do {
            asm volatile("ld.acquire.gpu.b32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
        } while (v == 0);
    }
}
