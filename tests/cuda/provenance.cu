// Pointers the provenance check follows beyond kernel parameters
// (tests/test_provenance_loaded.py, ptxc/provenance_flow.py): pointers loaded
// from memory and pointer arguments of called functions.
// nvcc -ptx -arch=sm_90 -O3 provenance.cu -o provenance.sm90.ptx
// nvcc -ptx -arch=sm_90 -G provenance.cu -o provenance.sm90.G.ptx
extern "C" {

// Batched: CTA b scales x into ys[b] (an array of pointers, as batched GEMM's
// float **A). `off` moves every store: off = 2^30 floats is 4 GiB, which
// carries ys[b] + off into the next segment, the next buffer.
__global__ void batched_scale(float *const *ys, const float *x, float a, long long off) {
    float *y = ys[blockIdx.x];
    y[threadIdx.x + off] = a * x[threadIdx.x];
}

// A struct holding pointers, passed by pointer.
struct Pair { float *src; float *dst; };
__global__ void pair_copy(const Pair *pair, long long off) {
    pair->dst[threadIdx.x + off] = pair->src[threadIdx.x];
}

// Left out of the -G build (__CUDACC_DEBUG__): its -G code keeps the struct
// in a local depot addressed as [%SP+0] (list_sum's too), which ptxc's
// PTX emitter writes back as [%SP], and ptxas -G compiles that differently,
// so tests/test_ssa_cases.py's cubin comparison would fail for this file.
#ifndef __CUDACC_DEBUG__
// A struct holding pointers, passed by value (fields of the parameter).
__global__ void pair_copy_by_value(Pair pair, long long off) {
    pair.dst[threadIdx.x + off] = pair.src[threadIdx.x];
}
#endif

// A device function that stays a call (its pointer argument is a .param of
// the .func).
__device__ __noinline__ void put(float *p, long long i, float v) {
    p[i] = v;
}

__global__ void call_put(float *a, const float *b, long long off) {
    put(a, threadIdx.x + off, b[threadIdx.x] + 1.0f);
}

#ifndef __CUDACC_DEBUG__       // left out of the -G build, as pair_copy_by_value
// A list walked in a loop: p is a phi of the parameter and of p->next, a
// pointer loaded in an earlier iteration, so it is not a base (the access
// keeps the segment check alone). The next pointer is read before the
// value, so a check against the latest load would test the wrong node.
struct Node { Node *next; float val; };
__global__ void list_sum(const Node *head, float *out, int steps) {
    const Node *p = head;
    float s = 0.0f;
    for (int k = 0; k < steps; k++) {
        const Node *n = p->next;
        s += p->val;
        p = n;
    }
    out[threadIdx.x] = s;
}
#endif
}
