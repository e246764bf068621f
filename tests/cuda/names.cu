// Kernels named every way C++ names them, for the naming rule of
// ptxc/ir/names.py (tests/test_names.py): a plain C++ function, two
// instantiations of a template (an ambiguous base name), a kernel in a
// namespace, an extern "C" kernel. The -G build carries the parameters'
// source names in its DWARF (ptxc/ir/dwarf_names.py).
//   nvcc -ptx -arch=sm_90 -O3 names.cu -o names.sm90.ptx
//   nvcc -ptx -arch=sm_90 -G names.cu -o names.sm90.G.ptx
__global__ void vadd(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

template <typename T>
__global__ void scale(T *x, T s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * s;
}
template __global__ void scale<float>(float *, float, int);
template __global__ void scale<double>(double *, double, int);

namespace ns {
__global__ void fill(int *x, int v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = v;
}
}

extern "C" __global__ void plain(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = i;
}
