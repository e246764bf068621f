// cudaGraphSetConditional in a module the driver API loads
// (tests/test_runtime_graph_cond.py): cuModuleLoadData of the PTX file
// argv[1] (tests/cuda/graph_set_conditional.sm90.ptx, which declares the
// function .extern), then countdown(counter, handle) with a device word as
// the handle: from 1 the counter reaches 0 and the handle becomes 0; from 3
// it becomes 2 and the handle keeps 7. The driver is opened with dlopen
// (libcuda.so.1: ptxc's, under ptxc run), so no libcuda is needed to build.
#include <cuda.h>
#include <dlfcn.h>
#include <cstdio>
#include <cstdlib>

#define CHECK(x) do { CUresult r_ = (x); if (r_) { printf("%s: %d\n", #x, (int)r_); exit(1); } } while (0)
#define DRIVER(name, sym) decltype(&name) name##_ = (decltype(&name))dlsym(lib, sym)

int main(int argc, char **argv) {
  FILE *f = fopen(argv[1], "rb");
  if (!f) return 2;
  static char ptx[1 << 20];
  ptx[fread(ptx, 1, sizeof ptx - 1, f)] = 0;
  fclose(f);
  void *lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib) return 3;
  DRIVER(cuInit, "cuInit");
  DRIVER(cuDeviceGet, "cuDeviceGet");
  DRIVER(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  DRIVER(cuCtxSetCurrent, "cuCtxSetCurrent");
  DRIVER(cuModuleLoadData, "cuModuleLoadData");
  DRIVER(cuModuleGetFunction, "cuModuleGetFunction");
  DRIVER(cuMemAlloc, "cuMemAlloc_v2");
  DRIVER(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  DRIVER(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  DRIVER(cuLaunchKernel, "cuLaunchKernel");
  DRIVER(cuCtxSynchronize, "cuCtxSynchronize");
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction fn;
  CHECK(cuInit_(0));
  CHECK(cuDeviceGet_(&dev, 0));
  CHECK(cuDevicePrimaryCtxRetain_(&ctx, dev));
  CHECK(cuCtxSetCurrent_(ctx));
  CHECK(cuModuleLoadData_(&mod, ptx));
  CHECK(cuModuleGetFunction_(&fn, mod, "_Z9countdownPiy"));
  CUdeviceptr counter, handle;
  CHECK(cuMemAlloc_(&counter, 4));
  CHECK(cuMemAlloc_(&handle, 4));
  int starts[] = {1, 3};
  for (int k = 0; k < 2; k++) {
    int c = starts[k], h = 7;
    CHECK(cuMemcpyHtoD_(counter, &c, 4));
    CHECK(cuMemcpyHtoD_(handle, &h, 4));
    void *args[] = {&counter, &handle};
    CHECK(cuLaunchKernel_(fn, 1, 1, 1, 1, 1, 1, 0, 0, args, 0));
    CHECK(cuCtxSynchronize_());
    CHECK(cuMemcpyDtoH_(&c, counter, 4));
    CHECK(cuMemcpyDtoH_(&h, handle, 4));
    printf("start %d: counter %d handle %d\n", starts[k], c, h);
  }
  return 0;
}
