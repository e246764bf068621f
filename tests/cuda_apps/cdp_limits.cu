// Dynamic parallelism's pending launch limit: after
// cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 4), 8 threads
// each launch a grid; the first 4 (in ptxc's issue order: lanes ascending)
// succeed, the others get cudaErrorLaunchPendingCountExceeded (69) from the
// device-side cudaGetLastError. Built with
//   nvcc -rdc=true -cudart shared -arch=sm_90 cdp_limits.cu -o cdp_limits
#include <cstdio>

__global__ void nothing(int *count) {
    atomicAdd(count, 1);
}

__global__ void many(int *errs, int *count) {
    nothing<<<1, 1>>>(count);
    errs[threadIdx.x] = cudaGetLastError();
}

int main() {
    size_t v = 0;
    cudaDeviceGetLimit(&v, cudaLimitDevRuntimePendingLaunchCount);
    printf("default %zu\n", v);
    int st = cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 4);
    cudaDeviceGetLimit(&v, cudaLimitDevRuntimePendingLaunchCount);
    printf("set 4: %d, limit %zu\n", st, v);
    int *errs, *count;
    cudaMalloc(&errs, 8 * sizeof(int));
    cudaMalloc(&count, sizeof(int));
    cudaMemset(count, 0, sizeof(int));
    many<<<1, 8>>>(errs, count);
    int h_errs[8], h_count = 0;
    cudaMemcpy(h_errs, errs, sizeof h_errs, cudaMemcpyDeviceToHost);
    cudaMemcpy(&h_count, count, sizeof h_count, cudaMemcpyDeviceToHost);
    printf("errors");
    for (int i = 0; i < 8; ++i)
        printf(" %d", h_errs[i]);
    printf("\ngrids %d\n", h_count);
    return 0;
}
