// cdpSimplePrint-style dynamic parallelism: a tree of grids, each block of
// each grid launching the next level from one thread (CDP2: no device-side
// cudaDeviceSynchronize; the host waits for the whole tree). Built with
//   nvcc -rdc=true -cudart shared -arch=sm_90 cdp_print.cu -o cdp_print
// Levels 0..max_depth-1; every grid has 2 blocks of 2 threads, so level d
// has 2^(d+1) blocks and the tree 2^(max_depth+1) - 2 blocks.
#include <cstdio>
#include <cstdlib>

__device__ int g_blocks = 0;
__device__ int g_threads_per_level[8];

__global__ void cdp_kernel(int max_depth, int depth, int parent_uid) {
    __shared__ int s_uid;
    if (threadIdx.x == 0) {
        s_uid = atomicAdd(&g_blocks, 1);
        printf("BLOCK %d launched by %d at depth %d\n", s_uid, parent_uid, depth);
    }
    __syncthreads();
    atomicAdd(&g_threads_per_level[depth], 1);
    if (depth + 1 < max_depth && threadIdx.x == 0) {
        cdp_kernel<<<gridDim.x, blockDim.x>>>(max_depth, depth + 1, s_uid);
        cudaError_t err = cudaGetLastError();
        if (err != cudaSuccess)
            printf("launch failed: %d\n", (int)err);
    }
}

int main(int argc, char **argv) {
    int max_depth = argc > 1 ? atoi(argv[1]) : 3;
    cdp_kernel<<<2, 2>>>(max_depth, 0, -1);
    if (cudaDeviceSynchronize() != cudaSuccess) {
        printf("FAIL: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    int blocks = 0, per_level[8] = {0};
    cudaMemcpyFromSymbol(&blocks, g_blocks, sizeof blocks);
    cudaMemcpyFromSymbol(per_level, g_threads_per_level, sizeof per_level);
    int expect = (1 << (max_depth + 1)) - 2;
    bool ok = blocks == expect;
    for (int d = 0; d < max_depth; ++d)
        ok = ok && per_level[d] == 2 * (1 << (d + 1));
    printf("%s: %d blocks in %d levels\n", ok ? "PASS" : "FAIL", blocks, max_depth);
    return ok ? 0 : 1;
}
