// CFG shapes for the analysis lit tests (cfg, domtree, postdomtree,
// reconvergence, control-dep, loops).
// Made with: nvcc -ptx -arch=sm_90 -O3 analysis_shapes.cu -o analysis_shapes.ptx

// if/else diamond: both sides store, they meet before the final store
extern "C" __global__ void diamond(int *out, const int *in)
{
    int t = threadIdx.x;
    int v = in[t];
    if (v > 0)
        out[t] = v * 3;
    else
        out[t + 64] = v - 7;
    out[t + 128] = v;
}

// early return: threads past n leave before the loop
extern "C" __global__ void early_exit(int *out, const int *in, int n)
{
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    if (t >= n)
        return;
    int s = 0;
#pragma unroll 1
    for (int i = 0; i < in[t]; ++i)
        s += i ^ t;
    out[t] = s;
}

// two nested loops with a data-dependent trip count
extern "C" __global__ void nested(int *out, const int *in, int n)
{
    int t = threadIdx.x;
    int s = 0;
#pragma unroll 1
    for (int i = 0; i < n; ++i) {
        int m = in[i];
#pragma unroll 1
        for (int j = 0; j < m; ++j)
            s += in[j] * i;
        out[i] = s;
    }
    out[t] = s;
}

// a loop that never exits: every thread spins, writing through a volatile
extern "C" __global__ void spin(volatile int *flag)
{
    int t = threadIdx.x;
    if (t == 0)
        flag[1] = 1;
    for (;;)
        flag[t] = flag[t] + 1;
}

// goto into the middle of a loop: two entries, an irreducible cycle
extern "C" __global__ void irreducible(int *out, const int *in)
{
    int t = threadIdx.x;
    int a = in[t];
    if (a & 1)
        goto mid;
top:
    a += in[a & 31];
mid:
    a = a * 3 + 1;
    if (a < 1000)
        goto top;
    out[t] = a;
}
