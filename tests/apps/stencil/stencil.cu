// stencil: iterative 7-point Jacobi stencil on a 3-D grid (interior points only;
// the boundary keeps its initial values). 2.5-D blocking: a CTA covers a 32 x 4
// column of the x-y plane and marches along z, keeping the points below and above
// in registers and the current plane (with a one-point halo) in shared memory.
// Modelled on Parboil stencil (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 stencil.cu -o stencil
// Run:   ./stencil [n] [out.bin]   (an n x n x 16 grid, default n = 32; 3 iterations)
// Checks: every point within a relative 1e-5 of the host computation (f32).
//         out.bin: int32 nx ny nz iterations, f32 c0 c1, f32 a0[nz][ny][nx],
//         result[nz][ny][nx]; the test recomputes it with numpy.
// API: cudaMalloc, cudaMemcpy (H2D, D2H, D2D), 2-D grid marching in z,
//      __syncthreads twice per plane, cudaFree.
// Launches: ITERATIONS = 3.
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

#define BX 32
#define BY 4
#define ITERATIONS 3

__global__ void stencil7(const float *in, float *out, int nx, int ny, int nz, float c0, float c1)
{
    __shared__ float plane[BY + 2][BX + 2];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * BX + tx, y = blockIdx.y * BY + ty;
    bool inGrid = x < nx && y < ny;
    bool interior = inGrid && x > 0 && x < nx - 1 && y > 0 && y < ny - 1;
    int stride = nx * ny;
    int at = y * nx + x;
    float below = inGrid ? in[at] : 0.0f;
    float cur = inGrid ? in[at + stride] : 0.0f;
    for (int z = 1; z < nz - 1; ++z) {
        int here = at + z * stride;
        float above = inGrid ? in[here + stride] : 0.0f;
        __syncthreads();                              // the previous plane is consumed
        plane[ty + 1][tx + 1] = cur;
        if (inGrid) {
            if (tx == 0 && x > 0) plane[ty + 1][0] = in[here - 1];
            if (tx == BX - 1 && x < nx - 1) plane[ty + 1][BX + 1] = in[here + 1];
            if (ty == 0 && y > 0) plane[0][tx + 1] = in[here - nx];
            if (ty == BY - 1 && y < ny - 1) plane[BY + 1][tx + 1] = in[here + nx];
        }
        __syncthreads();
        if (interior)
            out[here] = c1 * (plane[ty + 1][tx] + plane[ty + 1][tx + 2] + plane[ty][tx + 1] +
                              plane[ty + 2][tx + 1] + below + above) - c0 * cur;
        below = cur;
        cur = above;
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 32;
    if (n < 3) n = 32;
    const char *outPath = argc > 2 ? argv[2] : NULL;
    int nx = n, ny = n, nz = 16;
    size_t points = (size_t)nx * ny * nz, bytes = points * sizeof(float);
    const float c0 = 1.0f / 6.0f, c1 = 1.0f / 6.0f / 6.0f;
    float *a0 = (float *)malloc(bytes), *ref = (float *)malloc(bytes), *next = (float *)malloc(bytes);
    float *got = (float *)malloc(bytes);
    unsigned int seed = 3u;
    for (size_t i = 0; i < points; ++i) {
        seed = seed * 1664525u + 1013904223u;
        a0[i] = (float)(seed >> 8) / 16777216.0f;
    }
    float *dA, *dB;
    CHECK(cudaMalloc(&dA, bytes));
    CHECK(cudaMalloc(&dB, bytes));
    CHECK(cudaMemcpy(dA, a0, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, dA, bytes, cudaMemcpyDeviceToDevice));   // boundary of the second grid
    dim3 block(BX, BY), grid((nx + BX - 1) / BX, (ny + BY - 1) / BY);
    float *src = dA, *dst = dB;
    for (int it = 0; it < ITERATIONS; ++it) {
        stencil7<<<grid, block>>>(src, dst, nx, ny, nz, c0, c1);
        CHECK(cudaGetLastError());
        float *t = src; src = dst; dst = t;
    }
    CHECK(cudaMemcpy(got, src, bytes, cudaMemcpyDeviceToHost));

    for (size_t i = 0; i < points; ++i) ref[i] = next[i] = a0[i];
    for (int it = 0; it < ITERATIONS; ++it) {
        for (int z = 1; z < nz - 1; ++z)
            for (int y = 1; y < ny - 1; ++y)
                for (int x = 1; x < nx - 1; ++x) {
                    size_t p = ((size_t)z * ny + y) * nx + x;
                    next[p] = c1 * (ref[p - 1] + ref[p + 1] + ref[p - nx] + ref[p + nx] +
                                    ref[p - (size_t)nx * ny] + ref[p + (size_t)nx * ny]) - c0 * ref[p];
                }
        float *t = ref; ref = next; next = t;
    }
    int wrong = 0;
    double maxRel = 0.0;
    for (size_t i = 0; i < points; ++i) {
        double rel = fabs((double)got[i] - ref[i]) / fmax(fabs((double)ref[i]), 1e-3);
        if (rel > maxRel) maxRel = rel;
        if (!(rel <= 1e-5)) {
            if (wrong < 5) fprintf(stderr, "point %zu = %g, expected %g\n", i, got[i], ref[i]);
            ++wrong;
        }
    }
    printf("[stencil] %d x %d x %d, %d iterations, max relative error %g\n", nx, ny, nz, ITERATIONS, maxRel);
    if (outPath) {
        FILE *f = fopen(outPath, "wb");
        if (!f) { perror(outPath); return EXIT_FAILURE; }
        int header[4] = {nx, ny, nz, ITERATIONS};
        float coef[2] = {c0, c1};
        fwrite(header, sizeof(int), 4, f);
        fwrite(coef, sizeof(float), 2, f);
        fwrite(a0, sizeof(float), points, f);
        fwrite(got, sizeof(float), points, f);
        fclose(f);
    }
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    free(a0); free(ref); free(next); free(got);
    if (wrong) {
        printf("FAIL (%d points off)\n", wrong);
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
