// srad: speckle reducing anisotropic diffusion (Yu and Acton, IEEE TIP 2002) of a
// synthetic ultrasound-like image. Each iteration the host computes the speckle
// scale q0^2 from the mean and variance of a region of interest, then kernel 1
// computes the four directional differences and the diffusion coefficient of
// every pixel and kernel 2 applies the divergence update; the image goes back to
// the host after every iteration for the next statistics.
// Modelled on Rodinia srad (v2) (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 srad.cu -o srad
// Run:   ./srad [side]   (default a 64 x 64 image, 4 iterations)
// Checks: every pixel within a relative 1e-4 of the host computation (f32).
// API: cudaMalloc, cudaMemcpy in both directions every iteration, 2-D launches,
//      cudaFree.
// Launches: 2 * ITERATIONS = 8.
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

#define BS 16
#define ITERATIONS 4
#define LAMBDA 0.5f

// The per-pixel formulas, shared by the kernels and the host reference.
__host__ __device__ inline float diffusionCoefficient(float jc, float dN, float dS, float dW,
                                                      float dE, float q0sqr)
{
    float g2 = (dN * dN + dS * dS + dW * dW + dE * dE) / (jc * jc);
    float l = (dN + dS + dW + dE) / jc;
    float num = 0.5f * g2 - 0.0625f * (l * l);
    float den = 1.0f + 0.25f * l;
    float qsqr = num / (den * den);
    den = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
    float c = 1.0f / (1.0f + den);
    return c < 0.0f ? 0.0f : (c > 1.0f ? 1.0f : c);
}

__global__ void sradCoefficients(const float *J, float *dN, float *dS, float *dW, float *dE,
                                 float *C, int side, float q0sqr)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= side || y >= side) return;
    int k = y * side + x;
    float jc = J[k];
    float n = J[max(y - 1, 0) * side + x] - jc, s = J[min(y + 1, side - 1) * side + x] - jc;
    float w = J[y * side + max(x - 1, 0)] - jc, e = J[y * side + min(x + 1, side - 1)] - jc;
    dN[k] = n; dS[k] = s; dW[k] = w; dE[k] = e;
    C[k] = diffusionCoefficient(jc, n, s, w, e, q0sqr);
}

__global__ void sradUpdate(float *J, const float *dN, const float *dS, const float *dW,
                           const float *dE, const float *C, int side)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= side || y >= side) return;
    int k = y * side + x;
    float cN = C[k], cW = C[k];
    float cS = C[min(y + 1, side - 1) * side + x], cE = C[y * side + min(x + 1, side - 1)];
    float d = cN * dN[k] + cS * dS[k] + cW * dW[k] + cE * dE[k];
    J[k] = J[k] + 0.25f * LAMBDA * d;
}

static float roiSpeckle(const float *J, int side)
{
    // Region of interest: the top-left quarter.
    double sum = 0.0, sum2 = 0.0;
    int q = side / 2;
    for (int y = 0; y < q; ++y)
        for (int x = 0; x < q; ++x) { sum += J[y * side + x]; sum2 += (double)J[y * side + x] * J[y * side + x]; }
    double size = (double)q * q, mean = sum / size, var = sum2 / size - mean * mean;
    return (float)(var / (mean * mean));
}

int main(int argc, char **argv)
{
    int side = argc > 1 ? atoi(argv[1]) : 64;
    if (side < 4) side = 64;
    size_t pixels = (size_t)side * side, bytes = pixels * sizeof(float);
    float *J = (float *)malloc(bytes), *ref = (float *)malloc(bytes);
    unsigned int seed = 5u;
    for (size_t i = 0; i < pixels; ++i) {
        seed = seed * 1664525u + 1013904223u;
        J[i] = ref[i] = expf((float)(seed >> 8) / 16777216.0f);
    }
    float *dJ, *dN, *dS, *dW, *dE, *dC;
    CHECK(cudaMalloc(&dJ, bytes));
    CHECK(cudaMalloc(&dN, bytes)); CHECK(cudaMalloc(&dS, bytes));
    CHECK(cudaMalloc(&dW, bytes)); CHECK(cudaMalloc(&dE, bytes));
    CHECK(cudaMalloc(&dC, bytes));
    dim3 block(BS, BS), grid((side + BS - 1) / BS, (side + BS - 1) / BS);
    for (int it = 0; it < ITERATIONS; ++it) {
        float q0sqr = roiSpeckle(J, side);
        CHECK(cudaMemcpy(dJ, J, bytes, cudaMemcpyHostToDevice));
        sradCoefficients<<<grid, block>>>(dJ, dN, dS, dW, dE, dC, side, q0sqr);
        CHECK(cudaGetLastError());
        sradUpdate<<<grid, block>>>(dJ, dN, dS, dW, dE, dC, side);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(J, dJ, bytes, cudaMemcpyDeviceToHost));
    }

    float *n = (float *)malloc(bytes), *s = (float *)malloc(bytes), *w = (float *)malloc(bytes);
    float *e = (float *)malloc(bytes), *c = (float *)malloc(bytes);
    for (int it = 0; it < ITERATIONS; ++it) {
        float q0sqr = roiSpeckle(ref, side);
        for (int y = 0; y < side; ++y)
            for (int x = 0; x < side; ++x) {
                int k = y * side + x;
                float jc = ref[k];
                n[k] = ref[(y > 0 ? y - 1 : 0) * side + x] - jc;
                s[k] = ref[(y < side - 1 ? y + 1 : side - 1) * side + x] - jc;
                w[k] = ref[y * side + (x > 0 ? x - 1 : 0)] - jc;
                e[k] = ref[y * side + (x < side - 1 ? x + 1 : side - 1)] - jc;
                c[k] = diffusionCoefficient(jc, n[k], s[k], w[k], e[k], q0sqr);
            }
        for (int y = 0; y < side; ++y)
            for (int x = 0; x < side; ++x) {
                int k = y * side + x;
                float cS = c[(y < side - 1 ? y + 1 : side - 1) * side + x];
                float cE = c[y * side + (x < side - 1 ? x + 1 : side - 1)];
                float d = c[k] * n[k] + cS * s[k] + c[k] * w[k] + cE * e[k];
                ref[k] = ref[k] + 0.25f * LAMBDA * d;
            }
    }
    int wrong = 0;
    double maxRel = 0.0;
    for (size_t i = 0; i < pixels; ++i) {
        double rel = fabs((double)J[i] - ref[i]) / fabs((double)ref[i]);
        if (rel > maxRel) maxRel = rel;
        if (!(rel <= 1e-4)) {
            if (wrong < 5) fprintf(stderr, "J[%zu] = %f, expected %f\n", i, J[i], ref[i]);
            ++wrong;
        }
    }
    printf("[srad] %d x %d image, %d iterations, max relative error %g\n", side, side, ITERATIONS, maxRel);
    CHECK(cudaFree(dJ)); CHECK(cudaFree(dN)); CHECK(cudaFree(dS));
    CHECK(cudaFree(dW)); CHECK(cudaFree(dE)); CHECK(cudaFree(dC));
    free(J); free(ref); free(n); free(s); free(w); free(e); free(c);
    if (wrong) {
        printf("FAIL (%d pixels off)\n", wrong);
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
