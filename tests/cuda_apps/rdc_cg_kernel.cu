// rdc_cg (2/3): the conjugate gradient kernel of cuda-samples'
// conjugateGradientMultiBlockCG (in double), one cooperative launch whose
// iterations are separated by grid.sync(); it calls the device functions
// of rdc_cg_math.cu and uses its variables.
#include <cstdio>
#include "rdc_cg.h"

__constant__ int c_max_iter = 1;
__device__ int d_iterations;

static __device__ double twice(double v) { return 2.0 * v; }

__global__ void gpuConjugateGradient(const int *rowptr, const int *cols, const double *vals,
                                     double *x, double *Ax, double *p, double *r, int n)
{
    cg::thread_block cta = cg::this_thread_block();
    cg::grid_group grid = cg::this_grid();
    double r0 = 0.0, r1, a, b;
    int k = 1;
    gpuDotProduct(r, r, n, cta, grid);
    cg::sync(grid);
    r1 = grid_dot_result;
    while (r1 > square(d_tol) && k <= c_max_iter) {
        if (k > 1) {
            b = r1 / r0;
            gpuScaleVectorAndSaxpy(r, p, 1.0, b, n, grid);
        } else {
            gpuCopyVector(r, p, n, grid);
        }
        cg::sync(grid);
        gpuSpMV(rowptr, cols, vals, p, Ax, n, grid);
        if (threadIdx.x == 0 && blockIdx.x == 0)
            grid_dot_result = 0.0;
        cg::sync(grid);
        gpuDotProduct(p, Ax, n, cta, grid);
        cg::sync(grid);
        a = r1 / grid_dot_result;
        gpuSaxpy(p, x, a, n, grid);
        gpuSaxpy(Ax, r, -a, n, grid);
        r0 = r1;
        cg::sync(grid);
        if (threadIdx.x == 0 && blockIdx.x == 0)
            grid_dot_result = 0.0;
        cg::sync(grid);
        gpuDotProduct(r, r, n, cta, grid);
        cg::sync(grid);
        r1 = grid_dot_result;
        k++;
    }
    if (grid.thread_rank() == 0) {
        d_iterations = k - 1;
        printf("cg: %d iterations, r.r %s %g\n", k - 1, r1 <= twice(0.5) * square(d_tol) ? "<=" : ">",
               square(d_tol));
    }
}
