// rdc_cg (1/3): the vector operations and the grid's dot product, with the
// variables other files use (extern __device__ in rdc_cg.h).
#include <cstdio>
#include "rdc_cg.h"

__device__ double grid_dot_result = 0.0;
__device__ double d_tol = 1e-5;

// same name as the kernel file's: each file's own (a static symbol)
static __device__ double twice(double v) { return v + v; }

__device__ void gpuSpMV(const int *rowptr, const int *cols, const double *vals, const double *x,
                        double *y, int n, const cg::grid_group &grid)
{
    for (int i = grid.thread_rank(); i < n; i += grid.size()) {
        double s = 0.0;
        for (int k = rowptr[i]; k < rowptr[i + 1]; k++)
            s += vals[k] * x[cols[k]];
        y[i] = s;
    }
}

__device__ void gpuSaxpy(const double *x, double *y, double a, int n, const cg::grid_group &grid)
{
    for (int i = grid.thread_rank(); i < n; i += grid.size())
        y[i] = a * x[i] + y[i];
}

__device__ void gpuScaleVectorAndSaxpy(const double *x, double *y, double a, double scale, int n,
                                       const cg::grid_group &grid)
{
    for (int i = grid.thread_rank(); i < n; i += grid.size())
        y[i] = a * x[i] + scale * y[i];
}

__device__ void gpuCopyVector(const double *src, double *dst, int n, const cg::grid_group &grid)
{
    for (int i = grid.thread_rank(); i < n; i += grid.size())
        dst[i] = src[i];
}

__device__ void gpuDotProduct(const double *a, const double *b, int n, const cg::thread_block &cta,
                              const cg::grid_group &grid)
{
    extern __shared__ double tmp[];
    double sum = 0.0;
    for (int i = grid.thread_rank(); i < n; i += grid.size())
        sum += a[i] * b[i];
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);
    sum = cg::reduce(tile, sum, cg::plus<double>());
    if (tile.thread_rank() == 0)
        tmp[tile.meta_group_rank()] = sum;
    cg::sync(cta);
    if (tile.meta_group_rank() == 0) {
        sum = tile.thread_rank() < tile.meta_group_size() ? tmp[tile.thread_rank()] : 0.0;
        sum = cg::reduce(tile, sum, cg::plus<double>());
        if (tile.thread_rank() == 0)
            atomicAdd(&grid_dot_result, sum);
    }
}

// x = 0, r = rhs; thread 0 says how many rows (a device printf of this file)
__global__ void initVectors(const double *rhs, double *x, double *r, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0)
        printf("init: %d rows, tolerance %g\n", n, square(d_tol) / twice(0.5));
    if (i < n) {
        x[i] = 0.0;
        r[i] = rhs[i];
    }
}
