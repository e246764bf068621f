// Two translation units, same_name_main.cu and same_name_lib.cu, each with
// its own `static __global__ void k(int *)`: nvcc gives both the same PTX
// name (_Z1kPi with nvcc 13), each in its own fat binary (module). They do
// different work; the report must keep them apart
// (tests/test_runtime_kernel_keys.py). main launches its k twice, the second
// time as a kernel node of a graph made by stream capture; same_name_lib.cu
// launches its k once. No branches, so each warp executes every instruction
// of its kernel once.
#include <cstdio>
static __global__ void k(int *p) { p[threadIdx.x] = threadIdx.x + 7; }
void lib_launch(int *p);           // same_name_lib.cu: its k<<<2, 64>>>(p)
int main() {
  const int n = 128;
  int h[n], *d;
  cudaMalloc(&d, sizeof h);
  cudaMemset(d, 0, sizeof h);
  k<<<1, 32>>>(d);                 // main's k: p[i] = i + 7, i < 32
  cudaStream_t s;
  cudaGraph_t g;
  cudaGraphExec_t x;
  cudaStreamCreate(&s);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  k<<<1, 32, 0, s>>>(d);           // recorded: a kernel node
  cudaStreamEndCapture(s, &g);
  cudaGraphInstantiate(&x, g, 0);
  cudaGraphLaunch(x, s);           // main's k again, by the graph
  cudaStreamSynchronize(s);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  int ok = 1;
  for (int i = 0; i < n; i++) ok &= h[i] == (i < 32 ? i + 7 : 0);
  lib_launch(d);                   // lib's k: p[i] = 3i + 1, i < 128
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; i++) ok &= h[i] == 3 * i + 1;
  printf("%s\n", ok ? "PASS" : "FAIL");
  cudaFree(d);
  return ok ? 0 : 1;
}
