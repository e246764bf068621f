// Four host threads use the runtime at the same time: each allocates,
// copies, launches on its own stream, copies back and frees, several times.
// The shim serialises their calls; every thread checks its own results.
#include <cstdio>
#include <pthread.h>
__global__ void add(int *p, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += v;
}
static int failures = 0;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *work(void *arg) {
  int id = (int)(long)arg, n = 200 + 37 * id, h[400];
  cudaStream_t s;
  cudaStreamCreate(&s);
  for (int round = 0; round < 3; round++) {
    int *d;
    for (int i = 0; i < n; i++) h[i] = i * id;
    if (cudaMalloc(&d, n * sizeof(int)) != cudaSuccess) { pthread_mutex_lock(&lock); failures++; pthread_mutex_unlock(&lock); return 0; }
    cudaMemcpyAsync(d, h, n * sizeof(int), cudaMemcpyHostToDevice, s);
    add<<<(n + 63) / 64, 64, 0, s>>>(d, n, round + 1);
    cudaMemcpyAsync(h, d, n * sizeof(int), cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    cudaFree(d);
    int bad = 0;
    for (int i = 0; i < n; i++) bad += h[i] != i * id + round + 1;
    if (bad || cudaGetLastError() != cudaSuccess) { pthread_mutex_lock(&lock); failures++; pthread_mutex_unlock(&lock); }
  }
  cudaStreamDestroy(s);
  return 0;
}
int main() {
  pthread_t t[4];
  for (long i = 0; i < 4; i++) pthread_create(&t[i], 0, work, (void *)i);
  for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures != 0;
}
