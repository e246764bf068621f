// rdc_cg (3/3): the host of a conjugate gradient solver built from three
// files with relocatable device code, in the style of cuda-samples'
// conjugateGradientMultiBlockCG:
//   nvcc -cudart shared -arch=sm_90 -rdc=true rdc_cg_main.cu rdc_cg_math.cu rdc_cg_kernel.cu
// A symmetric, diagonally dominant tridiagonal system A x = b with a known
// solution; the tolerance and iteration limit go to device variables of
// the other files (cudaMemcpyToSymbol on extern __device__ / __constant__),
// the iteration count comes back from one (cudaMemcpyFromSymbol). Writes x
// to OUT (n doubles) and prints PASS when |b - A x| is small.
//   usage: rdc_cg OUT [n]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "rdc_cg.h"

#define CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    printf("FAIL: %s: %s\n", #call, cudaGetErrorString(e_)); return 1; } } while (0)

// row i: -1 at i-1 and i+1, 4 + (i % 3) / 2 on the diagonal
static void matrix(int n, std::vector<int> &rowptr, std::vector<int> &cols, std::vector<double> &vals)
{
    rowptr.push_back(0);
    for (int i = 0; i < n; i++) {
        for (int j = i - 1; j <= i + 1; j++) {
            if (j < 0 || j >= n)
                continue;
            cols.push_back(j);
            vals.push_back(j == i ? 4.0 + (i % 3) * 0.5 : -1.0);
        }
        rowptr.push_back((int)cols.size());
    }
}

static void spmv(int n, const std::vector<int> &rp, const std::vector<int> &c,
                 const std::vector<double> &v, const double *x, double *y)
{
    for (int i = 0; i < n; i++) {
        y[i] = 0.0;
        for (int k = rp[i]; k < rp[i + 1]; k++)
            y[i] += v[k] * x[c[k]];
    }
}

template <typename T> static T *device_copy(const std::vector<T> &h)
{
    T *d = nullptr;
    cudaMalloc(&d, h.size() * sizeof(T));
    cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
    return d;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: rdc_cg OUT [n]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 1000;
    std::vector<int> rowptr, cols;
    std::vector<double> vals, xtrue(n), rhs(n), x(n), ax(n);
    matrix(n, rowptr, cols, vals);
    for (int i = 0; i < n; i++)
        xtrue[i] = (i * 37) % 11 - 5;
    spmv(n, rowptr, cols, vals, xtrue.data(), rhs.data());

    double tol = 1e-10;
    int max_iter = 500, iterations = -1;
    CHECK(cudaMemcpyToSymbol(d_tol, &tol, sizeof tol));             // defined in rdc_cg_math.cu
    CHECK(cudaMemcpyToSymbol(c_max_iter, &max_iter, sizeof max_iter));   // rdc_cg_kernel.cu
    int *d_rowptr = device_copy(rowptr), *d_cols = device_copy(cols);
    double *d_vals = device_copy(vals), *d_rhs = device_copy(rhs), *d_x, *d_ax, *d_p, *d_r;
    CHECK(cudaMalloc(&d_x, n * sizeof(double)));
    CHECK(cudaMalloc(&d_ax, n * sizeof(double)));
    CHECK(cudaMalloc(&d_p, n * sizeof(double)));
    CHECK(cudaMalloc(&d_r, n * sizeof(double)));
    initVectors<<<(n + THREADS - 1) / THREADS, THREADS>>>(d_rhs, d_x, d_r, n);   // rdc_cg_math.cu
    CHECK(cudaGetLastError());

    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    size_t smem = THREADS / 32 * sizeof(double);
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gpuConjugateGradient, THREADS, smem));
    int blocks = per_sm * prop.multiProcessorCount;
    if (blocks > (n + THREADS - 1) / THREADS)
        blocks = (n + THREADS - 1) / THREADS;
    void *args[] = {&d_rowptr, &d_cols, &d_vals, &d_x, &d_ax, &d_p, &d_r, &n};
    CHECK(cudaLaunchCooperativeKernel((void *)gpuConjugateGradient, blocks, THREADS, args, smem, 0));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpyFromSymbol(&iterations, d_iterations, sizeof iterations));   // rdc_cg_kernel.cu
    CHECK(cudaMemcpy(x.data(), d_x, n * sizeof(double), cudaMemcpyDeviceToHost));

    spmv(n, rowptr, cols, vals, x.data(), ax.data());
    double res = 0.0, norm = 0.0;
    for (int i = 0; i < n; i++) {
        res += (rhs[i] - ax[i]) * (rhs[i] - ax[i]);
        norm += rhs[i] * rhs[i];
    }
    FILE *f = fopen(argv[1], "wb");
    if (!f || fwrite(x.data(), sizeof(double), n, f) != (size_t)n) {
        printf("FAIL: cannot write %s\n", argv[1]);
        return 1;
    }
    fclose(f);
    printf("%d blocks of %d threads, %d iterations, |b - Ax| = %.3e\n", blocks, THREADS, iterations,
           sqrt(res));
    bool ok = iterations > 0 && iterations < max_iter && sqrt(res) <= 1e-8 * sqrt(norm);
    printf("%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
