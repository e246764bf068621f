// Early return, exit, trap, bra.uni.
//   nvcc -ptx -arch=sm_90 -O3 early_ret.cu -o early_ret.sm90.ptx
//   nvcc -ptx -arch=sm_90 -G early_ret.cu -o early_ret.sm90.G.ptx

// Threads with t >= n return at once; of the rest, odd threads return after one store.
extern "C" __global__ void early_ret(int *out, int n)
{
    int t = threadIdx.x;
    if (t >= n)
        return;
    out[t] = 1;
    if (t & 1)
        return;
    out[t] = 2 + out[t + 1];
}

// Inline-asm exit: threads with t % 4 == 3 exit before the store.
extern "C" __global__ void asm_exit(int *out)
{
    int t = threadIdx.x;
    if (t % 4 == 3)
        asm volatile("exit;");
    out[t] = t;
}

// __trap() when an input is negative.
extern "C" __global__ void trap_neg(const int *a, int *out)
{
    int t = threadIdx.x;
    int x = a[t];
    if (x < 0)
        __trap();
    out[t] = x + 1;
}
