// cudaGraphSetConditional from device code (tests/test_graph_set_conditional.py):
// nvcc leaves it an external function (.extern .func), which ptxc provides
// (ptxc/runtime/driver_funcs_ptx.py): one store of `value` to the handle.
#include <cuda_runtime.h>

// the last CTA's thread 0 sets the condition to how many v[i] are odd
// (one setter per launch: concurrent calls are undefined behaviour)
__global__ void count_odd(const int *v, int n, cudaGraphConditionalHandle h) {
  if (threadIdx.x != 0 || blockIdx.x != gridDim.x - 1) return;
  unsigned odd = 0;
  for (int i = 0; i < n; i++) odd += v[i] & 1;
  cudaGraphSetConditional(h, odd);
}

// a WHILE body's countdown: decrement *c, stop the loop at 0
__global__ void countdown(int *c, cudaGraphConditionalHandle h) {
  if (--*c == 0) cudaGraphSetConditional(h, 0);
}
