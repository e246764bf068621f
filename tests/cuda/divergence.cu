// Thread-dependent control flow: if/else, nested divergence, 2-D and 3-D blocks.
// Built by build.sh with:
//   nvcc -ptx -arch=sm_90 -O3 divergence.cu -o divergence.sm90.ptx
//   nvcc -ptx -arch=sm_90 -G divergence.cu -o divergence.sm90.G.ptx
//   nvcc -ptx -arch=sm_90 -Xcicc -O0 divergence.cu -o divergence.sm90.O0.ptx
//   nvcc -ptx -arch=sm_75 -O3 -lineinfo divergence.cu -o divergence.sm75.lineinfo.ptx

// if/else on threadIdx.x: at -O3 nvcc turns it into selp; at -G/-O0 it is a real branch.
extern "C" __global__ void div_ifelse(int *out)
{
    int t = threadIdx.x;
    if (t < 20) {
        out[t] = t * 3 + 1;
    } else {
        out[t] = t - 100;
    }
}

// Nested divergence.
extern "C" __global__ void div_nested(int *out)
{
    int t = threadIdx.x;
    int v;
    if (t < 40) {
        if (t & 2)
            v = t * 5;
        else
            v = t + 7;
    } else {
        v = -t;
    }
    out[t] = v;
}

// One-sided if with a store: a real branch even at -O3.
extern "C" __global__ void div_store(int *a, int *b)
{
    int t = threadIdx.x;
    if (t % 3 == 0)
        a[t] = t;
    b[t] = 1;
}

// 2-D block and grid: out is (gridDim.y*blockDim.y) x (gridDim.x*blockDim.x), row-major;
// only rows with threadIdx.y >= 1 are written (one-sided if: a real branch at -O3).
extern "C" __global__ void div_2d(int *out)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int w = gridDim.x * blockDim.x;
    if (threadIdx.y >= 1)
        out[y * w + x] = x + 10 * y;
}

// 3-D block: out/out2 have one int per thread of one CTA, indexed by the linear thread id.
extern "C" __global__ void div_3d(int *out, int *out2)
{
    int l = threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
    if (threadIdx.z == 1 && threadIdx.x == 0)
        out[l] = 100 + threadIdx.y;
    else
        out2[l] = threadIdx.z;
}
