// inject_poly: a one-thread application for tests/test_inject.py (ptxc inject).
// Build: nvcc -cudart shared -arch=sm_90 -O3 inject_poly.cu -o inject_poly
// PTX:   nvcc -ptx -arch=sm_90 -O3 inject_poly.cu -o inject_poly.sm90.ptx (committed)
// Run:   ./inject_poly N OUTFILE   writes s(N) (s = 1; s = 3 s + i for i < N) to OUTFILE
// and prints n and the device address of out (constant from run to run under ptxc):
// every fault that changes s is an SDC (no check of its own).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

extern "C" __global__ void poly(unsigned *out, unsigned n)
{
    unsigned s = 1;
#pragma unroll 1
    for (unsigned i = 0; i < n; ++i) s = s * 3u + i;
    out[threadIdx.x] = s;
}

int main(int argc, char **argv)
{
    if (argc < 3) { fprintf(stderr, "usage: inject_poly N OUTFILE\n"); return 2; }
    unsigned n = (unsigned)atoi(argv[1]), s = 0, *d;
    if (cudaMalloc(&d, sizeof(unsigned)) != cudaSuccess) return 1;
    poly<<<1, 1>>>(d, n);
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) { fprintf(stderr, "poly: %s\n", cudaGetErrorString(err)); return 1; }
    if (cudaMemcpy(&s, d, sizeof s, cudaMemcpyDeviceToHost) != cudaSuccess) return 1;
    FILE *f = fopen(argv[2], "w");
    if (!f) return 1;
    fprintf(f, "%u\n", s);
    fclose(f);
    printf("poly: n = %u, out at %p\n", n, (void *)d);   // the test's model needs the address
    return 0;
}
