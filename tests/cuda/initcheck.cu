// Kernels for initcheck (tests/test_initcheck.py): which global bytes a
// launch reads before anything wrote them.
//   nvcc -ptx -arch=sm_90 -O3 -lineinfo initcheck.cu -o initcheck.sm90.lineinfo.ptx
#include <cuda_pipeline.h>

// out[i] = 2 in[i]: a 4-byte read of in and a 4-byte write of out per thread.
extern "C" __global__ void scale(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 2.0f * in[i];
}

// One 16-byte (v4) read per thread.
extern "C" __global__ void vec4(const float4 *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 v = in[i];
        out[i] = v.x + v.y + v.z + v.w;
    }
}

// Every thread adds 1 to *counter (an atomic read-modify-write).
extern "C" __global__ void count(unsigned *counter)
{
    atomicAdd(counter, 1u);
}

// Thread t copies in[t] (16 bytes) to shared memory with one cp.async of
// 16 bytes, then writes it to out[t].
extern "C" __global__ void cpasync(const float4 *in, float4 *out)
{
    __shared__ float4 buf[128];
    int t = threadIdx.x;
    __pipeline_memcpy_async(&buf[t], &in[t], sizeof(float4));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    out[t] = buf[t];
}
