// Source attribution (ptxc/source_lines.py; tests/test_source_lines.py).
// nvcc -ptx -arch=sm_90 -O3 -lineinfo srcline.cu -o srcline.sm90.lineinfo.ptx
// nvcc -ptx -arch=sm_90 -G srcline.cu -o srcline.sm90.G.ptx
// Every line the test looks up carries a marker comment `// @NAME`.
#include "srcline_helper.cuh"

extern "C" __global__ void srcline(const float *a, float *out, int n, int stride)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;        // @index
    if (i >= n) return;                                   // @bound
    float v = a[(i * stride) % n];                        // @strided_load
    for (int k = 0; k < (i & 3); ++k) {                   // @loop
        v = scale(v, k + 2);                              // @call
    }
    out[i] = v;                                           // @store
}
