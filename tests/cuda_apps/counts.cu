// The smallest launch whose counters tests/test_runtime_apps.py derives by
// hand: 3 CTAs of 128 threads write p[i] = i for i < 300.
#include <cstdio>
__global__ void fill(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = i;
}
int main() {
  int *d, h[300];
  cudaMalloc(&d, sizeof h);
  fill<<<3, 128>>>(d, 300);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  int ok = 1;
  for (int i = 0; i < 300; i++) ok &= h[i] == i;
  printf("%s\n", ok ? "PASS" : "FAIL");
  cudaFree(d);
  return !ok;
}
