// Guarded (predicated) definitions: @%p / @!%p instructions, and selp.
//   nvcc -ptx -arch=sm_90 -O3 guarded.cu -o guarded.sm90.ptx
//   nvcc -ptx -arch=sm_75 -O3 guarded.cu -o guarded.sm75.ptx

// Simple select: nvcc uses selp.
extern "C" __global__ void g_selp(const int *a, int *out)
{
    int t = threadIdx.x;
    int x = a[t];
    out[t] = x > 0 ? x : -2 * x;
}

// Conditional store: nvcc emits a predicated branch (or a guarded st).
extern "C" __global__ void g_store(const int *a, int *out)
{
    int t = threadIdx.x;
    int x = a[t];
    if (x > 0)
        out[t] = x;
}

// Conditional min/max-like updates inside an unrolled loop: tends to give guarded movs.
extern "C" __global__ void g_argmax(const int *a, int *out, int n)
{
    int t = threadIdx.x;
    int best = -1000000;
    int idx = -1;
    for (int k = 0; k < 4; k++) {
        int x = a[t * 4 + k];
        if (x > best) {
            best = x;
            idx = k;
        }
    }
    out[t] = idx;
}

// Early exits and conditional atomics.
extern "C" __global__ void g_atomic(const int *a, int *cnt)
{
    int t = threadIdx.x;
    if (a[t] & 1)
        atomicAdd(cnt, 1);
}

// NVVM itself only ever guards branches (`@%p bra`); guarded definitions in PTX come from
// inline PTX, as in CUDA's own headers (e.g. cooperative_groups/details/invoke.h uses
// "@p mov.s32").  Both arms of a select written as @p / @!p instructions:
extern "C" __global__ void g_asm_both(const int *a, int *out)
{
    int t = threadIdx.x;
    int x = a[t];
    int v;
    asm("{\n\t"
        ".reg .pred p;\n\t"
        "setp.gt.s32 p, %1, 0;\n\t"
        "@p mov.b32 %0, %1;\n\t"
        "@!p add.s32 %0, %1, 100;\n\t"
        "}"
        : "=r"(v) : "r"(x));
    out[t] = v;
}

// A guarded redefinition: v keeps its old value (t) where the guard is false, and a
// branch depends on v afterwards (the register has two reaching definitions).
extern "C" __global__ void g_asm_partial(const int *a, int *out)
{
    int t = threadIdx.x;
    int x = a[t];
    int v = t;
    asm("{\n\t"
        ".reg .pred p;\n\t"
        "setp.lt.s32 p, %1, 0;\n\t"
        "@p neg.s32 %0, %1;\n\t"
        "}"
        : "+r"(v) : "r"(x));
    if (v > 3)
        out[t] = v;
}
