// Block-wise tree reduction in shared memory with a data-dependent branch,
// warp shuffles and an atomic: the output must be the same in full and
// hybrid mode, and so must every counter. Prints PASS when the sum and the
// per-block partial sums match the host's.
#include <cstdio>
#include <cstdlib>
__global__ void reduce(const int *in, int *partial, int *total, int n) {
  extern __shared__ int s[];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  int v = i < n ? in[i] : 0;
  if (v % 3 == 0) v = v / 3;                  // data-dependent divergence
  s[t] = v;
  __syncthreads();
  for (int k = blockDim.x / 2; k >= 32; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t < 32) {
    int x = s[t];
    for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffu, x, o);
    if (t == 0) { partial[blockIdx.x] = x; atomicAdd(total, x); }
  }
}
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 5000, threads = 256, blocks = (n + threads - 1) / threads;
  int *h = (int *)malloc(n * sizeof(int)), *hp = (int *)malloc(blocks * sizeof(int));
  for (int i = 0; i < n; i++) h[i] = (i * 7919) % 1000;
  int *d, *dp, *dt, total = 0;
  cudaMalloc(&d, n * sizeof(int)); cudaMalloc(&dp, blocks * sizeof(int)); cudaMalloc(&dt, sizeof(int));
  cudaMemcpy(d, h, n * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemset(dt, 0, sizeof(int));
  reduce<<<blocks, threads, threads * sizeof(int)>>>(d, dp, dt, n);
  cudaMemcpy(hp, dp, blocks * sizeof(int), cudaMemcpyDeviceToHost);
  cudaMemcpy(&total, dt, sizeof(int), cudaMemcpyDeviceToHost);
  long want = 0; int ok = 1;
  for (int b = 0; b < blocks; b++) {
    int part = 0;
    for (int i = b * threads; i < n && i < (b + 1) * threads; i++) part += h[i] % 3 == 0 ? h[i] / 3 : h[i];
    ok &= hp[b] == part; want += part;
  }
  ok &= total == want;
  printf("%s %d\n", ok ? "PASS" : "FAIL", total);
  return ok ? 0 : 1;
}
