// Declarations shared by the three files of rdc_cg (relocatable device code,
// nvcc -rdc=true): device functions and variables defined in one file and
// used in another, as in cuda-samples' conjugateGradientMultiBlockCG.
#pragma once
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

#define THREADS 128

// rdc_cg_math.cu
extern __device__ double grid_dot_result;    // the grid's dot product (atomicAdd)
extern __device__ double d_tol;              // set by the host with cudaMemcpyToSymbol
__device__ void gpuSpMV(const int *rowptr, const int *cols, const double *vals, const double *x,
                        double *y, int n, const cg::grid_group &grid);
__device__ void gpuSaxpy(const double *x, double *y, double a, int n, const cg::grid_group &grid);
__device__ void gpuScaleVectorAndSaxpy(const double *x, double *y, double a, double scale, int n,
                                       const cg::grid_group &grid);
__device__ void gpuCopyVector(const double *src, double *dst, int n, const cg::grid_group &grid);
__device__ void gpuDotProduct(const double *a, const double *b, int n, const cg::thread_block &cta,
                              const cg::grid_group &grid);
__global__ void initVectors(const double *rhs, double *x, double *r, int n);

// rdc_cg_kernel.cu
extern __constant__ int c_max_iter;          // set by the host with cudaMemcpyToSymbol
extern __device__ int d_iterations;          // read by the host with cudaMemcpyFromSymbol
__global__ void gpuConjugateGradient(const int *rowptr, const int *cols, const double *vals,
                                     double *x, double *Ax, double *p, double *r, int n);

// instantiated in both device files: a .weak function in each one's PTX
template <typename T> __device__ __noinline__ T square(T v) { return v * v; }
