// Prelude for compiling the tests/cuda kernels with clang without the CUDA headers
// (clang 14 does not accept CUDA 13 headers): -nocudainc -include clang_prelude.h.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __forceinline__ __inline__ __attribute__((always_inline))
#include <__clang_cuda_builtin_vars.h>
