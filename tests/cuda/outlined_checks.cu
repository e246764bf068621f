// Shared-memory accesses at register addresses for tests/test_outlined.py:
// the segment check and the fast path's lane-shape test, out of line
// (backends/llvm/ops/outlined.py) and inline (PTXC_INLINE_SHAPES=1).
// nvcc -ptx -arch=sm_90 -O3 outlined_checks.cu -o outlined_checks.sm90.ptx
__global__ void shared_at(int *out, int stride, int byte_off)
{
    __shared__ int s[64];
    s[threadIdx.x & 63] = -1;
    __syncthreads();
    int *p = (int *)((char *)s + byte_off + threadIdx.x * stride * 4);
    *p = threadIdx.x * 3 + 1;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = s[(threadIdx.x * 5) & 63];
}
