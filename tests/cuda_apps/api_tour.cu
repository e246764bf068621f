// A tour of the CUDA runtime API that ptxc's runtime implements; it checks
// every result itself and prints PASS or the first failure (exit status 1).
// Built by tests/test_runtime_apps.py with: nvcc -cudart shared -arch=sm_90
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

static int failures = 0;
#define CHECK(cond, what) do { if (!(cond)) { printf("FAIL: %s (line %d)\n", what, __LINE__); failures++; } } while (0)
#define OK(call) CHECK((call) == cudaSuccess, #call)

__constant__ int coeff[4];
__device__ int counter;
__managed__ int managed_total;

__global__ void scale2d(float *p, size_t pitch, int w, int h, float s) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    float *row = (float *)((char *)p + y * pitch);
    row[x] = row[x] * s + coeff[x % 4];
    atomicAdd(&counter, 1);
  }
}

__global__ void sum_managed(const int *v, int n) {
  extern __shared__ int part[];
  int t = threadIdx.x;
  part[t] = t < n ? v[t] : 0;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) part[t] += part[t + s];
    __syncthreads();
  }
  if (t == 0) managed_total = part[0];
}

__global__ void never_launched(int *p) { *p = 1; }

int main() {
  int n = 0, dev = -1, v = 0;
  OK(cudaGetDeviceCount(&n)); CHECK(n == 1, "one device");
  OK(cudaSetDevice(0)); OK(cudaGetDevice(&dev)); CHECK(dev == 0, "device 0");
  CHECK(cudaSetDevice(3) == cudaErrorInvalidDevice, "invalid device");
  CHECK(cudaGetLastError() == cudaErrorInvalidDevice, "last error");
  CHECK(cudaGetLastError() == cudaSuccess, "last error reset");
  cudaDeviceProp prop;
  OK(cudaGetDeviceProperties(&prop, 0));
  CHECK(prop.warpSize == 32 && prop.maxThreadsPerBlock == 1024, "properties");
  CHECK(prop.major * 10 + prop.minor >= 70 && prop.multiProcessorCount > 0, "compute capability");
  OK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0));
  CHECK(v == prop.multiProcessorCount, "attribute = property");
  OK(cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, 0)); CHECK(v == prop.major, "major");
  OK(cudaDriverGetVersion(&v)); CHECK(v >= 13000, "driver version");
  OK(cudaRuntimeGetVersion(&v)); CHECK(v >= 13000, "runtime version");
  CHECK(strcmp(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue") == 0, "error name");
  CHECK(strlen(cudaGetErrorString(cudaErrorMemoryAllocation)) > 0, "error string");
  OK(cudaSetDeviceFlags(cudaDeviceScheduleAuto));
  OK(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
  size_t free0 = 0, total = 0;
  OK(cudaMemGetInfo(&free0, &total)); CHECK(free0 > 0 && free0 <= total, "memory info");

  // pitched 2D memory, 2D copies, memset, constant memory, a device counter
  const int W = 37, H = 9;
  float host[H][W];
  for (int y = 0; y < H; y++) for (int x = 0; x < W; x++) host[y][x] = y * 100 + x;
  float *d2 = nullptr; size_t pitch = 0;
  OK(cudaMallocPitch((void **)&d2, &pitch, W * sizeof(float), H));
  CHECK(pitch >= W * sizeof(float) && pitch % 128 == 0, "pitch");
  size_t free1 = 0;
  OK(cudaMemGetInfo(&free1, &total)); CHECK(free1 < free0, "allocation is counted");
  OK(cudaMemset2D(d2, pitch, 0, W * sizeof(float), H));
  OK(cudaMemcpy2D(d2, pitch, host, W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
  int c[4] = {1, 2, 3, 4};
  OK(cudaMemcpyToSymbol(coeff, c, sizeof c));
  int zero = 0;
  OK(cudaMemcpyToSymbol(counter, &zero, sizeof zero));
  cudaStream_t st;
  OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  OK(cudaEventCreate(&e0)); OK(cudaEventCreate(&e1));
  OK(cudaEventRecord(e0, st));
  dim3 block(16, 4), grid((W + 15) / 16, (H + 3) / 4);
  scale2d<<<grid, block, 0, st>>>(d2, pitch, W, H, 2.0f);
  OK(cudaGetLastError());
  OK(cudaEventRecord(e1, st));
  OK(cudaEventSynchronize(e1));
  float ms = -1;
  OK(cudaEventElapsedTime(&ms, e0, e1)); CHECK(ms >= 0, "elapsed time");
  OK(cudaStreamSynchronize(st));
  CHECK(cudaStreamQuery(st) == cudaSuccess, "stream idle");
  float back[H][W];
  OK(cudaMemcpy2DAsync(back, W * sizeof(float), d2, pitch, W * sizeof(float), H, cudaMemcpyDeviceToHost, st));
  OK(cudaStreamSynchronize(st));
  int bad = 0;
  for (int y = 0; y < H; y++) for (int x = 0; x < W; x++) bad += back[y][x] != host[y][x] * 2 + c[x % 4];
  CHECK(bad == 0, "2D kernel result");
  int count = 0;
  OK(cudaMemcpyFromSymbol(&count, counter, sizeof count)); CHECK(count == W * H, "device counter");
  int *counter_ptr = nullptr; size_t counter_size = 0;
  OK(cudaGetSymbolAddress((void **)&counter_ptr, counter));
  OK(cudaGetSymbolSize(&counter_size, counter)); CHECK(counter_size == sizeof(int), "symbol size");
  OK(cudaMemcpy(&count, counter_ptr, sizeof count, cudaMemcpyDeviceToHost)); CHECK(count == W * H, "symbol address");
  // invalid launches and copies report errors instead of crashing
  scale2d<<<1, 2048>>>(d2, pitch, W, H, 1.0f);
  CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration, "too many threads");
  CHECK(cudaMemcpy(d2 + pitch * H, host, 64, cudaMemcpyHostToDevice) == cudaErrorInvalidValue, "copy past the end");
  CHECK(cudaMemcpy(host, (void *)0x12345, 4, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue, "wild device pointer");
  cudaGetLastError();

  // managed and pinned host memory are usable from the host directly
  int *m = nullptr;
  OK(cudaMallocManaged((void **)&m, 64 * sizeof(int)));
  for (int i = 0; i < 64; i++) m[i] = i + 1;
  sum_managed<<<1, 64, 64 * sizeof(int)>>>(m, 50);
  OK(cudaDeviceSynchronize());
  CHECK(managed_total == 50 * 51 / 2, "managed reduction");
  cudaPointerAttributes pa;
  OK(cudaPointerGetAttributes(&pa, m)); CHECK(pa.type == cudaMemoryTypeManaged, "managed pointer");
  OK(cudaPointerGetAttributes(&pa, d2)); CHECK(pa.type == cudaMemoryTypeDevice, "device pointer");
  int *pinned = nullptr, *pinned_dev = nullptr;
  OK(cudaHostAlloc((void **)&pinned, 256, cudaHostAllocMapped));
  OK(cudaHostGetDevicePointer((void **)&pinned_dev, pinned, 0));
  pinned[0] = 7;
  OK(cudaMemcpyAsync(m, pinned_dev, sizeof(int), cudaMemcpyDefault, st));
  OK(cudaStreamSynchronize(st)); CHECK(m[0] == 7, "copy from pinned memory");
  OK(cudaMemsetAsync(m, 0xff, 8, st)); CHECK(m[1] == -1, "memset");

  // kernel attributes and occupancy
  cudaFuncAttributes fa;
  OK(cudaFuncGetAttributes(&fa, sum_managed)); CHECK(fa.maxThreadsPerBlock > 0, "func attributes");
  OK(cudaFuncSetCacheConfig(sum_managed, cudaFuncCachePreferL1));
  OK(cudaFuncSetAttribute(sum_managed, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024));
  int blocks = 0;
  OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale2d, 256, 0));
  CHECK(blocks >= 1 && blocks <= 32, "occupancy");

  OK(cudaEventDestroy(e0)); OK(cudaEventDestroy(e1)); OK(cudaStreamDestroy(st));
  OK(cudaFree(d2)); OK(cudaFree(m)); OK(cudaFreeHost(pinned));
  CHECK(cudaFree(d2) == cudaErrorInvalidValue, "double free");
  cudaGetLastError();
  OK(cudaDeviceReset());
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
