// Dynamic parallelism (CDP2): kernels that launch kernels.
// tests/test_device_launch.py runs these with ptxc.launch; build.sh has the command:
//   nvcc -ptx -rdc=true -arch=sm_90 -O3 cdp_launch.cu -o cdp_launch.sm90.rdc.ptx
#include <cstdio>

// cdpSimplePrint-style tree: every CTA of a grid at depth < max_depth - 1
// launches 2 CTAs of the same kernel; thread 0 of each CTA appends
// depth * 16 + blockIdx.x to `order`, every thread counts itself in visits[depth].
__global__ void cdp_tree(int *visits, int *order, int *next, int depth, int max_depth) {
    atomicAdd(&visits[depth], 1);
    if (threadIdx.x == 0) {
        order[atomicAdd(next, 1)] = depth * 16 + blockIdx.x;
        if (depth + 1 < max_depth)
            cdp_tree<<<2, blockDim.x>>>(visits, order, next, depth + 1, max_depth);
    }
}

__device__ void log_id(int *log, int *next, int id) {
    log[atomicAdd(next, 1)] = id;
}

__global__ void leaf(int *log, int *next, int id) {
    if (threadIdx.x == 0)
        log_id(log, next, id);
}

__global__ void mid(int *log, int *next, int id) {
    if (threadIdx.x == 0) {
        log_id(log, next, id);
        leaf<<<1, 1, 0, cudaStreamTailLaunch>>>(log, next, id * 10 + 2);
        leaf<<<1, 1>>>(log, next, id * 10 + 1);
    }
}

// The launch-order rules: tail launches after the grid and all its other
// work, in launch order; the rest in any order ptxc documents.
__global__ void order_root(int *log, int *next, int *errs) {
    if (threadIdx.x == 0) {
        log_id(log, next, 1);
        leaf<<<1, 1, 0, cudaStreamTailLaunch>>>(log, next, 2);
        mid<<<1, 32>>>(log, next, 3);
        cudaStream_t s;
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        leaf<<<1, 1, 0, s>>>(log, next, 4);
        cudaStreamDestroy(s);
        leaf<<<1, 1, 0, cudaStreamFireAndForget>>>(log, next, 5);
        leaf<<<1, 1, 0, cudaStreamTailLaunch>>>(log, next, 6);
        errs[0] = cudaGetLastError();
    }
}

__global__ void nothing(int *count) {
    atomicAdd(count, 1);
}

// Launch errors seen through the device-side cudaGetLastError/cudaPeekAtLastError.
__global__ void bad_launches(int *errs, int *count) {
    if (threadIdx.x == 0) {
        nothing<<<1, 2048>>>(count);             // more than 1024 threads
        errs[0] = cudaPeekAtLastError();
        errs[1] = cudaGetLastError();
        errs[2] = cudaGetLastError();            // reset by the previous call
        nothing<<<dim3(1, 70000), 1>>>(count);    // grid.y > 65535
        nothing<<<1, 1>>>(count);                // fine: the error stays
        errs[3] = cudaGetLastError();
        cudaStream_t s;
        errs[4] = cudaStreamCreateWithFlags(&s, cudaStreamDefault);   // must be non-blocking
        errs[5] = cudaGetLastError();
    }
}

// Every thread launches one grid: more than the pending launch limit fail.
__global__ void many(int *errs, int *count) {
    nothing<<<1, 1>>>(count);
    errs[threadIdx.x] = cudaGetLastError();
}

// Recursion until the nesting depth limit (24) stops it.
__global__ void deep(int *errs, int depth) {
    if (depth < 30) {
        deep<<<1, 1>>>(errs, depth + 1);
        errs[depth] = cudaGetLastError();
    }
}

__global__ void set_flag(volatile int *flag) {
    *flag = 1;
}

// A parent that waits for its child through memory: outside what ptxc can
// order (the child runs after the parent), so the step budget ends it.
__global__ void wait_for_child(volatile int *flag) {
    set_flag<<<1, 1>>>((int *)flag);
    while (*flag == 0) {
    }
}

__global__ void store_at(int *data, int index) {
    data[index] = 1;
}

// A child that writes out of bounds: the error names the child and who launched it.
__global__ void bad_child(int *data, int n) {
    if (threadIdx.x == 1) {
        printf("launching store_at(%d)\n", n);
        store_at<<<1, 1>>>(data, n);
    }
}

// Device malloc in a parent, used and freed by its child: one heap for the tree.
__global__ void use_and_free(int *block, int *out) {
    out[0] = block[0] + block[1];
    free(block);
}

__global__ void heap_parent(int *out) {
    int *block = (int *)malloc(2 * sizeof(int));
    block[0] = 40;
    block[1] = 2;
    use_and_free<<<1, 1>>>(block, out);
}
