// Two .cu files (two fat binaries), each with its own __constant__ and
// __device__ variables of the same name and its own kernels; main checks
// both modules keep their variables apart. With multi_lib.cu.
#include <cstdio>
__constant__ int offset;
__device__ int launches;
__global__ void add_offset(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += offset;
  if (i == 0) launches++;
}
void lib_scale(int *p, int n, int factor);   // multi_lib.cu
int lib_launches();
int main() {
  const int n = 300;
  int h[n], *d;
  for (int i = 0; i < n; i++) h[i] = i;
  cudaMalloc(&d, sizeof h);
  cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  int off = 1000;
  cudaMemcpyToSymbol(offset, &off, sizeof off);
  add_offset<<<(n + 127) / 128, 128>>>(d, n);
  lib_scale(d, n, 3);
  add_offset<<<(n + 127) / 128, 128>>>(d, n);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  int mine = 0;
  cudaMemcpyFromSymbol(&mine, launches, sizeof mine);
  int ok = mine == 2 && lib_launches() == 1;
  for (int i = 0; i < n; i++) ok &= h[i] == (i + 1000) * 3 + 1000;
  printf("%s\n", ok ? "PASS" : "FAIL");
  cudaFree(d);
  return ok ? 0 : 1;
}
