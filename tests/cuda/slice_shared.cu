// Slice test: a value flows through shared memory across a barrier and then
// decides a branch; the slice keeps the shared store, the barrier and the
// global load that produced the stored value.
//   nvcc -ptx -arch=sm_90 -O3 slice_shared.cu -o slice_shared.ptx
extern "C" __global__ void shared_flag(const int *in, float *out)
{
    __shared__ int flag[256];
    int t = threadIdx.x;
    flag[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    float v = (float)t * 1.5f;
    if (flag[(t + 1) % blockDim.x] > 0)
        out[blockIdx.x * blockDim.x + t] = v * v;
}
