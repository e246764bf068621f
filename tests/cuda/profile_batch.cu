// ptxc profile over many modules (tests/test_profile_batch.py): a second
// module besides launch_infer.cu whose kernels state their launch (a fixed
// block from __block_size__, which gives .reqntid, and a linear-index bound
// check), one of them with a loop whose trip count differs between threads.
//   nvcc -ptx -arch=sm_90 -O3 profile_batch.cu -o profile_batch.sm90.ptx

// i < 300 with 64-thread blocks: grid ceil(300/64) = 5.
extern "C" __global__ void __block_size__((64, 1, 1)) odd_scale(float *out, const float *in)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 300)
        out[i] = (i & 1) ? 3.0f * in[i] : in[i];
}

// i < 100 with 32-thread blocks: grid ceil(100/32) = 4; thread i loops i & 7 times.
extern "C" __global__ void __block_size__((32, 1, 1)) tri_loop(int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 100)
        return;
    int s = 0;
    for (int k = 0; k < (i & 7); k++)
        s += k * i;
    out[i] = s;
}
