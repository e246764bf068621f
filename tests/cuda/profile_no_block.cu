// ptxc profile on nvcc PTX without .reqntid/.maxntid (issue 26, item 3):
//   nvcc -ptx -arch=sm_90 -O3 profile_no_block.cu -o profile_no_block.sm90.ptx
// vadd: no launch is known and no block either, and its bound check reads the
// scalar n, which the PTX does not hold: not launched; the row says which
// argument to give and keeps no one-CTA launch of ptxc's own.
extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}
