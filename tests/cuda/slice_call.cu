// Slice test: a branch on a value computed by a non-inlined device function;
// the slice runs through the .func body (its return value) and the argument
// stores that feed it.
//   nvcc -ptx -arch=sm_90 -O3 slice_call.cu -o slice_call.ptx
__device__ __noinline__ int classify(int x, int y)
{
    return (x * 7 + y) & 3;
}

extern "C" __global__ void call_branch(const int *a, float *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int c = classify(a[t], t);
    float v = (float)a[t + 1] * 0.25f;
    if (c == 1)
        out[t] = v + 2.0f;
}
