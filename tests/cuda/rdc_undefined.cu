// Relocatable device code (tests/test_rdc_link.py): uses a function and a
// variable that no file defines (nvlink: "Undefined reference to ..."):
//   nvcc -ptx -rdc=true -arch=sm_90 -O3 rdc_undefined.cu -o rdc_undefined.sm90.rdc.ptx
extern __device__ float missing_fn(float);
extern __device__ int missing_var;

extern "C" __global__ void uses_missing(float *p) { p[0] = missing_fn(p[0]) + missing_var; }
