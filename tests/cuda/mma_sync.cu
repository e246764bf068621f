// mma.sync and ldmatrix through inline PTX (PTX ISA 9.7.14.5 "Matrix multiply-
// accumulate operation using mma instruction", 9.7.14.5.15 ldmatrix). One warp
// per kernel; fragments are either loaded with ldmatrix from shared memory or
// gathered from global memory with the per-lane formulas of the ISA's fragment
// figures (groupID g = lane >> 2, threadID_in_group t = lane % 4).
//   nvcc -ptx -arch=sm_90 -O3 mma_sync.cu -o mma_sync.sm90.ptx
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

__device__ __forceinline__ uint32_t smem(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

// D(16x8, f32, row-major) = A(16x16 f16, row-major) * B(16x8 f16, row-major) + C.
// A: ldmatrix.x4 (matrices: rows 0-7/8-15 x cols 0-7, then cols 8-15);
// B: ldmatrix.x2.trans of its two 8x8 halves (k 0-7, k 8-15).
extern "C" __global__ void mma_f16_f32(const half *a, const half *b, const float *c, float *d)
{
    __shared__ __align__(16) half sa[16 * 16], sb[16 * 8];
    int lane = threadIdx.x;
    for (int i = lane; i < 256; i += 32) sa[i] = a[i];
    for (int i = lane; i < 128; i += 32) sb[i] = b[i];
    __syncwarp();
    uint32_t a0, a1, a2, a3, b0, b1;
    int m = lane >> 3, r = lane & 7;
    const half *arow = sa + ((m & 1) * 8 + r) * 16 + (m >> 1) * 8;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(smem(arow)));
    const half *brow = sb + (lane & 15) * 8;
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(b0), "=r"(b1) : "r"(smem(brow)));
    int g = lane >> 2, t = lane & 3;
    float c0 = c[g * 8 + 2 * t], c1 = c[g * 8 + 2 * t + 1];
    float c2 = c[(g + 8) * 8 + 2 * t], c3 = c[(g + 8) * 8 + 2 * t + 1];
    float d0, d1, d2, d3;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
                 : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1),
                   "f"(c0), "f"(c1), "f"(c2), "f"(c3));
    d[g * 8 + 2 * t] = d0;
    d[g * 8 + 2 * t + 1] = d1;
    d[(g + 8) * 8 + 2 * t] = d2;
    d[(g + 8) * 8 + 2 * t + 1] = d3;
}

// f16 accumulator; B given transposed (bt = B^T, 8x16 row-major) and loaded
// with a plain ldmatrix.x2; C and D f16 row-major 16x8.
extern "C" __global__ void mma_f16_f16(const half *a, const half *bt, const half *c, half *d)
{
    __shared__ __align__(16) half sa[16 * 16], sb[8 * 16];
    int lane = threadIdx.x;
    for (int i = lane; i < 256; i += 32) sa[i] = a[i];
    for (int i = lane; i < 128; i += 32) sb[i] = bt[i];
    __syncwarp();
    uint32_t a0, a1, a2, a3, b0, b1;
    int m = lane >> 3, r = lane & 7;
    const half *arow = sa + ((m & 1) * 8 + r) * 16 + (m >> 1) * 8;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(smem(arow)));
    const half *brow = sb + (lane & 7) * 16 + ((lane >> 3) & 1) * 8;
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
                 : "=r"(b0), "=r"(b1) : "r"(smem(brow)));
    int g = lane >> 2, t = lane & 3;
    uint32_t c0 = *(const uint32_t *)(c + g * 8 + 2 * t);
    uint32_t c1 = *(const uint32_t *)(c + (g + 8) * 8 + 2 * t);
    uint32_t d0, d1;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 "
                 "{%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%8, %9};"
                 : "=r"(d0), "=r"(d1)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(c0), "r"(c1));
    *(uint32_t *)(d + g * 8 + 2 * t) = d0;
    *(uint32_t *)(d + (g + 8) * 8 + 2 * t) = d1;
}

__device__ __forceinline__ uint32_t pack16(uint16_t lo, uint16_t hi)
{
    return (uint32_t)lo | ((uint32_t)hi << 16);
}

