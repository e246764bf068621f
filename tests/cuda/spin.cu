// A kernel that never ends while *flag == 0: for the Ctrl-C test of
// tests/test_interrupt.py (nvcc -ptx -arch=sm_90 spin.cu -o spin.sm90.ptx).
__global__ void spin(volatile int *flag, int *out)
{
    int n = 0;
    while (*flag == 0)
        n++;
    out[threadIdx.x] = n;
}
