// Virtual functions across launches, as cuda-samples newdelete: one launch
// makes an object per thread with device new (a Square or a Circle), a
// second calls its virtual area(), a third deletes it through the virtual
// destructor. The host checks area = s^2 (even i) or 3 s^2 (odd i).
// (tests/test_indirect_calls.py, under ptxc run)
#include <cstdio>
#include <cuda_runtime.h>

struct Shape {
    __device__ virtual float area(float s) const = 0;
    __device__ virtual ~Shape() {}
};
struct Square : Shape {
    __device__ float area(float s) const override { return s * s; }
};
struct Circle : Shape {
    float k;
    __device__ Circle(float k) : k(k) {}
    __device__ float area(float s) const override { return k * s * s; }
};

__global__ void make(Shape **objs, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        objs[i] = i % 2 == 0 ? (Shape *)new Square() : (Shape *)new Circle(3.0f);
}

__global__ void areas(Shape *const *objs, const float *s, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = objs[i]->area(s[i]);
}

__global__ void destroy(Shape **objs, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        delete objs[i];
}

int main()
{
    const int n = 200;
    float hs[n], hout[n];
    for (int i = 0; i < n; i++)
        hs[i] = 0.25f * i;
    Shape **objs;
    float *s, *out;
    cudaMalloc(&objs, n * sizeof(Shape *));
    cudaMalloc(&s, sizeof hs);
    cudaMalloc(&out, sizeof hout);
    cudaMemcpy(s, hs, sizeof hs, cudaMemcpyHostToDevice);
    make<<<2, 128>>>(objs, n);
    areas<<<2, 128>>>(objs, s, out, n);
    destroy<<<2, 128>>>(objs, n);
    cudaMemcpy(hout, out, sizeof hout, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        float want = (i % 2 == 0 ? 1.0f : 3.0f) * hs[i] * hs[i];
        bad += hout[i] != want;
    }
    printf("virtual_app: %d wrong, %s\n", bad, cudaGetErrorString(cudaGetLastError()));
    return bad != 0;
}
