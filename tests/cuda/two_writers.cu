// Registers with more than one writer (phi candidates for SSA / slicing, the HyPA case).
//   nvcc -ptx -arch=sm_90 -O3 two_writers.cu -o two_writers.sm90.ptx
//   nvcc -ptx -arch=sm_90 -Xcicc -O0 two_writers.cu -o two_writers.sm90.O0.ptx

// v written on both arms of a thread-dependent if; a later branch depends on v.
extern "C" __global__ void tw_ifelse(const int *a, int *out)
{
    int t = threadIdx.x;
    int v;
    if (t & 4)
        v = a[t] + 3;
    else
        v = a[t + 1] * 2;
    if (v > 8)
        out[t] = v;
    else
        out[t + 64] = -v;
}

// Loop-carried values: s and k are redefined in the loop body; the exit test uses both.
extern "C" __global__ void tw_loop(const int *a, int *out, int n)
{
    int t = threadIdx.x;
    int s = 0;
    int k = 0;
#pragma unroll 1
    while (k < n && s < 100) {
        s += a[k] + t;
        k++;
    }
    if (s > 50)
        out[t] = k;
}
