// Device malloc blocks bounded by memcheck (tests/test_heap_bounds.py).
//   nvcc -ptx -arch=sm_90 -O3 heap_bounds.cu -o heap_bounds.sm90.ptx
// Each thread mallocs n ints, writes n + extra of them and keeps the block.
extern "C" __global__ void over(int n, int extra, int **keep)
{
    int *p = (int *)malloc(n * sizeof(int));
    for (int i = 0; i < n + extra; i++)
        p[i] = i;
    keep[threadIdx.x] = p;
}

// Each thread sums its kept block's first n ints (reading before it when
// back > 0), then frees it.
extern "C" __global__ void sum_free(int n, int back, int **keep, int *out)
{
    int *p = keep[threadIdx.x];
    int s = 0;
    for (int i = -back; i < n; i++)
        s += p[i];
    out[threadIdx.x] = s;
    free(p);
}

// Reads a kept block after it was freed.
extern "C" __global__ void after_free(int **keep, int *out)
{
    out[threadIdx.x] = keep[threadIdx.x][0];
}
