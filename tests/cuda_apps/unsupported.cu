// Prints a line (to stdout, maybe a file: stdio buffers it) and then calls
// a CUDA runtime function ptxc does not implement (a CUDA graph): the call
// must name itself, exit non-zero, and the printed line must not be lost.
#include <cstdio>
int main(int argc, char **argv) {
  printf("line before the unsupported call\n");
  cudaGraph_t g;
  cudaError_t e = cudaGraphCreate(&g, 0);
  printf("not reached: %d\n", (int)e);
  return 0;
}
