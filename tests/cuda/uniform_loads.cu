// Loads at a variable's address (the same constant in every lane: nvcc emits
// ld.shared/ld.const/ld.global [var+offset]) for tests/test_uniform_loads.py:
// one scalar load and a broadcast (resolve.uniform_pointer) against the
// 32-lane gather (PTXC_UNIFORM_LOADS=0), with partial warps, lanes that a
// branch leaves inactive, vector loads and out-of-bounds dynamic shared.
// nvcc -ptx -arch=sm_90 -O3 uniform_loads.cu -o uniform_loads.sm90.ptx
__constant__ int table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
__device__ int gvals[4] = {10, 20, 30, 40};

// Lanes with threadIdx.x % 3 == 0 read s[5], the int4 s4[2] and table[3];
// the others keep what they computed.
__global__ void uniform_shared(int *out, int4 *out4)
{
    __shared__ int s[64];
    __shared__ int4 s4[4];
    unsigned t = threadIdx.x;
    if (t < 64)
        s[t] = (int)t * 7 + 1;
    if (t < 4)
        s4[t] = make_int4(t, 10 * t, 100 * t, 1000 * t + 1);
    __syncthreads();
    int v = -(int)t;
    int4 w = make_int4(-1, -2, -3, -4);
    if (t % 3 == 0) {
        v = s[5] + table[3];
        w = s4[2];
    }
    out[t] = v;
    out4[t] = w;
}

// Every lane reads gvals[2] and table[k] for the k given (a branch per k
// keeps each address a constant).
__global__ void uniform_global(int *out, int k)
{
    int v = gvals[2];
    if (k == 1)
        v += table[1];
    else if (k == 7)
        v += table[7];
    out[threadIdx.x] = v;
}

// dyn[40] (byte 160) of the dynamic shared array, read by the lanes below
// `lanes`: past its end when fewer than 164 bytes are given at launch.
__global__ void uniform_dynamic(int *out, int lanes)
{
    extern __shared__ int dyn[];
    int v = -5;
    if ((int)threadIdx.x < lanes)
        v = ((volatile int *)dyn)[40];
    out[threadIdx.x] = v;
}
