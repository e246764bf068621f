// The driver API's stream-ordered allocator under ptxc run
// (tests/test_runtime_mempool.py): cuMemAllocAsync from the current pool, a
// kernel (through the runtime) on that memory, cuMemFreeAsync, the pool's
// counters through cuMemPoolGetAttribute, a created pool, and the driver's
// error codes ("what -> code"). The driver's functions come from
// dlopen("libcuda.so.1"), so no -lcuda is needed to build it.
#include <cuda.h>
#include <dlfcn.h>
#include <cstdio>

static int failures = 0;
#define CHECK(x) do { CUresult r_ = (x); if (r_) { printf("line %d: %s: %d\n", __LINE__, #x, (int)r_); failures++; } } while (0)

static void *lib;
template <typename F> static F load(const char *name) { return (F)dlsym(lib, name); }
#define FN(name) static decltype(&::name) d_##name
#define LOAD(name) d_##name = load<decltype(&::name)>(#name)
FN(cuInit); FN(cuDeviceGet); FN(cuDevicePrimaryCtxRetain); FN(cuCtxSetCurrent);
FN(cuDeviceGetDefaultMemPool); FN(cuDeviceGetMemPool); FN(cuMemAllocAsync); FN(cuMemcpyDtoH_v2);
FN(cuMemPoolGetAttribute); FN(cuMemFreeAsync); FN(cuMemPoolCreate); FN(cuMemAllocFromPoolAsync);
FN(cuMemPoolDestroy);

__global__ void iota(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = 3 * i;
}

static unsigned long long attr(CUmemoryPool p, CUmemPool_attribute a) {
  cuuint64_t v = 0;
  CHECK(d_cuMemPoolGetAttribute(p, a, &v));
  return (unsigned long long)v;
}

int main() {
  if (!(lib = dlopen("libcuda.so.1", RTLD_NOW))) { printf("no libcuda.so.1\n"); return 1; }
  LOAD(cuInit); LOAD(cuDeviceGet); LOAD(cuDevicePrimaryCtxRetain); LOAD(cuCtxSetCurrent);
  LOAD(cuDeviceGetDefaultMemPool); LOAD(cuDeviceGetMemPool); LOAD(cuMemAllocAsync);
  LOAD(cuMemcpyDtoH_v2); LOAD(cuMemPoolGetAttribute); LOAD(cuMemFreeAsync); LOAD(cuMemPoolCreate);
  LOAD(cuMemAllocFromPoolAsync); LOAD(cuMemPoolDestroy);
  CUdevice dev;
  CUcontext ctx;
  CHECK(d_cuInit(0));
  CHECK(d_cuDeviceGet(&dev, 0));
  CHECK(d_cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(d_cuCtxSetCurrent(ctx));
  CUmemoryPool def, cur;
  CHECK(d_cuDeviceGetDefaultMemPool(&def, dev));
  CHECK(d_cuDeviceGetMemPool(&cur, dev));
  printf("current is default %d\n", cur == def);
  CUdeviceptr d;
  CHECK(d_cuMemAllocAsync(&d, 1000 * sizeof(int), 0));
  iota<<<4, 256>>>((int *)d, 1000);
  static int h[1000];
  CHECK(d_cuMemcpyDtoH_v2(h, d, sizeof h));
  long long sum = 0;
  for (int i = 0; i < 1000; i++) sum += h[i];
  printf("sum %lld\n", sum);
  printf("pool %llu %llu\n", attr(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT),
         attr(def, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT));
  CHECK(d_cuMemFreeAsync(d, 0));
  printf("freed %llu\n", attr(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT));
  printf("double free -> %d\n", (int)d_cuMemFreeAsync(d, 0));
  CUmemPoolProps props = {};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  CUmemoryPool mine;
  CHECK(d_cuMemPoolCreate(&mine, &props));
  CHECK(d_cuMemAllocFromPoolAsync(&d, 100, mine, 0));
  printf("mine %llu\n", attr(mine, CU_MEMPOOL_ATTR_USED_MEM_CURRENT));
  CHECK(d_cuMemFreeAsync(d, 0));
  CHECK(d_cuMemPoolDestroy(mine));
  printf("destroy default -> %d\n", (int)d_cuMemPoolDestroy(def));
  printf("device 1 -> %d\n", (int)d_cuDeviceGetDefaultMemPool(&cur, 1));
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures;
}
