__global__ void saxpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
__global__ void tile(const float *in, float *out) {
    __shared__ float buf[1024];
    buf[threadIdx.x] = in[blockIdx.x * 1024 + threadIdx.x];
    __syncthreads();
    out[blockIdx.x * 1024 + threadIdx.x] = buf[1023 - threadIdx.x];
}
