// Data-dependent branches on input arrays; vector add with a bounds check.
//   nvcc -ptx -arch=sm_90 -O3 data_branch.cu -o data_branch.sm90.ptx
//   nvcc -ptx -arch=sm_90 -O3 -lineinfo data_branch.cu -o data_branch.sm90.lineinfo.ptx
//   nvcc -ptx -arch=sm_75 -O3 data_branch.cu -o data_branch.sm75.ptx

extern "C" __global__ void vec_add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

// b[i] = 2*a[i] where a[i] > 0; b[i] untouched otherwise.
extern "C" __global__ void pos_double(const int *a, int *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int x = a[i];
        if (x > 0)
            b[i] = 2 * x;
    }
}

// Two-way data-dependent choice that stays a branch (different arrays written).
extern "C" __global__ void sign_split(const int *a, int *pos, int *neg)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int x = a[i];
    if (x >= 0)
        pos[i] = x;
    else
        neg[i] = -x;
}