// bf16 m16n8k16, fragments gathered from global memory (A 16x16 row-major,
// B 16x8 row-major, C/D 16x8 f32 row-major) with the ISA formulas.
extern "C" __global__ void mma_bf16(const uint16_t *a, const uint16_t *b, const float *c, float *d)
{
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    uint32_t ar[4], br[2];
    for (int i = 0; i < 4; i++) {                 // a_{2i}, a_{2i+1}
        int row = g + 8 * (i & 1), col = 2 * t + 8 * (i >> 1);
        ar[i] = pack16(a[row * 16 + col], a[row * 16 + col + 1]);
    }
    for (int i = 0; i < 2; i++) {                 // b_{2i}, b_{2i+1}
        int k = 2 * t + 8 * i;
        br[i] = pack16(b[k * 8 + g], b[(k + 1) * 8 + g]);
    }
    float cr[4], dr[4];
    for (int i = 0; i < 4; i++) cr[i] = c[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
                 : "=f"(dr[0]), "=f"(dr[1]), "=f"(dr[2]), "=f"(dr[3])
                 : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "r"(br[0]), "r"(br[1]),
                   "f"(cr[0]), "f"(cr[1]), "f"(cr[2]), "f"(cr[3]));
    for (int i = 0; i < 4; i++) d[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = dr[i];
}

// tf32 m16n8k8: A 16x8, B 8x8, C/D 16x8, all f32 row-major; inputs rounded
// with cvt.rna.tf32.f32 first.
extern "C" __global__ void mma_tf32(const float *a, const float *b, const float *c, float *d)
{
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    uint32_t ar[4], br[2];
    for (int i = 0; i < 4; i++) {
        float x = a[(g + 8 * (i & 1)) * 8 + t + 4 * (i >> 1)];
        asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(ar[i]) : "f"(x));
    }
    for (int i = 0; i < 2; i++) {
        float x = b[(t + 4 * i) * 8 + g];
        asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(br[i]) : "f"(x));
    }
    float cr[4], dr[4];
    for (int i = 0; i < 4; i++) cr[i] = c[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
                 : "=f"(dr[0]), "=f"(dr[1]), "=f"(dr[2]), "=f"(dr[3])
                 : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "r"(br[0]), "r"(br[1]),
                   "f"(cr[0]), "f"(cr[1]), "f"(cr[2]), "f"(cr[3]));
    for (int i = 0; i < 4; i++) d[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = dr[i];
}

__device__ __forceinline__ uint32_t pack8(const int8_t *p, int step)
{
    return (uint32_t)(uint8_t)p[0] | ((uint32_t)(uint8_t)p[step] << 8) |
           ((uint32_t)(uint8_t)p[2 * step] << 16) | ((uint32_t)(uint8_t)p[3 * step] << 24);
}

// s8 m16n8k32 (A 16x32 row-major, B 32x8 row-major, C/D s32 16x8 row-major),
// with and without .satfinite (sat != 0).
extern "C" __global__ void mma_s8(const int8_t *a, const int8_t *b, const int *c, int *d, int sat)
{
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    uint32_t ar[4], br[2];
    for (int i = 0; i < 4; i++)                   // a_{4i .. 4i+3}
        ar[i] = pack8(a + (g + 8 * (i & 1)) * 32 + 4 * t + 16 * (i >> 1), 1);
    for (int i = 0; i < 2; i++)                   // b_{4i .. 4i+3}
        br[i] = pack8(b + (4 * t + 16 * i) * 8 + g, 8);
    int cr[4], dr[4];
    for (int i = 0; i < 4; i++) cr[i] = c[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    if (sat)
        asm volatile("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
                     : "=r"(dr[0]), "=r"(dr[1]), "=r"(dr[2]), "=r"(dr[3])
                     : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "r"(br[0]), "r"(br[1]),
                       "r"(cr[0]), "r"(cr[1]), "r"(cr[2]), "r"(cr[3]));
    else
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
                     : "=r"(dr[0]), "=r"(dr[1]), "=r"(dr[2]), "=r"(dr[3])
                     : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "r"(br[0]), "r"(br[1]),
                       "r"(cr[0]), "r"(cr[1]), "r"(cr[2]), "r"(cr[3]));
    for (int i = 0; i < 4; i++) d[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = dr[i];
}

// f64 m8n8k4 (DMMA): A 8x4, B 4x8, C/D 8x8, row-major.
extern "C" __global__ void mma_f64(const double *a, const double *b, const double *c, double *d)
{
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    double a0 = a[g * 4 + t], b0 = b[t * 8 + g];
    double c0 = c[g * 8 + 2 * t], c1 = c[g * 8 + 2 * t + 1], d0, d1;
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%4, %5};"
                 : "=d"(d0), "=d"(d1) : "d"(a0), "d"(b0), "d"(c0), "d"(c1));
    d[g * 8 + 2 * t] = d0;
    d[g * 8 + 2 * t + 1] = d1;
}

