// Recursion on the per-thread call stack (tests/test_call_stack.py).
//   nvcc -ptx -arch=sm_90 -O3 recursion.cu -o recursion.sm90.ptx
// ptxas -v (13.0, sm_90) frames: fib 24, walk 56, iseven/isodd 16 bytes;
// ptxc's model (backends/llvm/ops/call_frames.py) gives 24, 40, 16, 16.

// Two calls per level: lanes recurse to different depths (divergence
// inside the recursion, reconvergence at each return).
__device__ int fib(int n)
{
    if (n < 2)
        return n;
    return fib(n - 1) + fib(n - 2);
}

// A local array in every frame, and a pointer into the caller's frame
// passed down: each activation must have its own array.
__device__ int walk(int n, const int *up)
{
    if (n == 0)
        return *up;
    int buf[4];
    for (int i = 0; i < 4; i++)
        buf[i] = n * 10 + i;
    return walk(n - 1, buf + (n & 3)) + *up;
}

// Mutual recursion: iseven -> isodd -> iseven ...
__device__ int isodd(int n);
__device__ int iseven(int n) { return n == 0 ? 1 : isodd(n - 1); }
__device__ int isodd(int n) { return n == 0 ? 0 : iseven(n - 1); }

extern "C" __global__ void fib_kernel(int *out, int base)
{
    out[threadIdx.x] = fib(base + threadIdx.x % 5);
}

extern "C" __global__ void walk_kernel(int *out, int base)
{
    int top = 7;
    out[threadIdx.x] = walk(base + threadIdx.x % 3, &top);
}

extern "C" __global__ void parity_kernel(int *out, int base)
{
    out[threadIdx.x] = iseven(base + threadIdx.x);
}
