// CTAs that decide on what earlier CTAs wrote with plain stores (no atomics):
// CTA b goes on only if CTA b-1 has set flags[b-1]. METRICS.md runs CTAs in
// linear order, so every CTA goes on; run in parallel, a CTA could read the
// flag before its predecessor wrote it. ptxc must see this in the slice and
// run such a kernel's CTAs in order (tests/test_cta_order.py).
// nvcc -ptx -arch=sm_90 -O3 cta_order.cu -o cta_order.sm90.ptx
extern "C" __global__ void relay(int *flags, int *out)
{
    int b = blockIdx.x;
    if (threadIdx.x == 0) {
        int ready = (b == 0) ? 1 : ((volatile int *)flags)[b - 1];
        if (ready) {
            flags[b] = 1;
            out[b] = b + 1;
        }
    }
}

// The same decision on memory no CTA writes: CTAs may run in any order.
extern "C" __global__ void relay_readonly(const int *flags, int *out)
{
    int b = blockIdx.x;
    if (threadIdx.x == 0 && flags[b])
        out[b] = b + 1;
}
