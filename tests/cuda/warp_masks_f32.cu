// redux.sync.min.f32 (PTX ISA 8.6, sm_100a), which ptxc refuses with a clear
// run-time error (tests/test_warp_masks.py). No C++ intrinsic emits it, hence inline PTX.
//   nvcc -ptx -arch=sm_100a -O3 warp_masks_f32.cu -o warp_masks_f32.sm100a.ptx
extern "C" __global__ void redux_f32(const float *val, float *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float r;
    asm volatile("redux.sync.min.f32 %0, %1, %2;" : "=f"(r) : "f"(val[t]), "r"(~0u));
    out[t] = r;
}
