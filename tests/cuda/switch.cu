// switch statements; does nvcc emit brx.idx? (see README.md)
//   nvcc -ptx -arch=sm_90 -O3 switch.cu -o switch.sm90.ptx
//   nvcc -ptx -arch=sm_90 -Xcicc -O0 switch.cu -o switch.sm90.O0.ptx

// Dense switch on threadIdx.x % 8 whose cases do different memory work.
extern "C" __global__ void switch_dense(const int *a, int *out)
{
    int t = threadIdx.x;
    int v;
    switch (t % 8) {
    case 0: v = a[t] + 1; break;
    case 1: v = a[t + 1] * 3; break;
    case 2: v = a[t] ^ 0x55; break;
    case 3: v = a[0] - t; break;
    case 4: v = a[t] >> 2; break;
    case 5: out[t + 64] = t; v = 9; break;
    case 6: v = a[t] * a[t]; break;
    default: v = -1; break;
    }
    out[t] = v;
}

// Sparse switch: compare chain.
extern "C" __global__ void switch_sparse(const int *a, int *out)
{
    int t = threadIdx.x;
    int v = 0;
    switch (a[t]) {
    case 1: v = 10; out[t + 64] = 1; break;
    case 100: v = 20; break;
    case 1000: v = a[t + 1]; break;
    case -7: v = 40; out[t + 128] = 2; break;
    default: break;
    }
    out[t] = v;
}

// nvcc 13 never emits brx.idx for a switch (it always builds a compare tree), so this
// kernel gets one from inline PTX: an indirect branch over t % 3 with a .branchtargets table.
// ptxas accepts it.  Lanes with t%3 == 0, 1, 2 go to BRX_L0, BRX_L1, BRX_L2; all meet at BRX_END.
extern "C" __global__ void switch_brx_asm(int *out)
{
    unsigned t = threadIdx.x % 3;
    int v;
    asm volatile(
        "{\n\t"
        "BRX_TS: .branchtargets BRX_L0, BRX_L1, BRX_L2;\n\t"
        "brx.idx %1, BRX_TS;\n"
        "BRX_L0:\n\t"
        "mov.u32 %0, 10;\n\t"
        "bra.uni BRX_END;\n"
        "BRX_L1:\n\t"
        "mov.u32 %0, 20;\n\t"
        "bra.uni BRX_END;\n"
        "BRX_L2:\n\t"
        "mov.u32 %0, 30;\n"
        "BRX_END:\n\t"
        "}"
        : "=r"(v) : "r"(t));
    out[threadIdx.x] = v;
}
