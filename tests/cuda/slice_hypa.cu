// Slice test (HyPA's two-writer case): a register is written on both arms of
// an earlier if and then decides a later branch; both writers, and the branch
// that chose between them, must be in the slice.
//   nvcc -ptx -arch=sm_90 -O3 slice_hypa.cu -o slice_hypa.ptx
extern "C" __global__ void two_writers(const int *a, const int *b, float *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int k;
    if (t < n)
        k = a[t] * 3;
    else
        k = b[t] + 7;
    float v = (float)t;
    if (k > 10)
        out[t] = v * v + 1.0f;
}
