// Warp access shapes for the memory counters' closed forms and their
// general computation (tests/test_memcount_fast.py): the lane addresses of
// gather_shared / gather_global / gather_shared2 come from an index array the
// test fills (contiguous, uniform, half-uniform, strided, descending,
// scattered, masked); shared_shapes has the shapes in its code (a 16 x 16
// tile read by rows and columns as in matrixMul, a padded transpose tile,
// stride-2 and descending reads), global_shapes likewise in global memory.
//   nvcc -ptx -arch=sm_90 -O3 memcount_shapes.cu -o memcount_shapes.sm90.ptx

extern "C" __global__ void gather_shared(const int *idx, const int *on, float *out)
{
    __shared__ float s[2048];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = threadIdx.x; k < 2048; k += blockDim.x)
        s[k] = (float)k;                                 // contiguous stores
    __syncthreads();
    if (on[t])
        out[t] = s[idx[t]];                              // the measured load
}

extern "C" __global__ void gather_shared2(const int *idx, double *out)
{
    __shared__ double s[1024];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = threadIdx.x; k < 1024; k += blockDim.x)
        s[k] = (double)k;
    __syncthreads();
    out[t] = s[idx[t]];                                  // 8 bytes per lane
}

extern "C" __global__ void gather_global(const float *in, const int *idx, const int *on, float *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (on[t])
        out[t] = in[idx[t]];
}

extern "C" __global__ void shared_shapes(float *out, int k)
{
    __shared__ float tile[16][16];
    __shared__ float pad[32][33];
    __shared__ float flat[1024];
    int tx = threadIdx.x, ty = threadIdx.y;              // block 16 x 16
    int t = ty * 16 + tx;
    tile[ty][tx] = (float)t;
    pad[t & 31][t >> 5] = (float)t;
    flat[t] = (float)t;
    flat[t + 256] = (float)(t + 256);
    __syncthreads();
    float a = tile[ty][k];                               // uniform per half warp
    float b = tile[k][tx];                               // the same 16 words in both halves
    float c = pad[t & 31][t >> 5];                       // a padded column: no conflict
    float d = flat[2 * t];                               // stride 2: two-way conflicts
    float e = flat[511 - 2 * t];                         // descending, stride 2
    float f = tile[tx][ty];                              // a column: 16-word stride
    float g = tile[2][3];                                // a variable's address: [tile+140]
    out[t] = a + 2.0f * b + 4.0f * c + 8.0f * d + 16.0f * e + 32.0f * f + 64.0f * g;
}

__device__ float scale = 3.0f;

extern "C" __global__ void global_shapes(const float *in, float *out, int w, int k)
{
    int tx = threadIdx.x, ty = threadIdx.y;              // block 16 x 16
    int t = ty * 16 + tx;
    float a = in[t];                                     // contiguous
    float b = in[k];                                     // uniform
    float c = in[ty * w + tx];                           // two rows per warp (matrixMul's A tile)
    float d = in[1023 - t];                              // descending
    float e = in[8 * t];                                 // one 32-byte sector per lane
    out[t] = a + 2.0f * b + 4.0f * c + 8.0f * d + 16.0f * e + scale;  // scale: a variable's address
}
