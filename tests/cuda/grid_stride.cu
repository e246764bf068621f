// Grid-stride loops under the default fault checks (tests/test_cta_fault_loops.py):
// CTA equivalence classifies the checked addresses B + k*S of the loops.
// nvcc -ptx -arch=sm_90 -O3 grid_stride.cu -o grid_stride.sm90.ptx
extern "C" {

// the classic grid-stride loop: stride blockDim.x * gridDim.x
__global__ void gs_saxpy(const float *x, float *y, float a, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

// a grid-stride loop counting down from n - 1 (a negative step)
__global__ void gs_reverse(const float *x, float *y, int n)
{
    for (int i = n - 1 - (int)(blockIdx.x * blockDim.x + threadIdx.x); i >= 0;
         i -= blockDim.x * gridDim.x)
        y[i] = x[i] + 1.0f;
}

// 2-D grid-stride loops (rows over the grid's y, columns over its x)
__global__ void gs_scale2d(const float *in, float *out, int w, int h)
{
    for (int r = blockIdx.y * blockDim.y + threadIdx.y; r < h; r += blockDim.y * gridDim.y)
        for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < w; c += blockDim.x * gridDim.x)
            out[r * w + c] = 2.0f * in[r * w + c];
}

// one row per CTA, the block's threads stride over it (stride blockDim.x)
__global__ void row_scale(float *a, int n)
{
    for (int j = threadIdx.x; j < n; j += blockDim.x)
        a[blockIdx.x * n + j] *= 2.0f;
}

// stride twice the grid, two elements per iteration (an atom inside the loop)
__global__ void gs_pairs(const float *x, float *y, int n)
{
    int stride = blockDim.x * gridDim.x;
#pragma unroll 1
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 2 * stride) {
        y[i] = x[i];
        if (i + stride < n)
            y[i + stride] = x[i + stride];
    }
}

// a stride given by the caller: nvcc computes the trip count (a division)
// and counts it down to 0 (an exit test ``!= 0``; tests/test_cta_countdown.py)
__global__ void gs_param_stride(const int *in, int *out, int n, int stride)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = in[i] + 1;
}

// 6-byte records read as ints: with an odd grid size the address steps by
// a non-multiple of 4 bytes, which the launch's classes refuse
__global__ void gs_records(const char *p, int *out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = *(const int *)(p + 6 * i);
}

// not affine in i: the checked address cannot be classified
__global__ void gs_square(int *a, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        a[(i * i) % n] = i;
}

// the address depends on loaded data
__global__ void gs_gather(const int *idx, const float *x, float *y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = x[idx[i]];
}

// the loop ends on loaded data: no exit test on an induction variable
__global__ void until_zero(const int *steps, float *a, int stride)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int s = threadIdx.x; steps[s] != 0; s++, i += stride)
        a[i] = 1.0f;
}

}
