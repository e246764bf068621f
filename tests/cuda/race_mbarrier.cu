// racecheck and mbarriers (tests/test_racecheck_mbarrier.py): warps that
// share memory ordered only by an mbarrier, raw PTX through inline asm.
//   nvcc -ptx -arch=sm_90 -O3 race_mbarrier.cu -o race_mbarrier.sm90.ptx
#include <stdint.h>

__device__ __forceinline__ unsigned smem(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void mbar_init(uint64_t *bar, unsigned count)
{
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(smem(bar)), "r"(count) : "memory");
}

__device__ __forceinline__ uint64_t mbar_arrive(uint64_t *bar)     // the token
{
    uint64_t token;
    asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(token) : "r"(smem(bar)) : "memory");
    return token;
}

__device__ __forceinline__ void mbar_wait(uint64_t *bar, unsigned parity)
{
    unsigned ok = 0;
    while (!ok)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], %2;"
                     " selp.u32 %0, 1, 0, p; }"
                     : "=r"(ok) : "r"(smem(bar)), "r"(parity) : "memory");
}

// Warp 0's first `nprod` lanes write buf[lane] and arrive on an mbarrier
// that expects `nprod` arrivals; threads 32.. (warp 1, possibly partial)
// read buf[t - 32]. mode 0: they wait on phase 0 (parity 0) first; mode 1:
// they do not wait; mode 2: they wait, but the producers write buf again
// after their arrive (a write the phase they wait on does not cover).
extern "C" __global__ void producer_consumer(int *out, int mode, int nprod)
{
    __shared__ int buf[32];
    __shared__ uint64_t bar;
    int t = threadIdx.x;
    if (t == 0)
        mbar_init(&bar, nprod);
    __syncthreads();
    if (t < nprod) {
        buf[t] = 10 * t;
        mbar_arrive(&bar);
        if (mode == 2)
            buf[t] = 10 * t + 1;
    } else if (t >= 32) {
        if (mode != 1)
            mbar_wait(&bar, 0);
        out[t - 32] = buf[t - 32];
    }
}

// Ordering passed on: warp 0 writes buf and arrives on bar_a; warp 1 waits
// on bar_a, then arrives on bar_b; warp 2 waits on bar_b and reads buf.
// with_a = 0: warp 1 arrives on bar_b without waiting on bar_a first.
extern "C" __global__ void chain(int *out, int with_a)
{
    __shared__ int buf[32];
    __shared__ uint64_t bar_a, bar_b;
    int t = threadIdx.x, lane = t % 32, warp = t / 32;
    if (t == 0) {
        mbar_init(&bar_a, 32);
        mbar_init(&bar_b, 32);
    }
    __syncthreads();
    if (warp == 0) {
        buf[lane] = lane + 1;
        mbar_arrive(&bar_a);
    } else if (warp == 1) {
        if (with_a)
            mbar_wait(&bar_a, 0);
        mbar_arrive(&bar_b);
    } else {
        mbar_wait(&bar_b, 0);
        out[lane] = buf[31 - lane];
    }
}
