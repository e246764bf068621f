// Slice test: guarded (predicated) definitions feed a branch; the guard and
// the old value of each guarded register are in the slice.
//   nvcc -ptx -arch=sm_90 -O3 slice_guard.cu -o slice_guard.ptx
extern "C" __global__ void guarded(const int *a, float *out, int lim)
{
    int t = threadIdx.x;
    int x = a[t];
    int m = x;
    if (x > lim) m = lim;          // becomes a min / predicated move
    if (x < -lim) m = -lim;
    int r = t;
    asm volatile("{\n\t.reg .pred p;\n\tsetp.gt.s32 p, %1, 3;\n\t@p add.s32 %0, %0, 5;\n\t}"
                 : "+r"(r) : "r"(m));
    if (r & 1)
        out[t] = (float)m * 0.5f;
}

// A guarded FP multiply that feeds no branch: its guard is a criterion
// (pred-on and FLOP counters need it), the multiply itself is not.
extern "C" __global__ void guard_only(const float *a, float *out)
{
    int t = threadIdx.x;
    float x = a[t];
    float y = x;
    asm volatile("{\n\t.reg .pred q;\n\tsetp.gt.u32 q, %1, 7;\n\t@q mul.f32 %0, %0, 0f40000000;\n\t}"
                 : "+f"(y) : "r"(t));
    out[t] = y;
}
