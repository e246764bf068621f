// Slice test: a loop whose trip count is read from memory (data dependent);
// the slice keeps the load of the count and the induction variable, not the
// accumulated sum.
//   nvcc -ptx -arch=sm_90 -O3 slice_loop.cu -o slice_loop.ptx
extern "C" __global__ void loop_count(const int *counts, const float *x, float *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int n = counts[t];
    float s = 0.0f;
#pragma unroll 1
    for (int k = 0; k < n; k++)
        s = s * 0.5f + x[k];
    out[t] = s;
}
