// A small CUDA example for ptxc: a thread-dependent branch and a
// data-dependent loop, so divergence and branch counters are non-trivial.
//
// Regenerate the PTX with (run from the repository root):
//   nvcc -ptx -arch=sm_75 -O3 examples/branchy.cu -o examples/branchy.ptx
//
// extern "C" keeps the kernel names unmangled (vecadd_branchy, collatz_steps).

extern "C" __global__ void vecadd_branchy(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)                       // the last CTA is partly idle
        return;
    float x = a[i] + b[i];
    if (threadIdx.x % 2 == 0) {       // thread-dependent: splits every warp
        int steps = ((int)fabsf(a[i])) & 7;   // data-dependent trip count 0..7
        for (int k = 0; k < steps; ++k)
            x = x * 0.5f + 1.0f;
    }
    c[i] = x;
}

extern "C" __global__ void collatz_steps(const unsigned *in, unsigned *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned v = in[i];
    unsigned s = 0;
    while (v > 1 && s < 1000) {       // data-dependent loop, bounded
        v = (v & 1) ? 3 * v + 1 : v / 2;
        ++s;
    }
    out[i] = s;
}
