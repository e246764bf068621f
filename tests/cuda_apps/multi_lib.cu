// The second fat binary of the multi_main application.
__constant__ int offset;          // same names as in multi_main.cu, other module
__device__ int launches;
__global__ void scale(int *p, int n, int factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= factor;
  if (i == 0) launches++;
}
void lib_scale(int *p, int n, int factor) { scale<<<(n + 63) / 64, 64>>>(p, n, factor); }
int lib_launches() {
  int v = -1;
  cudaMemcpyFromSymbol(&v, launches, sizeof v);
  return v;
}
