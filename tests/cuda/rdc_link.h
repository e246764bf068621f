// shared by rdc_main.cu, rdc_lib.cu and rdc_dup.cu (relocatable device code)
#pragma once
#include <cstdio>
extern __device__ float scale(float x);      // rdc_lib.cu
extern __device__ int calls;                 // rdc_lib.cu
extern __device__ int *holder;               // rdc_lib.cu: &calls
// instantiated in several files: a .weak function in each one's PTX
template <typename T> __device__ __noinline__ T offset(int i) { return T(i % 4); }
