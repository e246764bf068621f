// Relocatable device code (tests/test_rdc_link.py): calls libcudadevrt's
// grid-group functions, which ptxc supplies as PTX (cudadevrt_ptx.py):
//   nvcc -ptx -rdc=true -arch=sm_90 -O3 rdc_devrt.cu -o rdc_devrt.sm90.rdc.ptx
// (both declared by cuda_device_runtime_api.h)

extern "C" __global__ void grid_sum(int *partial, int *total)
{
    if (threadIdx.x == 0)
        partial[blockIdx.x] = blockIdx.x + 1;
    cudaCGSynchronize(cudaCGGetIntrinsicHandle(cudaCGScopeGrid), 0);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        int s = 0;
        for (unsigned b = 0; b < gridDim.x; b++)
            s += partial[b];
        *total = s;
    }
}
