// A kernel that writes one element past the end of its buffer: ptxc must
// stop the run naming the allocation (never a segfault of the application).
#include <cstdio>
__global__ void fill(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) p[i] = i;            // bug: i == n writes past the end
}
int main() {
  int *a, *b;
  cudaMalloc(&a, 4096);
  cudaMalloc(&b, 1024 * sizeof(int));
  printf("before the launch\n");
  fill<<<9, 128>>>(b, 1024);
  cudaDeviceSynchronize();
  printf("after the launch\n");
  return 0;
}
