// gaussian: solves A x = b by Gaussian elimination without pivoting on the device
// (a diagonally dominant A, so no pivoting is needed) and back substitution on the
// host. For each pivot t, kernel 1 computes the multipliers of the rows below t
// and kernel 2 (a 2-D grid) subtracts the scaled pivot row from them.
// Modelled on Rodinia gaussian (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 gaussian.cu -o gaussian
// Run:   ./gaussian [n]   (default n = 32)
// Checks: the solution is within 1e-4 of the host's elimination (same algorithm,
//         f32) and within 1e-3 of the x that generated b.
// API: cudaMalloc, cudaMemcpy, cudaMemset, 1-D and 2-D launches in a host loop,
//      cudaDeviceSynchronize, cudaFree.
// Launches: 2 * (n - 1).
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>

#define CHECK(call)                                                              \
    do {                                                                         \
        cudaError_t err_ = (call);                                               \
        if (err_ != cudaSuccess) {                                               \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
                    cudaGetErrorString(err_));                                   \
            exit(EXIT_FAILURE);                                                  \
        }                                                                        \
    } while (0)

// mult[i] = a[i][t] / a[t][t] for the rows i > t.
__global__ void multipliers(float *mult, const float *a, int n, int t)
{
    int i = t + 1 + blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        mult[i] = a[i * n + t] / a[t * n + t];
}

// Rows i > t: a[i][j] -= mult[i] * a[t][j] for j >= t, and b[i] -= mult[i] * b[t].
__global__ void eliminate(float *a, float *b, const float *mult, int n, int t)
{
    int i = t + 1 + blockIdx.y * blockDim.y + threadIdx.y;
    int j = t + blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || j >= n) return;
    a[i * n + j] -= mult[i] * a[t * n + j];
    if (j == t)
        b[i] -= mult[i] * b[t];
}

static void backSubstitute(const float *a, const float *b, float *x, int n)
{
    for (int i = n - 1; i >= 0; --i) {
        float s = b[i];
        for (int j = i + 1; j < n; ++j) s -= a[i * n + j] * x[j];
        x[i] = s / a[i * n + i];
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 32;
    if (n < 2) n = 32;
    float *a = (float *)malloc(n * n * sizeof(float)), *b = (float *)malloc(n * sizeof(float));
    float *xTrue = (float *)malloc(n * sizeof(float));
    unsigned int seed = 17u;
    for (int i = 0; i < n; ++i) {
        float rowSum = 0.0f;
        for (int j = 0; j < n; ++j) {
            seed = seed * 1664525u + 1013904223u;
            a[i * n + j] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
            rowSum += fabsf(a[i * n + j]);
        }
        a[i * n + i] = rowSum + 1.0f;
        xTrue[i] = (float)(i % 7) - 3.0f;
    }
    for (int i = 0; i < n; ++i) {
        double s = 0.0;
        for (int j = 0; j < n; ++j) s += (double)a[i * n + j] * xTrue[j];
        b[i] = (float)s;
    }
    float *dA, *dB, *dMult;
    CHECK(cudaMalloc(&dA, n * n * sizeof(float)));
    CHECK(cudaMalloc(&dB, n * sizeof(float)));
    CHECK(cudaMalloc(&dMult, n * sizeof(float)));
    CHECK(cudaMemset(dMult, 0, n * sizeof(float)));
    CHECK(cudaMemcpy(dA, a, n * n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, b, n * sizeof(float), cudaMemcpyHostToDevice));

    const int threads1 = 64, tile = 8;
    for (int t = 0; t < n - 1; ++t) {
        int rows = n - 1 - t;
        multipliers<<<(rows + threads1 - 1) / threads1, threads1>>>(dMult, dA, n, t);
        CHECK(cudaGetLastError());
        dim3 block(tile, tile), grid((n - t + tile - 1) / tile, (rows + tile - 1) / tile);
        eliminate<<<grid, block>>>(dA, dB, dMult, n, t);
        CHECK(cudaGetLastError());
    }
    CHECK(cudaDeviceSynchronize());
    float *ga = (float *)malloc(n * n * sizeof(float)), *gb = (float *)malloc(n * sizeof(float));
    CHECK(cudaMemcpy(ga, dA, n * n * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(gb, dB, n * sizeof(float), cudaMemcpyDeviceToHost));
    float *x = (float *)malloc(n * sizeof(float)), *xRef = (float *)malloc(n * sizeof(float));
    backSubstitute(ga, gb, x, n);

    // Host elimination, same order of operations.
    float *mult = (float *)malloc(n * sizeof(float));
    for (int t = 0; t < n - 1; ++t) {
        for (int i = t + 1; i < n; ++i) mult[i] = a[i * n + t] / a[t * n + t];
        for (int i = t + 1; i < n; ++i) {
            for (int j = t; j < n; ++j) a[i * n + j] -= mult[i] * a[t * n + j];
            b[i] -= mult[i] * b[t];
        }
    }
    backSubstitute(a, b, xRef, n);
    int wrong = 0;
    double maxErr = 0.0;
    for (int i = 0; i < n; ++i) {
        double e1 = fabs((double)x[i] - xRef[i]), e2 = fabs((double)x[i] - xTrue[i]);
        if (e2 > maxErr) maxErr = e2;
        if (!(e1 <= 1e-4) || !(e2 <= 1e-3)) {
            if (wrong < 5) fprintf(stderr, "x[%d] = %f, host %f, true %f\n", i, x[i], xRef[i], xTrue[i]);
            ++wrong;
        }
    }
    printf("[gaussian] n = %d, %d launches, max |x - x_true| = %g\n", n, 2 * (n - 1), maxErr);
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dMult));
    free(a); free(b); free(xTrue); free(ga); free(gb); free(x); free(xRef); free(mult);
    if (wrong) {
        printf("FAIL (%d wrong)\n", wrong);
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