// ldmatrix alone: m (32 rows of 8 b16, row r at m + r*8) -> out[reg][lane] for
// .x1, .x2, .x4 and their .trans forms (kind 0..5). Lane l supplies the
// address of row l (rows 8i..8i+7 form matrix i).
extern "C" __global__ void ldmatrix_forms(const uint16_t *m, uint32_t *out, int kind)
{
    __shared__ __align__(16) uint16_t s[32 * 8];
    int lane = threadIdx.x;
    for (int i = lane; i < 256; i += 32) s[i] = m[i];
    __syncwarp();
    uint32_t p = smem(s + lane * 8), r0 = 0, r1 = 0, r2 = 0, r3 = 0;
    switch (kind) {
    case 0: asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(p)); break;
    case 1: asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(p)); break;
    case 2: asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                         : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(p)); break;
    case 3: asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(p)); break;
    case 4: asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(p)); break;
    default: asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                          : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(p)); break;
    }
    out[lane] = r0;
    out[32 + lane] = r1;
    out[64 + lane] = r2;
    out[96 + lane] = r3;
}

// A form ptxc does not run (the Volta quad-pair m8n8k4 f16 mma): must fail
// with "not supported yet" naming the instruction.
extern "C" __global__ void mma_m8n8k4_f16(const uint32_t *a, float *d)
{
    int lane = threadIdx.x;
    uint32_t a0 = a[lane], a1 = a[32 + lane];
    float r[8];
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9}, {%8, %9}, "
                 "{%10, %10, %10, %10, %10, %10, %10, %10};"
                 : "=f"(r[0]), "=f"(r[1]), "=f"(r[2]), "=f"(r[3]),
                   "=f"(r[4]), "=f"(r[5]), "=f"(r[6]), "=f"(r[7])
                 : "r"(a0), "r"(a1), "f"(0.0f));
    for (int i = 0; i < 8; i++) d[8 * lane + i] = r[i];
}

// The hybrid slice must keep a tensor op whose result decides a branch: each
// lane counts down its d0 (mma_f16_f32's first accumulator element), so the
// loop trip counts depend on the mma, the ldmatrix and the shared stores.
extern "C" __global__ void mma_branch(const half *a, const half *b, int *trips)
{
    __shared__ __align__(16) half sa[16 * 16], sb[16 * 8];
    int lane = threadIdx.x;
    for (int i = lane; i < 256; i += 32) sa[i] = a[i];
    for (int i = lane; i < 128; i += 32) sb[i] = b[i];
    __syncwarp();
    uint32_t a0, a1, a2, a3, b0, b1;
    int m = lane >> 3, r = lane & 7;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3)
                 : "r"(smem(sa + ((m & 1) * 8 + r) * 16 + (m >> 1) * 8)));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(b0), "=r"(b1) : "r"(smem(sb + (lane & 15) * 8)));
    float d0, d1, d2, d3, z = 0.0f;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %10, %10, %10};"
                 : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(z));
    int n = 0;
    for (float v = d0; v > 0.0f; v -= 1.0f) n++;
    trips[lane] = n;
}

// stmatrix alone (sm_90): lane l's registers r_i = regs[32 i + l] are stored
// with stmatrix .x1/.x2/.x4{.trans} (kind 0..5) to 32 rows of 8 b16 in
// shared memory (row r at lane r's address), then copied to m.
extern "C" __global__ void stmatrix_forms(const uint32_t *regs, uint16_t *m, int kind)
{
    __shared__ __align__(16) uint16_t s[32 * 8];
    int lane = threadIdx.x;
    for (int i = lane; i < 256; i += 32) s[i] = 0;
    __syncwarp();
    uint32_t p = smem(s + lane * 8);
    uint32_t r0 = regs[lane], r1 = regs[32 + lane], r2 = regs[64 + lane], r3 = regs[96 + lane];
    switch (kind) {
    case 0: asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" :: "r"(p), "r"(r0)); break;
    case 1: asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" :: "r"(p), "r"(r0), "r"(r1)); break;
    case 2: asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
                         :: "r"(p), "r"(r0), "r"(r1), "r"(r2), "r"(r3)); break;
    case 3: asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" :: "r"(p), "r"(r0)); break;
    case 4: asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};" :: "r"(p), "r"(r0), "r"(r1)); break;
    default: asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};"
                          :: "r"(p), "r"(r0), "r"(r1), "r"(r2), "r"(r3)); break;
    }
    __syncwarp();
    for (int i = lane; i < 256; i += 32) m[i] = s[i];
}

