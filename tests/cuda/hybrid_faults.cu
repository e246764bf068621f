// Kernels whose full run stops at a bad access that a hybrid run skips
// (tests/test_hybrid_faults.py): the hybrid run must check the accesses its
// branch slice does not keep and stop with the same message.
// nvcc -ptx -arch=sm_90 -O3 hybrid_faults.cu -o hybrid_faults.sm90.ptx
extern "C" {

// The branch depends on threadIdx.x only: neither access is in the branch
// slice, and every CTA has the same counters (one CTA-equivalence class
// without fault checks).
__global__ void scale_tid(const int *in, int *out, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x < m)
        out[i] = 2 * in[i];
}

// A misaligned store: out is advanced by `skew` bytes.
__global__ void skewed_store(int *out, int skew) {
    int *p = (int *)((char *)out + skew);
    p[threadIdx.x] = threadIdx.x;
}

// A 64-bit index: a[i + skip] with skip = 2^30 ints is 4 GiB past a[i], so
// the offset carries into the next segment (the next buffer, b) unless the
// executor compares the address with the allocation it started from.
__global__ void carry_store(int *a, const int *b, long long skip) {
    long long i = threadIdx.x + skip;
    a[i] = 7;
    if (b[threadIdx.x] > 100)
        a[threadIdx.x] = 1;
}

// A pointer read from memory (its provenance is unknown): only the segment
// it lands in is checked.
__global__ void through_table(int **table, int k) {
    int *p = table[0];
    p[threadIdx.x + k] = 1;
}
}
