// Floating-point operations for checking the executor against numpy.
//   nvcc -ptx -arch=sm_90 -O3 fpops.cu -o fpops.sm90.ptx
//   nvcc -ptx -arch=sm_75 -O3 fpops.cu -o fpops.sm75.ptx
// (-O3 keeps IEEE div/sqrt: nvcc's default is -prec-div=true -prec-sqrt=true -ftz=false.)
#include <cuda_fp16.h>
#include <cuda_bf16.h>

// Thread i: x = a[i], y = b[i] (f32); out: 20 floats per thread; iout: 8 ints per thread.
extern "C" __global__ void fpops_f32(const float *a, const float *b, float *out, int *iout)
{
    int i = threadIdx.x;
    float x = a[i], y = b[i];
    float *o = out + 20 * i;
    int *io = iout + 8 * i;
    o[0] = x + y;
    o[1] = x - y;
    o[2] = x * y;
    o[3] = fmaf(x, y, 1.5f);
    o[4] = x / y;                 // div.rn.f32
    o[5] = sqrtf(fabsf(x));       // sqrt.rn.f32
    o[6] = rsqrtf(fabsf(x) + 1.0f);   // rsqrt.approx
    o[7] = __expf(x * 0.25f);     // ex2.approx
    o[8] = __logf(fabsf(x) + 1.0f);   // lg2.approx
    o[9] = __sinf(x);             // sin.approx
    o[10] = __fdividef(x, y);     // div.approx / full
    o[11] = rintf(x);             // cvt.rni
    o[12] = truncf(x);            // cvt.rzi
    o[13] = floorf(x);            // cvt.rmi
    o[14] = ceilf(x);             // cvt.rpi
    o[15] = fminf(x, y);
    o[16] = fmaxf(x, y);
    o[17] = fabsf(x) * -1.0f;
    o[18] = __frcp_rn(y);         // rcp.rn
    o[19] = (float)i * 0.5f;      // cvt.rn.f32.s32
    io[0] = __float2int_rz(x);
    io[1] = __float2int_rn(x);
    io[2] = __float2int_ru(x);
    io[3] = __float2int_rd(x);
    io[4] = (int)__float2uint_rz(fabsf(x));
    io[5] = x < y;
    io[6] = __float_as_int(x);
    io[7] = isnan(x / y);
}

// f64: out 8 doubles per thread.
extern "C" __global__ void fpops_f64(const double *a, const double *b, double *out)
{
    int i = threadIdx.x;
    double x = a[i], y = b[i];
    double *o = out + 8 * i;
    o[0] = x + y;
    o[1] = x * y;
    o[2] = fma(x, y, -2.0);
    o[3] = x / y;                 // div.rn.f64
    o[4] = sqrt(fabs(x));         // sqrt.rn.f64
    o[5] = (double)(float)x;      // cvt.rn.f32.f64 then cvt.f64.f32
    o[6] = (double)__double2int_rn(x);
    o[7] = fmin(x, y) - fmax(x, y);
}

// f16 and bf16: inputs f32, converted, computed, converted back to f32.
// out: 8 floats per thread.
extern "C" __global__ void fpops_half(const float *a, const float *b, float *out)
{
    int i = threadIdx.x;
    __half hx = __float2half(a[i]);          // cvt.rn.f16.f32
    __half hy = __float2half(b[i]);
    __half2 h2 = __halves2half2(hx, hy);
    __nv_bfloat16 bx = __float2bfloat16(a[i]);
    __nv_bfloat16 by = __float2bfloat16(b[i]);
    float *o = out + 8 * i;
    o[0] = __half2float(__hadd(hx, hy));     // add.f16
    o[1] = __half2float(__hmul(hx, hy));     // mul.f16
    o[2] = __half2float(__hfma(hx, hy, hx)); // fma.rn.f16
    __half2 s2 = __hmul2(h2, h2);            // mul.f16x2
    o[3] = __low2float(s2);
    o[4] = __high2float(s2);
    o[5] = __bfloat162float(__hadd(bx, by)); // add.bf16 (sm_90) / emulated (sm_75)
    o[6] = __bfloat162float(__hmul(bx, by));
    o[7] = __half2float(hx);                 // round trip f32 -> f16 -> f32
}

// Directed rounding and saturation intrinsics (f32).  out: 8 floats per thread.
extern "C" __global__ void fpops_round(const float *a, const float *b, float *out)
{
    int i = threadIdx.x;
    float x = a[i], y = b[i];
    float *o = out + 8 * i;
    o[0] = __fadd_rz(x, y);       // add.rz.f32
    o[1] = __fadd_ru(x, y);       // add.rp.f32
    o[2] = __fmul_rd(x, y);       // mul.rm.f32
    o[3] = __fmaf_rz(x, y, 0.1f); // fma.rz.f32
    o[4] = __fdiv_ru(x, y);       // div.rp.f32
    o[5] = __fsqrt_rd(fabsf(y));  // sqrt.rm.f32
    o[6] = __saturatef(x);        // cvt.sat.f32.f32 (clamp to [0,1])
    o[7] = __int2float_rz(i * 16777217 - 5); // cvt.rz.f32.s32
}
