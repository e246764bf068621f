// Memory-target injection on a vector store with a constant element, for
// tests/test_inject.py. PTX: nvcc -ptx -arch=sm_90 -O3 inject_vec.cu -o inject_vec.sm90.ptx
extern "C" __global__ void vec4(float4 *out, float x)
{
    out[threadIdx.x] = make_float4(x, 0.0f, x + 2.0f, x * 3.0f);
}