// The smaller shapes, fragments gathered with the ISA formulas (which agree
// with CUTLASS CuTe's SM80_16x8_Row / SM80_8x8_Row / SM80_8x4 layouts).
// m16n8k8 f16 and bf16: A 16x8 (a_i: row g + 8 (i >> 1), col 2t + (i & 1)),
// B 8x8 (b_i: row 2t + i, col g); C/D 16x8 f32.
#define MMA_K8_16BIT(NAME, TYPE)                                                   \
extern "C" __global__ void NAME(const uint16_t *a, const uint16_t *b, const float *c, float *d) \
{                                                                                  \
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;                           \
    uint32_t a0 = pack16(a[g * 8 + 2 * t], a[g * 8 + 2 * t + 1]);                  \
    uint32_t a1 = pack16(a[(g + 8) * 8 + 2 * t], a[(g + 8) * 8 + 2 * t + 1]);      \
    uint32_t b0 = pack16(b[(2 * t) * 8 + g], b[(2 * t + 1) * 8 + g]);              \
    float cr[4], dr[4];                                                            \
    for (int i = 0; i < 4; i++) cr[i] = c[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)]; \
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32." TYPE "." TYPE ".f32 "     \
                 "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};"            \
                 : "=f"(dr[0]), "=f"(dr[1]), "=f"(dr[2]), "=f"(dr[3])              \
                 : "r"(a0), "r"(a1), "r"(b0), "f"(cr[0]), "f"(cr[1]), "f"(cr[2]), "f"(cr[3])); \
    for (int i = 0; i < 4; i++) d[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = dr[i]; \
}
MMA_K8_16BIT(mma_k8_f16, "f16")
MMA_K8_16BIT(mma_k8_bf16, "bf16")

// m16n8k4 tf32: A 16x4 (a_i: row g + 8 i, col t), B 4x8 (b0: row t, col g).
extern "C" __global__ void mma_k4_tf32(const float *a, const float *b, const float *c, float *d)
{
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    uint32_t a0, a1, b0;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(a0) : "f"(a[g * 4 + t]));
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(a1) : "f"(a[(g + 8) * 4 + t]));
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(b0) : "f"(b[t * 8 + g]));
    float cr[4], dr[4];
    for (int i = 0; i < 4; i++) cr[i] = c[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};"
                 : "=f"(dr[0]), "=f"(dr[1]), "=f"(dr[2]), "=f"(dr[3])
                 : "r"(a0), "r"(a1), "r"(b0), "f"(cr[0]), "f"(cr[1]), "f"(cr[2]), "f"(cr[3]));
    for (int i = 0; i < 4; i++) d[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = dr[i];
}

// m16n8k16 u8 x s8 (mixed signedness): A 16x16 (a_i: row g + 8 (i >> 2),
// col 4t + (i & 3)), B 16x8 (b_i: row 4t + i, col g); C/D s32.
extern "C" __global__ void mma_k16_u8s8(const uint8_t *a, const int8_t *b, const int *c, int *d)
{
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    uint32_t a0 = pack8((const int8_t *)a + g * 16 + 4 * t, 1);
    uint32_t a1 = pack8((const int8_t *)a + (g + 8) * 16 + 4 * t, 1);
    uint32_t b0 = pack8(b + (4 * t) * 8 + g, 8);
    int cr[4], dr[4];
    for (int i = 0; i < 4; i++) cr[i] = c[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.u8.s8.s32 "
                 "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};"
                 : "=r"(dr[0]), "=r"(dr[1]), "=r"(dr[2]), "=r"(dr[3])
                 : "r"(a0), "r"(a1), "r"(b0), "r"(cr[0]), "r"(cr[1]), "r"(cr[2]), "r"(cr[3]));
    for (int i = 0; i < 4; i++) d[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = dr[i];
}
