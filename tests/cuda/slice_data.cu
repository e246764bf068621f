// Slice test: a data-dependent branch (the slice keeps the load of a[i] and
// its address computation, but not the arithmetic stored to b).
//   nvcc -ptx -arch=sm_90 -O3 slice_data.cu -o slice_data.ptx
extern "C" __global__ void data_branch(const float *a, float *b, float *c)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = a[i];
    if (x > 0.0f)
        b[i] = x * 3.0f;
    else
        c[i] = x - 1.0f;
}
