// Atomics on global and shared memory.
//   nvcc -ptx -arch=sm_90 -O3 atomics.cu -o atomics.sm90.ptx
//   nvcc -ptx -arch=sm_75 -O3 atomics.cu -o atomics.sm75.ptx

// Histogram of src[i] & 7 into shared bins, then merged into global bins; float sum;
// global max.  hist has 8 ints, fsum one float, gmax one int (all zero-initialised).
extern "C" __global__ void atom_hist(const int *src, int *hist, float *fsum, int *gmax)
{
    __shared__ int bins[8];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    if (t < 8)
        bins[t] = 0;
    __syncthreads();
    int x = src[i];
    atomicAdd(&bins[x & 7], 1);
    atomicAdd(fsum, (float)x);
    atomicMax(gmax, x);
    __syncthreads();
    if (t < 8)
        atomicAdd(&hist[t], bins[t]);
}

// Ticket with atomicAdd (returned value used), atomicCAS, shared float atomics.
// out[i] = old value of counter seen by thread i (order-dependent, so only the multiset
// {0..n-1} is checked); lock ends as 1; sf accumulates 0.5 per thread.
extern "C" __global__ void atom_cas(int *counter, int *out, int *lock, float *fs)
{
    __shared__ float sf;
    int t = threadIdx.x;
    if (t == 0)
        sf = 0.0f;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + t;
    out[i] = atomicAdd(counter, 1);
    atomicCAS(lock, 0, 1);
    atomicAdd(&sf, 0.5f);
    __syncthreads();
    if (t == 0)
        atomicAdd(fs, sf);
}
