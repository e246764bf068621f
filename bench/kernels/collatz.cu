// The ALU reference of bench/app_rates.py: Collatz steps, integer ALU work
// with a data-dependent trip count and almost no memory traffic (one store
// per thread). PTX committed next to this file:
//   nvcc -ptx -arch=sm_90 -O3 collatz.cu -o collatz.ptx
extern "C" __global__ void collatz(unsigned *out, unsigned n, unsigned start)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned x = start + i, steps = 0;
    while (x != 1 && steps < 1000) {
        x = (x & 1) ? 3 * x + 1 : x >> 1;
        steps++;
    }
    out[i] = steps;
}
