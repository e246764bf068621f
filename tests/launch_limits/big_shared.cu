// 300000 bytes of static shared memory: more than any GPU gives one block
// (ptxas refuses it; nvcc -ptx still writes the PTX). tests/test_launch_limits.py
// checks that a launch is refused with the limit instead of failing inside ptxc.
// nvcc -ptx -arch=sm_90 big_shared.cu -o big_shared.sm90.ptx
__global__ void big_shared(int *out)
{
    __shared__ int s[75000];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}
