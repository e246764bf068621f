// nvcc -ptx -arch=sm_90 -O3 luo_suda_bench.cu -o luo_suda_bench.sm90.ptx
//
// The benchmark kinds of Luo & Suda 2011, Table 3 (ported there from
// Linderman et al.'s Merge benchmarks), written for ptxc's validation of the
// execution-time model (bench/predict_validate.py) and its tests
// (tests/test_luo_suda_bench.py). Section 4.2 varies the warps per SM from 1
// to 32 on the same data, so every kernel walks its data with a grid-stride
// loop: any grid and block size compute the same result.
//
//   svm_dot        "Kernel from a SVM-based algorithm", 512 x 768: the linear
//                  kernel of an SVM, one dot product per input vector
//   matmul         "Matrix multiple", 256 x 256: C = A B, one element per step
//   linear_filter  "Image filter to compute 9-pixels avg", 800 x 800 (borders
//                  clamped)
//   sepia          "Filter for artificially aging images", 800 x 800 RGB
//   black_scholes  "European option pricing", 900000 options
//   black_scholes7 "Modified European option pricing": Black-Scholes where
//                  the result of each of its seven equations gets one more
//                  parameter read from memory (section 4.1), 900000 options

#define ITEMS(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
                         i += gridDim.x * blockDim.x)

extern "C" __global__ void svm_dot(const float *x, const float *w, float *out, int rows,
                                   int cols)
{
    ITEMS(r, rows) {
        float s = 0.0f;
        for (int j = 0; j < cols; ++j)
            s += x[r * cols + j] * w[j];
        out[r] = s;
    }
}

extern "C" __global__ void matmul(const float *a, const float *b, float *c, int n)
{
    ITEMS(e, n * n) {
        int i = e / n, j = e % n;
        float s = 0.0f;
        for (int k = 0; k < n; ++k)
            s += a[i * n + k] * b[k * n + j];
        c[e] = s;
    }
}

extern "C" __global__ void linear_filter(const float *in, float *out, int width, int height)
{
    ITEMS(p, width * height) {
        int y = p / width, x = p % width;
        float s = 0.0f;
        for (int dy = -1; dy <= 1; ++dy) {
            int yy = min(max(y + dy, 0), height - 1);
            for (int dx = -1; dx <= 1; ++dx) {
                int xx = min(max(x + dx, 0), width - 1);
                s += in[yy * width + xx];
            }
        }
        out[p] = s * (1.0f / 9.0f);
    }
}

extern "C" __global__ void sepia(const float *in, float *out, int pixels)
{
    ITEMS(p, pixels) {
        float r = in[3 * p], g = in[3 * p + 1], b = in[3 * p + 2];
        out[3 * p] = fminf(255.0f, 0.393f * r + 0.769f * g + 0.189f * b);
        out[3 * p + 1] = fminf(255.0f, 0.349f * r + 0.686f * g + 0.168f * b);
        out[3 * p + 2] = fminf(255.0f, 0.272f * r + 0.534f * g + 0.131f * b);
    }
}

// The cumulative normal distribution: the polynomial approximation of
// Abramowitz & Stegun 26.2.17, as in the CUDA SDK's BlackScholes sample.
__device__ float cnd(float d)
{
    const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f,
                A4 = -1.821255978f, A5 = 1.330274429f, RSQRT2PI = 0.39894228040143267794f;
    float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
    float c = RSQRT2PI * expf(-0.5f * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
    return d > 0 ? 1.0f - c : c;
}

extern "C" __global__ void black_scholes(const float *s, const float *x, const float *t,
                                         float *call, float *put, float r, float v, int n)
{
    ITEMS(i, n) {
        float sqrt_t = sqrtf(t[i]);
        float d1 = (logf(s[i] / x[i]) + (r + 0.5f * v * v) * t[i]) / (v * sqrt_t);
        float d2 = d1 - v * sqrt_t;
        float cnd_d1 = cnd(d1), cnd_d2 = cnd(d2);
        float exp_rt = expf(-r * t[i]);
        call[i] = s[i] * cnd_d1 - x[i] * exp_rt * cnd_d2;
        put[i] = x[i] * exp_rt * (1.0f - cnd_d2) - s[i] * (1.0f - cnd_d1);
    }
}

// e holds 7 n extra parameters: e[q n + i] is added to the result of
// equation q (0 sqrt_t, 1 d1, 2 d2, 3 cnd_d1, 4 cnd_d2, 5 exp_rt, 6 call).
extern "C" __global__ void black_scholes7(const float *s, const float *x, const float *t,
                                          const float *e, float *call, float *put, float r,
                                          float v, int n)
{
    ITEMS(i, n) {
        float sqrt_t = sqrtf(t[i]) + e[i];
        float d1 = (logf(s[i] / x[i]) + (r + 0.5f * v * v) * t[i]) / (v * sqrt_t) + e[n + i];
        float d2 = d1 - v * sqrt_t + e[2 * n + i];
        float cnd_d1 = cnd(d1) + e[3 * n + i];
        float cnd_d2 = cnd(d2) + e[4 * n + i];
        float exp_rt = expf(-r * t[i]) + e[5 * n + i];
        call[i] = s[i] * cnd_d1 - x[i] * exp_rt * cnd_d2 + e[6 * n + i];
        put[i] = x[i] * exp_rt * (1.0f - cnd_d2) - s[i] * (1.0f - cnd_d1);
    }
}
