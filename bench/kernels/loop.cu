// Benchmark kernels for bench/run.py (PTX committed next to this file:
//   nvcc -ptx -arch=sm_80 -O3 loop.cu -o loop.ptx)

// A compute loop: per-thread work, little control flow (full-mode speed).
extern "C" __global__ void loop_fma(float *out, int n, int iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = i * 0.001f, acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        acc = fmaf(acc, 0.999f, x);
        x = x * 1.0001f + 0.5f;
        if (acc > 1000.0f)
            acc -= 1000.0f;
    }
    out[i] = acc;
}

// Per-thread trip counts (a hash of the thread id, 0..127) and a divergent
// branch inside the loop: the branch slice is small (the loop counter and the
// bound), the floating-point body is not.
extern "C" __global__ void loop_divergent(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int t = (int)(((unsigned)i * 2654435761u) >> 25);
    float a = 1.0f, b = 0.5f, c = i * 0.25f;
    for (int k = 0; k < t; k++) {
        a = fmaf(a, b, c);
        b = b * 0.75f + a * 0.125f;
        c = c - b * 0.5f;
        a = a * a - c;
        b = fmaf(b, c, a);
        c = c * 1.5f + 0.25f;
        a = fmaf(a, 0.5f, b * c);
        b = fmaf(b, 0.25f, a - c);
        c = fmaf(c, 0.125f, a * b);
        a = a * 0.999f - b * 0.001f;
        if ((k & 3) == (i & 3))
            a = a + b;
    }
    out[i] = a + b + c;
}
