// TopDown as the thesis defines it (Saiz 2021, chapter 4), for tests/test_topdown.py.
// nvcc -ptx -arch=sm_90 -O3 topdown_thesis.cu -o topdown_thesis.sm90.ptx

// Figure 4.2 of the thesis: half of each warp (lanes 0-15) runs the IF part,
// the other half the ELSE part, so neither part uses the whole warp.
extern "C" __global__ void if_else(float *x, int n)
{
    int t = threadIdx.x;
    float v = x[t];
    if ((t & 31) < 16) {
#pragma unroll 1
        for (int i = 0; i < n; ++i)
            v = v * 0.5f + 1.0f;
    } else {
#pragma unroll 1
        for (int i = 0; i < 2 * n; ++i)
            v = v * v - 2.0f;
    }
    x[t] = v;
}

// One warp sums the columns of a 32 x 32 tile: lane t reads tile[t][c], word
// 32 t + c, in bank c for every lane: a 32-way bank conflict per load.
// The stores tile[r][t] are conflict-free (lane t in bank t).
extern "C" __global__ void column_sum(const float *in, float *out)
{
    __shared__ float tile[32][32];
    int t = threadIdx.x;
#pragma unroll 1
    for (int r = 0; r < 32; ++r)
        tile[r][t] = in[r * 32 + t];
    __syncthreads();
    float s = 0.0f;
#pragma unroll 1
    for (int c = 0; c < 32; ++c)
        s += tile[t][c];
    out[t] = s;
}

// The same with a padded row (33 words): lane t reads word 33 t + c, bank
// (t + c) mod 32, all different: no conflict.
extern "C" __global__ void column_sum_padded(const float *in, float *out)
{
    __shared__ float tile[32][33];
    int t = threadIdx.x;
#pragma unroll 1
    for (int r = 0; r < 32; ++r)
        tile[r][t] = in[r * 32 + t];
    __syncthreads();
    float s = 0.0f;
#pragma unroll 1
    for (int c = 0; c < 32; ++c)
        s += tile[t][c];
    out[t] = s;
}
