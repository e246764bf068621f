// A __noinline__ device function whose result decides a branch in the caller.
//   nvcc -ptx -arch=sm_90 -O3 func_call.cu -o func_call.sm90.ptx
//   nvcc -ptx -arch=sm_75 -O3 func_call.cu -o func_call.sm75.ptx

__device__ __noinline__ int classify(int x)
{
    if (x > 5)
        return x - 5;
    return 0;
}

extern "C" __global__ void call_branch(const int *a, int *out)
{
    int t = threadIdx.x;
    int c = classify(a[t]);
    if (c != 0)
        out[t] = c;
}
