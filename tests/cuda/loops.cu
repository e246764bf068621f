// Loops: nested, trip count from %tid.x, trip count from an input array, infinite loops.
//   nvcc -ptx -arch=sm_90 -O3 loops.cu -o loops.sm90.ptx
//   nvcc -ptx -arch=sm_90 -Xcicc -O0 loops.cu -o loops.sm90.O0.ptx

// Trip count threadIdx.x % 5 (0..4); unrolling disabled so the PTX has one simple loop.
extern "C" __global__ void loop_tid(int *out)
{
    int t = threadIdx.x;
    int s = 1;
#pragma unroll 1
    for (int k = 0; k < t % 5; k++)
        s = s * 3 + k;
    out[t] = s;
}

// Nested loops with trip counts from kernel arguments (uniform).
extern "C" __global__ void loop_nested(int *out, int n, int m)
{
    int t = threadIdx.x;
    int s = 0;
#pragma unroll 1
    for (int i = 0; i < n; i++) {
#pragma unroll 1
        for (int j = 0; j < m; j++)
            s += (i ^ j) + t;
    }
    out[t] = s;
}

// Trip count read from an input array (data dependent).
extern "C" __global__ void loop_data(const int *cnt, int *out)
{
    int t = threadIdx.x;
    int s = 0;
#pragma unroll 1
    for (int k = 0; k < cnt[t]; k++)
        s += k + 1;
    out[t] = s;
}

// Default unrolling (nvcc unrolls by 4 with a remainder loop).
extern "C" __global__ void loop_unrolled(const int *a, int *out, int n)
{
    int t = threadIdx.x;
    int s = 0;
    for (int k = 0; k < n; k++)
        s += a[k] * (t + k);
    out[t] = s;
}

// Spins until flag[0] != 0 (never terminates when flag[0] == 0).
extern "C" __global__ void loop_spin(volatile int *flag, int *out)
{
    int n = 0;
    while (1) {
        if (flag[0])
            break;
        n++;
    }
    out[threadIdx.x] = n;
}

// Truly infinite loop: never terminates (the executor must stop at its step budget).
extern "C" __global__ void loop_forever(volatile int *a)
{
    for (;;)
        a[threadIdx.x]++;
}
