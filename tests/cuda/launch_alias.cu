// Launch-specialised aliasing test kernels (tests/test_launch_alias.py): a
// branch on a load that may read what the kernel stored through another
// pointer, a module variable, or a pointer loaded from memory.
//   nvcc -ptx -arch=sm_90 -O3 launch_alias.cu -o launch_alias.sm90.ptx
// extern "C" keeps the kernel names unmangled.

// b[i] is stored, then a[i] decides a branch: with a == b (or overlapping
// ranges) the branch sees the store
extern "C" __global__ void store_then_branch(const int *a, int *b, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    b[i] = (i % 3) - 1;
    if (a[i] > 0)
        out[i] = 1;
    else
        out[i] = a[i] * 2;
}

__device__ int flags[512];

// a module variable is written, then a load through p decides a branch: p
// may point into the module's .global variables
extern "C" __global__ void global_then_branch(const int *p, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    flags[i] = i & 1;
    if (p[i] != 0)
        out[i] = 7;
    else
        out[i] = 9;
}

// the store goes through a pointer loaded from memory (table[0]), which may
// point anywhere
extern "C" __global__ void loaded_pointer(int *const *table, const int *a, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int *q = table[0];
    q[i] = i % 4;
    if (a[i] == 2)
        out[i] = 1;
    else
        out[i] = 0;
}

// two kernels share a device function that loads through its pointer
// argument (a callee's pointer is an unknown region): their slices are
// closed together (passes/slice.py, shared functions)
__device__ __noinline__ int pick(const int *p, int i)
{
    return p[i];
}

extern "C" __global__ void shared_pick_a(const int *a, int *b, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    b[i] = i % 5;
    if (pick(a, i) > 2)
        out[i] = 1;
}

extern "C" __global__ void shared_pick_b(const int *a, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    if (pick(a, i) == 0)
        out[i] = 5;
}
