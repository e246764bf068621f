// Unreachable code: code after __trap(), __builtin_unreachable().
//   nvcc -ptx -arch=sm_90 -O3 unreachable.cu -o unreachable.sm90.ptx
//   nvcc -ptx -arch=sm_90 -Xcicc -O0 unreachable.cu -o unreachable.sm90.O0.ptx

extern "C" __global__ void unr_after_trap(int *out, int n)
{
    int t = threadIdx.x;
    if (n < 0) {
        __trap();
        out[t] = 7;   // unreachable
    }
    out[t] = n;
}

extern "C" __global__ void unr_builtin(const int *a, int *out)
{
    int t = threadIdx.x;
    int v;
    switch (a[t] & 3) {
    case 0: v = 1; break;
    case 1: v = 5; break;
    case 2: v = 9; break;
    case 3: v = 11; break;
    default: __builtin_unreachable();
    }
    out[t] = v;
}

// Dead code after an infinite loop with a break the compiler cannot prove taken.
extern "C" __global__ void unr_after_loop(volatile int *flag, int *out)
{
    int t = threadIdx.x;
    while (true) {
        if (flag[t] == 42)
            break;
    }
    out[t] = 1;
}
