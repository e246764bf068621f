// Device printf under ptxc run (tests/test_runtime_printf.py).
// Grid 2 x block 3: every thread prints one line with every conversion
// CUDA documents (flags, width, precision, h/hh/l/ll), thread (1,0) of CTA 1
// prints nothing (a pred-off lane), and thread 0 of each CTA also prints a
// line with %s, %p, %% and '*' width/precision. The host prints around the
// launch: "host before launch" (before the launch), "host after launch"
// (after it, before cudaDeviceSynchronize: the device output must come after
// it), then the printf return values it read back.
#include <cstdio>

__device__ const char *word = "ptxc";

__global__ void show(int *ret, double scale)
{
    int t = threadIdx.x, b = blockIdx.x;
    int g = b * blockDim.x + t;
    if (b == 1 && t == 1) {
        ret[g] = -100;
        return;
    }
    float f = 0.5f + g;
    double d = scale * (g + 1);
    ret[g] = printf("[%d,%d] d=%d i=%+i u=%u x=%x X=%#X o=%#o c=%c f=%8.3f F=%F e=%.2e E=%E "
                    "g=%g G=%G a=%a A=%.3A hd=%hd hhu=%hhu ld=%ld lld=%lld llx=%llx w=%-6d| z=%05d\n",
                    b, t, -g, g, 4000000000u + g, 255 + g, 0xabc + g, 8 + g, 'A' + g, f, d, d, -d,
                    d / 1000.0, d * 1e10, d, d, 70000 + g, 300 + g, -5000000000L * (g + 1),
                    123456789012LL * g, 0xfeedfacecafeULL + g, g, g);
    if (t == 0)
        printf("%s %p %% %*d %.*f %10.2s|\n", word, (void *)0, 5, b, 2, 3.14159, word);
}

int main()
{
    int *ret, host[6];
    cudaMalloc(&ret, sizeof host);
    printf("host before launch\n");
    show<<<2, 3>>>(ret, 1.25);
    printf("host after launch\n");
    cudaError_t e = cudaDeviceSynchronize();
    printf("sync: %s\n", cudaGetErrorName(e));
    cudaMemcpy(host, ret, sizeof host, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 6; i++)
        printf("ret[%d] = %d\n", i, host[i]);
    cudaFree(ret);
    return 0;
}
