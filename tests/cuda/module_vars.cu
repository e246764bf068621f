// Module variables that live between launches: a __device__ counter that
// every launch adds to, and a __constant__ table the host may overwrite.
// nvcc -ptx -arch=sm_90 module_vars.cu -o module_vars.sm90.ptx
__device__ unsigned int launches_seen;
__constant__ int table[4] = {10, 20, 30, 40};

extern "C" __global__ void bump(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0)
        atomicAdd(&launches_seen, 1u);
    if (i < n)
        out[i] = table[i % 4] + (int)launches_seen;
}
