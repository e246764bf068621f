// cp.async (non-bulk) with every cp-size, a src-size register (zero-fill of
// the bytes past it) and the ignore-src predicate.
//   nvcc -ptx -arch=sm_90 -O3 cp_async.cu -o cp_async.sm90.ptx
#include <cuda_pipeline.h>

// Thread t copies 16 bytes src[16t .. 16t+15] into shared memory with one
// cp.async of `size` bytes per `size`-byte chunk, keeping keep[t] bytes of
// the first chunk (src-size) and all bytes of the others, then writes the 16
// shared bytes to out[16t ..]. Shared memory is first filled with 0xEE so
// that bytes cp.async leaves alone would show.
template <int SIZE>
__device__ void copy_with_src_size(const unsigned char *src, unsigned char *out,
                                   const unsigned *keep)
{
    __shared__ __align__(16) unsigned char buf[128 * 16];
    int t = threadIdx.x;
    for (int i = 0; i < 16; ++i)
        buf[16 * t + i] = 0xEE;
    for (int c = 0; c < 16; c += SIZE) {
        unsigned dst = (unsigned)__cvta_generic_to_shared(&buf[16 * t + c]);
        unsigned n = c == 0 ? keep[t] : SIZE;
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;"
                     :: "r"(dst), "l"(src + 16 * t + c), "n"(SIZE), "r"(n) : "memory");
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
    for (int i = 0; i < 16; ++i)
        out[16 * t + i] = buf[16 * t + i];
}

extern "C" __global__ void cp4(const unsigned char *src, unsigned char *out, const unsigned *keep)
{ copy_with_src_size<4>(src, out, keep); }
extern "C" __global__ void cp8(const unsigned char *src, unsigned char *out, const unsigned *keep)
{ copy_with_src_size<8>(src, out, keep); }
extern "C" __global__ void cp16(const unsigned char *src, unsigned char *out, const unsigned *keep)
{ copy_with_src_size<16>(src, out, keep); }

// ignore-src: threads with an odd keep[t] copy zeros (16 bytes, cg form).
extern "C" __global__ void cp_ignore(const unsigned char *src, unsigned char *out,
                                     const unsigned *keep)
{
    __shared__ __align__(16) unsigned char buf[128 * 16];
    int t = threadIdx.x;
    for (int i = 0; i < 16; ++i)
        buf[16 * t + i] = 0xEE;
    unsigned dst = (unsigned)__cvta_generic_to_shared(&buf[16 * t]);
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %2, 0;\n\t"
                 "cp.async.cg.shared.global [%0], [%1], 16, p;\n\t}"
                 :: "r"(dst), "l"(src + 16 * t), "r"(keep[t] & 1) : "memory");
    asm volatile("cp.async.wait_all;" ::: "memory");
    for (int i = 0; i < 16; ++i)
        out[16 * t + i] = buf[16 * t + i];
}
