// Slice test: a branch that depends only on %tid / %ntid / %ctaid and a
// kernel parameter; the slice is the index arithmetic, not the loads/stores.
//   nvcc -ptx -arch=sm_90 -O3 slice_tid.cu -o slice_tid.ptx
extern "C" __global__ void tid_branch(const float *a, float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        b[i] = a[i] * 2.0f + 1.0f;
}
