// unifiedMemory: managed memory that host and kernels touch through the same
// pointers: a saxpy on managed arrays, a host update between launches, and a
// linked list the host builds in managed memory (next pointers written by the
// host, followed by the kernel).
// Modelled on cuda-samples 0_Introduction/UnifiedMemoryStreams: managed memory
// shared by host code and kernels (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 unifiedMemory.cu -o unifiedMemory
// Run:   ./unifiedMemory [n]   (default n = 4096)
// Checks: y == 2x + y0 after the saxpy; y == 2(y0 + 2x + 1) after the host edit and
//         the doubling kernel; every list walk returns the host's sum over the list.
// API: cudaMallocManaged (cudaMemAttachGlobal), host access between launches,
//      cudaDeviceSynchronize, cudaMemset on managed memory, cudaMemcpy with
//      cudaMemcpyDefault (managed <-> device), cudaMalloc, cudaFree.
// Launches: 3.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                              \
    do {                                                                         \
        cudaError_t err_ = (call);                                               \
        if (err_ != cudaSuccess) {                                               \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
                    cudaGetErrorString(err_));                                   \
            exit(EXIT_FAILURE);                                                  \
        }                                                                        \
    } while (0)

struct ListNode {
    int value;
    ListNode *next;
};

__global__ void saxpy(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void doubleAll(int n, float *y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] *= 2.0f;
}

// Thread t walks the list from heads[t] and writes the sum of the values it visits.
__global__ void walkLists(ListNode *const *heads, int lists, int *sums)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= lists) return;
    int sum = 0;
    for (const ListNode *p = heads[t]; p != NULL; p = p->next)
        sum += p->value;
    sums[t] = sum;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4096;
    if (n <= 0) n = 4096;
    float *x, *y, *y0;
    CHECK(cudaMallocManaged(&x, n * sizeof(float)));
    CHECK(cudaMallocManaged(&y, n * sizeof(float), cudaMemAttachGlobal));
    y0 = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; ++i) {
        x[i] = (float)(i % 100);
        y[i] = y0[i] = (float)(i % 7) - 3.0f;
    }
    int wrong = 0;
    saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < n; ++i)
        if (y[i] != 2.0f * x[i] + y0[i]) {
            if (wrong < 5) fprintf(stderr, "saxpy: y[%d] = %f\n", i, y[i]);
            ++wrong;
        }
    for (int i = 0; i < n; ++i) y[i] += 1.0f;       // host edit between launches
    doubleAll<<<8, 128>>>(n, y);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < n; ++i)
        if (y[i] != 2.0f * (2.0f * x[i] + y0[i] + 1.0f)) {
            if (wrong < 5) fprintf(stderr, "double: y[%d] = %f\n", i, y[i]);
            ++wrong;
        }

    // Linked lists: node k of list t holds t * 100 + k; list t has t % 13 + 1 nodes;
    // nodes are laid out in reverse so that the pointers go backwards in memory.
    const int lists = 96;
    int total = 0;
    for (int t = 0; t < lists; ++t) total += t % 13 + 1;
    ListNode *nodes, **heads;
    int *dSums, *sums;
    CHECK(cudaMallocManaged(&nodes, total * sizeof(ListNode)));
    CHECK(cudaMallocManaged(&heads, lists * sizeof(ListNode *)));
    CHECK(cudaMallocManaged(&sums, lists * sizeof(int)));
    CHECK(cudaMalloc(&dSums, lists * sizeof(int)));
    CHECK(cudaMemset(sums, 0xff, lists * sizeof(int)));
    int used = 0;
    for (int t = 0; t < lists; ++t) {
        int len = t % 13 + 1;
        ListNode *next = NULL;
        for (int k = len - 1; k >= 0; --k) {
            ListNode *node = &nodes[total - 1 - used++];
            node->value = t * 100 + k;
            node->next = next;
            next = node;
        }
        heads[t] = next;
    }
    walkLists<<<(lists + 63) / 64, 64>>>(heads, lists, dSums);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(sums, dSums, lists * sizeof(int), cudaMemcpyDefault));
    for (int t = 0; t < lists; ++t) {
        int len = t % 13 + 1, want = 0;
        for (int k = 0; k < len; ++k) want += t * 100 + k;
        if (sums[t] != want) {
            if (wrong < 5) fprintf(stderr, "list %d: sum %d, expected %d\n", t, sums[t], want);
            ++wrong;
        }
    }
    printf("[unifiedMemory] %d floats, %d lists of %d nodes\n", n, lists, total);
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    CHECK(cudaFree(nodes));
    CHECK(cudaFree(heads));
    CHECK(cudaFree(sums));
    CHECK(cudaFree(dSums));
    free(y0);
    if (wrong) {
        printf("FAIL (%d wrong values)\n", wrong);
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
