// Device-side new/delete across launches, in the style of cuda-samples'
// newdelete: one kernel builds a per-thread list on the device heap and
// leaves its head in a __device__ array, a second launch walks it, a third
// deletes it. The host checks every sum and prints PASS or FAIL.
#include <cstdio>
#include <cuda_runtime.h>

struct Node {
    int value;
    Node *next;
};

constexpr int THREADS = 256;
__device__ Node *heads[THREADS];

__global__ void build(int length)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    Node *head = nullptr;
    for (int i = 0; i < length; ++i) {
        Node *n = new Node;
        n->value = t * 100 + i;
        n->next = head;
        head = n;
    }
    heads[t] = head;
}

__global__ void walk(long long *sums)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    long long s = 0;
    for (Node *n = heads[t]; n; n = n->next)
        s += n->value;
    sums[t] = s;
}

__global__ void destroy()
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    Node *n = heads[t];
    while (n) {
        Node *next = n->next;
        delete n;
        n = next;
    }
    heads[t] = nullptr;
}

int main(int argc, char **argv)
{
    int length = argc > 1 ? atoi(argv[1]) : 5;
    long long *d_sums, sums[THREADS];
    cudaMalloc(&d_sums, sizeof(sums));
    for (int round = 0; round < 2; ++round) {     // the heap is reused after the deletes
        build<<<THREADS / 64, 64>>>(length);
        walk<<<THREADS / 64, 64>>>(d_sums);
        destroy<<<THREADS / 64, 64>>>();
        cudaError_t err = cudaMemcpy(sums, d_sums, sizeof(sums), cudaMemcpyDeviceToHost);
        if (err != cudaSuccess) {
            printf("CUDA error %s\n", cudaGetErrorString(err));
            return 1;
        }
        for (int t = 0; t < THREADS; ++t) {
            long long want = 100LL * t * length + (long long)length * (length - 1) / 2;
            if (sums[t] != want) {
                printf("FAIL: thread %d sum %lld, expected %lld\n", t, sums[t], want);
                return 1;
            }
        }
    }
    printf("PASS: %d lists of %d nodes built, walked and deleted twice\n", THREADS, length);
    cudaFree(d_sums);
    return 0;
}
