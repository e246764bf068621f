// A kernel writes through a pointer to a __constant__ variable
// (cudaGetSymbolAddress; nvcc cannot see it, so it compiles a plain store):
// on a GPU the write faults, under ptxc it is an invalid write
// (tests/test_const_write.py). peek reads the variable through the pointer
// and as a constant: 2 * (1, 2, 3, 4); poke writes 7 into table[0..3].
#include <cstdio>
#include <cuda_runtime.h>

__constant__ int table[4] = {1, 2, 3, 4};

__global__ void peek(const int *p, int *out) { out[threadIdx.x] = p[threadIdx.x] + table[threadIdx.x]; }

__global__ void poke(int *p, int v) { p[threadIdx.x] = v; }

int main()
{
    int *p = nullptr, *d_out, h[4];
    cudaGetSymbolAddress((void **)&p, table);
    cudaMalloc(&d_out, sizeof h);
    peek<<<1, 4>>>(p, d_out);
    cudaMemcpy(h, d_out, sizeof h, cudaMemcpyDeviceToHost);
    printf("peek %d %d %d %d\n", h[0], h[1], h[2], h[3]);
    poke<<<1, 4>>>(p, 7);
    cudaError_t err = cudaDeviceSynchronize();
    printf("poke: %s\n", cudaGetErrorName(err));
    cudaMemcpyFromSymbol(h, table, sizeof h);
    printf("table %d %d %d %d\n", h[0], h[1], h[2], h[3]);
    return 0;
}
