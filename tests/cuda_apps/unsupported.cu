// Prints a line (to stdout, maybe a file: stdio buffers it) and then calls
// a CUDA runtime function ptxc does not implement (peer access): the call
// must name itself, exit non-zero, and the printed line must not be lost.
#include <cstdio>
int main(int argc, char **argv) {
  printf("line before the unsupported call\n");
  cudaError_t e = cudaDeviceEnablePeerAccess(0, 0);
  printf("not reached: %d\n", (int)e);
  return 0;
}
