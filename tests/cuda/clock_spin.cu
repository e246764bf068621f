// A busy-wait on clock64(), in the style of cuda-samples' clock_block
// (simpleHyperQ): each thread spins until `cycles` clock cycles have passed,
// then writes how many loop iterations it took.
//   nvcc -ptx -arch=sm_90 -O3 clock_spin.cu -o clock_spin.sm90.ptx
extern "C" __global__ void clock_spin(long long cycles, int *iterations)
{
    long long start = clock64();
    int n = 0;
    while (clock64() - start < cycles)
        ++n;
    iterations[blockIdx.x * blockDim.x + threadIdx.x] = n;
}
