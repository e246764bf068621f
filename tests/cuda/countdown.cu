// Loops whose exit test is != (nvcc's counted-down and unrolled loops) under
// CTA equivalence (tests/test_cta_countdown.py, passes/cta_countdown.py).
// nvcc -ptx -arch=sm_90 -O3 countdown.cu -o countdown.sm90.ptx
extern "C" {

// a grid-stride loop whose stride is a parameter: nvcc computes the trip
// count R = (n - i0 - 1) / stride + 1, runs R & 3 iterations in a remainder
// loop counted down to 0 (!= 0), then an unrolled-by-4 loop (i < n)
__global__ void cd_param_stride(const int *in, int *out, int n, int stride)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = in[i] + 1;
}

// a counted loop with n from %ctaid: nvcc unrolls it by 4 (a counter
// n - n % 4 counted down by 4, != 0) and adds a remainder loop (n % 4
// counted down by 1, != 0) that starts where the first one ended
__global__ void cd_row(float *a, int m)
{
    int n = blockIdx.x % m;
    for (int k = 0; k < n; k++)
        a[blockIdx.x * m + k] = (float)k;
}

// the same counted loop reading b[threadIdx.x + k * blockDim.x]: the
// addresses do not depend on %ctaid, the trip counts do
__global__ void cd_sum(float *a, const float *b, int m)
{
    int n = blockIdx.x % m;
    float s = 0.0f;
    for (int k = 0; k < n; k++)
        s += b[threadIdx.x + k * blockDim.x];
    a[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// an equality test on the induction variable inside the loop (not its
// exit test): the outcome over the iterations is not a threshold, refused
__global__ void cd_mark(int *a, int *hit, int n, int mark)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        a[i] = 2;
        if (i == mark)
            hit[0] = i;
    }
}

}

// a != exit test that is not a counted loop for every lane: with an even
// step, a lane whose distance to n is odd never meets n (its register
// wraps around); the launch must run every CTA
extern "C" __global__ void cd_until(int *out, int n, int step)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i != n; i += step)
        out[i] = i;
}
