// Source of the fat binaries in this folder (see README.md for the commands).
// The unrolled loop makes long, repetitive PTX: the compressors find long
// and overlapping matches in it.
__constant__ float weights[16];
__global__ void stencil(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i + 16 >= n) return;
  float acc = 0.0f;
#pragma unroll
  for (int k = 0; k < 16; k++) acc += weights[k] * in[i + k];
  out[i] = acc;
}
__global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
