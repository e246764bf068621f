// Busy-waits on each clock of the PTX ISA (clock64(), clock(), %globaltimer)
// that store the measured delta and the iterations: the modelled clock
// advances with executed instructions, so the wait ends after about
// `cycles` warp instructions and the delta is at least `cycles`.
//   nvcc -ptx -arch=sm_90 -O3 clock_delta.cu -o clock_delta.sm90.ptx
__device__ __forceinline__ unsigned long long globaltimer()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

extern "C" __global__ void spin64(long long cycles, long long *delta, int *iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    long long start = clock64(), now;
    int n = 0;
    do {
        now = clock64();
        ++n;
    } while (now - start < cycles);
    delta[i] = now - start;
    iters[i] = n;
}

extern "C" __global__ void spin32(int cycles, long long *delta, int *iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned start = (unsigned)clock(), now;
    int n = 0;
    do {
        now = (unsigned)clock();
        ++n;
    } while ((int)(now - start) < cycles);
    delta[i] = (long long)(now - start);
    iters[i] = n;
}

extern "C" __global__ void spin_timer(long long ns, long long *delta, int *iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long start = globaltimer(), now;
    int n = 0;
    do {
        now = globaltimer();
        ++n;
    } while ((long long)(now - start) < ns);
    delta[i] = (long long)(now - start);
    iters[i] = n;
}
