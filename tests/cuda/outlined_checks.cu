// Shared-memory accesses at register addresses for tests/test_outlined.py:
// the segment check and the fast path's lane-shape test, out of line
// (backends/llvm/ops/outlined.py) and inline (PTXC_INLINE_SHAPES=1).
// nvcc -ptx -arch=sm_90 -O3 outlined_checks.cu -o outlined_checks.sm90.ptx
// (shared_fixed: a variable's address, resolve.uniform_check)
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

// A variable's address (the same constant in every lane): the scalar check.
__global__ void shared_fixed(int *out, int which)
{
    __shared__ int s[64];
    s[threadIdx.x & 63] = threadIdx.x * 2;
    __syncthreads();
    int v;
    if (which == 0)
        v = s[5];
    else if (which == 1)
        v = ((volatile int *)s)[64 + 6];        // byte 280 of 256: out of bounds
    else
        v = *(volatile int *)((char *)s + 2);   // misaligned
    out[threadIdx.x] = v;
}
