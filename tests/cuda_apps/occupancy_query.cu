// Prints what cudaOccupancyMaxActiveBlocksPerMultiprocessor answers for a
// kernel with only dynamic shared memory: `occupancy_query BLOCK DYN_BYTES`
// prints "ERR BLOCKS" (tests/test_occupancy.py).
#include <cstdio>
#include <cstdlib>

__global__ void reverse(float *p)
{
    extern __shared__ float s[];
    s[threadIdx.x] = p[threadIdx.x];
    __syncthreads();
    p[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int blocks = -1;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, reverse, atoi(argv[1]), (size_t)atol(argv[2]));
    printf("%d %d\n", (int)e, blocks);
    return 0;
}
