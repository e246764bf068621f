// ptxc's naming rule and run-time messages on a whole application
// (tests/test_names_apps.py): it launches vadd (a C++ name) and the two
// instantiations scale<float> and scale<double> (one base name); with the
// argument "oob" vadd reads one element past the end of its inputs.
//   nvcc -cudart shared -arch=sm_90 -O3 -lineinfo names_app.cu -o names_app
#include <cstdio>
#include <cstring>

__global__ void vadd(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

template <typename T>
__global__ void scale(T *x, T s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * s;
}

int main(int argc, char **argv) {
    bool oob = argc > 1 && strcmp(argv[1], "oob") == 0;
    const int n = 256;
    float *a, *b, *c;
    double *d;
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&b, n * sizeof(float));
    cudaMalloc(&c, n * sizeof(float));
    cudaMalloc(&d, n * sizeof(double));
    cudaMemset(a, 0, n * sizeof(float));
    cudaMemset(b, 0, n * sizeof(float));
    cudaMemset(d, 0, n * sizeof(double));
    vadd<<<3, 128>>>(a, b, c, oob ? n + 1 : n);
    cudaError_t e = cudaDeviceSynchronize();
    printf("vadd: %s\n", cudaGetErrorString(e));
    scale<float><<<2, 128>>>(c, 2.0f, n);
    scale<double><<<2, 128>>>(d, 2.0, n);
    e = cudaDeviceSynchronize();
    printf("scale: %s\n", cudaGetErrorString(e));
    return 0;
}
