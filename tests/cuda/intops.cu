// Integer operations, one result per output slot, for checking the executor against numpy.
//   nvcc -ptx -arch=sm_90 -O3 intops.cu -o intops.sm90.ptx
//   nvcc -ptx -arch=sm_75 -O3 intops.cu -o intops.sm75.ptx
// Launch: 1 CTA, n threads; a, b: n ints each; out: 24*n ints; uout: 8*n unsigned; lout: 4*n long long.
// Thread i reads x = a[i], y = b[i] and writes out[24*i + k] (k as listed), uout[8*i + k], lout[4*i + k].

extern "C" __global__ void intops(const int *a, const int *b, int *out, unsigned *uout,
                                  long long *lout)
{
    int i = threadIdx.x;
    int x = a[i];
    int y = b[i];
    unsigned ux = (unsigned)x, uy = (unsigned)y;
    int *o = out + 24 * i;
    unsigned *u = uout + 8 * i;
    long long *l = lout + 4 * i;
    int yd = (y == 0) ? 1 : y;            // avoid division by zero
    unsigned uyd = (uy == 0) ? 1u : uy;
    o[0] = x + y;
    o[1] = x - y;
    o[2] = x * y;                         // mul.lo
    o[3] = __mulhi(x, y);                 // mul.hi.s32
    o[4] = x * y + 7;                     // mad.lo
    o[5] = x / yd;                        // div.s32 (truncates)
    o[6] = x % yd;                        // rem.s32 (sign of dividend)
    o[7] = x >> 3;                        // shr.s32 (arithmetic)
    o[8] = x << (y & 31);                 // shl.b32
    o[9] = x & y;
    o[10] = x | y;
    o[11] = x ^ y;
    o[12] = ~x;
    o[13] = -x;
    o[14] = min(x, y);
    o[15] = max(x, y);
    o[16] = abs(x);
    o[17] = __popc(ux);
    o[18] = __clz(x);
    o[19] = __ffs(x);
    o[20] = __sad(x, y, 5);               // |x-y| + 5
    o[21] = __hadd(x, y);                 // (x+y)>>1 without overflow
    o[22] = x < y;                        // setp + selp
    o[23] = (x >> 4) & 0xff;              // bfe-like
    u[0] = ux / uyd;                      // div.u32
    u[1] = ux % uyd;                      // rem.u32
    u[2] = ux >> 5;                       // shr.u32 (logical)
    u[3] = __umulhi(ux, uy);
    u[4] = __brev(ux);
    u[5] = __byte_perm(ux, uy, 0x5140);   // prmt
    u[6] = __funnelshift_l(ux, uy, 7);    // shf.l
    u[7] = umin(ux, uy);
    l[0] = (long long)x * (long long)y;   // mul.wide.s32
    l[1] = (long long)((unsigned long long)ux * (unsigned long long)uy); // mul.wide.u32
    l[2] = __mul64hi((long long)x << 20, (long long)y << 20);
    l[3] = (long long)x * 3000000000LL + y;
}

// Bit-field instructions have no CUDA intrinsic (nvcc emits shr/and for field extracts),
// so they come from inline PTX.  Thread i: pos = i % 20, len = 1 + i % 12 (pos+len <= 31);
// bout: 3 unsigned per thread: bfe.u32, bfe.s32, bfi.b32.
extern "C" __global__ void intops_bits(const unsigned *a, const unsigned *b, unsigned *bout)
{
    int i = threadIdx.x;
    unsigned x = a[i], y = b[i];
    unsigned pos = i % 20, len = 1 + i % 12;
    unsigned r0, r2;
    int r1;
    asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r0) : "r"(x), "r"(pos), "r"(len));
    asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r1) : "r"((int)x), "r"(pos), "r"(len));
    asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r2) : "r"(y), "r"(x), "r"(pos), "r"(len));
    bout[3 * i + 0] = r0;
    bout[3 * i + 1] = (unsigned)r1;
    bout[3 * i + 2] = r2;
}
