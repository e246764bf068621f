// Every atom.shared operation ptxc runs without locked instructions
// (backends/llvm/ops/atomics.py, PLAIN), on two addresses per operation,
// for the threads t < n only (a partial warp), between two barriers; the
// old values and the final shared words are written out.
//   nvcc -ptx -arch=sm_90 -O3 shared_atomics.cu -o shared_atomics.sm90.ptx
#define NOPS 12
extern "C" __global__ void shared_ops(const int *a, const int *init, int *old, int *fin,
                                      float *fold, float *ffin, unsigned long long *lold,
                                      unsigned long long *lfin, int n)
{
    __shared__ int s[2 * NOPS];
    __shared__ float f[2];
    __shared__ unsigned long long l[2];
    int t = threadIdx.x;
    if (t < 2 * NOPS) s[t] = init[t];
    if (t < 2) { f[t] = 0.5f * t; l[t] = 1000ull * t; }
    __syncthreads();
    if (t < n) {
        int v = a[t], k = v & 1;
        unsigned u = (unsigned)v;
        int *o = old + t * NOPS;
        o[0] = atomicAdd(&s[0 + k], v);
        o[1] = atomicMin(&s[2 + k], v);
        o[2] = atomicMax(&s[4 + k], v);
        o[3] = (int)atomicMin((unsigned *)&s[6 + k], u);
        o[4] = (int)atomicMax((unsigned *)&s[8 + k], u);
        o[5] = (int)atomicInc((unsigned *)&s[10 + k], 17u);
        o[6] = (int)atomicDec((unsigned *)&s[12 + k], 13u);
        o[7] = atomicExch(&s[14 + k], v);
        o[8] = atomicCAS(&s[16 + k], v & 3, v);
        o[9] = atomicAnd(&s[18 + k], v);
        o[10] = atomicOr(&s[20 + k], v);
        o[11] = atomicXor(&s[22 + k], v);
        fold[t] = atomicAdd(&f[k], v * 0.1f);
        lold[t] = atomicAdd(&l[k], (unsigned long long)u * 3u);
    }
    __syncthreads();
    if (t < 2 * NOPS) fin[blockIdx.x * 2 * NOPS + t] = s[t];
    if (t < 2) { ffin[blockIdx.x * 2 + t] = f[t]; lfin[blockIdx.x * 2 + t] = l[t]; }
}
