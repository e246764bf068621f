// Device-side malloc/free and C++ new/delete (nvcc lowers both to calls of
// the extern functions malloc and free).
//   nvcc -ptx -arch=sm_90 -O3 heap.cu -o heap.sm90.ptx

// Thread t allocates n ints, fills them with t, t+1, ... and leaves the
// pointer in slots[t] (NULL when the heap is full).
extern "C" __global__ void alloc_fill(int **slots, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int *p = (int *)malloc(n * sizeof(int));
    if (p)
        for (int i = 0; i < n; ++i)
            p[i] = t + i;
    slots[t] = p;
}

// A later launch: sums what alloc_fill wrote, then frees it (free(NULL) is
// allowed).
extern "C" __global__ void sum_release(int **slots, int *sums, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int s = 0;
    if (slots[t])
        for (int i = 0; i < n; ++i)
            s += slots[t][i];
    sums[t] = s;
    free(slots[t]);
}

struct Triple {
    int v;
    __device__ Triple(int x) : v(3 * x) {}
};

// new/delete of an object and of an array: out[t] = 3 t + 7.
extern "C" __global__ void new_delete(int *out)
{
    int t = threadIdx.x;
    Triple *o = new Triple(t);
    int *arr = new int[4];
    arr[3] = 7;
    out[t] = o->v + arr[3];
    delete o;
    delete[] arr;
}

// Frees memory malloc never returned: a run-time error.
extern "C" __global__ void bad_free(int *buf)
{
    free(buf + threadIdx.x);
}
