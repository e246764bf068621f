// Indirect calls (tests/test_indirect_calls.py): virtual functions on
// objects made with device new/delete (as cuda-samples newdelete), and a
// table of function pointers in a __device__ array (a .global initialiser).
// nvcc -ptx -arch=sm_90 -O3 indirect_calls.cu -o indirect_calls.sm90.ptx (build.sh)
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

// each thread makes a Square (even i) or a Circle (odd i): the lanes of a
// warp call different functions through one virtual call
extern "C" __global__ void virtual_areas(const float *s, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    Shape *p;
    if (i % 2 == 0)
        p = new Square();
    else
        p = new Circle(3.0f);
    out[i] = p->area(s[i]);
    delete p;
}

typedef int (*op_t)(int, int);
__device__ __noinline__ int op_add(int a, int b) { return a + b; }
__device__ __noinline__ int op_sub(int a, int b) { return a - b; }
__device__ __noinline__ int op_mul(int a, int b) { return a * b; }
__device__ op_t ops[3] = {op_add, op_sub, op_mul};

// out[i] = ops[sel[i]](a[i], b[i]): the lanes of a warp call through the
// table, each its own function
extern "C" __global__ void table_calls(const int *sel, const int *a, const int *b, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = ops[sel[i]](a[i], b[i]);
}

// a pointer given by the host: 0 (a null function pointer) or any number
// that is not a function's address is a run-time error
extern "C" __global__ void raw_call(unsigned long long f, int *out)
{
    out[threadIdx.x] = ((op_t)f)(1, 2);
}

// op_add called through a float(float) pointer: the signatures differ
extern "C" __global__ void wrong_prototype(int *out, int k)
{
    float r = ((float (*)(float))ops[k])(2.0f);
    out[threadIdx.x] = (int)r;
}

// the pointer from mov.u64 %rd, fname and selp: op_add for even threads,
// op_sub for odd ones (two paths in every warp)
extern "C" __global__ void pick_calls(const int *a, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    op_t f = (i & 1) ? op_sub : op_add;
    if (i < n)
        out[i] = f(a[i], i);
}
