// scan: exclusive prefix sum of n ints of any length. Each CTA scans 512 values
// in shared memory (work-efficient up-sweep / down-sweep tree), the CTA totals
// are scanned recursively the same way, and a third kernel adds each CTA's offset.
// Modelled on the cuda-samples / GPU Gems 3 ch. 39 scan (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 scan.cu -o scan
// Run:   ./scan [n]   (default n = 10000)
// Checks: every output equals the host exclusive scan exactly.
// API: cudaMalloc, cudaMemcpy (H2D, D2H, D2D), cudaMemset, __syncthreads, cudaFree.
// Launches: scan(m) = 1 launch of scanBlocks when m <= 512, otherwise
//           1 + scan(ceil(m / 512)) + 1 (addOffsets).
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

#define THREADS 256
#define PER_CTA (2 * THREADS)

// Exclusive scan of PER_CTA values per CTA; the CTA's total goes to totals[cta]
// (when totals is not null).
__global__ void scanBlocks(const int *in, int *out, int *totals, int n)
{
    __shared__ int buf[PER_CTA];
    int tid = threadIdx.x;
    int base = blockIdx.x * PER_CTA;
    int a = base + tid, b = base + tid + THREADS;
    buf[tid] = a < n ? in[a] : 0;
    buf[tid + THREADS] = b < n ? in[b] : 0;

    int stride = 1;
    for (int active = PER_CTA / 2; active > 0; active >>= 1) {   // up-sweep
        __syncthreads();
        if (tid < active) {
            int left = stride * (2 * tid + 1) - 1;
            int right = stride * (2 * tid + 2) - 1;
            buf[right] += buf[left];
        }
        stride *= 2;
    }
    if (tid == 0) {
        if (totals) totals[blockIdx.x] = buf[PER_CTA - 1];
        buf[PER_CTA - 1] = 0;
    }
    for (int active = 1; active < PER_CTA; active *= 2) {        // down-sweep
        stride >>= 1;
        __syncthreads();
        if (tid < active) {
            int left = stride * (2 * tid + 1) - 1;
            int right = stride * (2 * tid + 2) - 1;
            int t = buf[left];
            buf[left] = buf[right];
            buf[right] += t;
        }
    }
    __syncthreads();
    if (a < n) out[a] = buf[tid];
    if (b < n) out[b] = buf[tid + THREADS];
}

__global__ void addOffsets(int *data, const int *offsets, int n)
{
    int i = blockIdx.x * PER_CTA + threadIdx.x;
    int off = offsets[blockIdx.x];
    if (i < n) data[i] += off;
    if (i + THREADS < n) data[i + THREADS] += off;
}

static int launches = 0;

// Scans dIn[0..n) into dOut; scratch holds the totals of every level.
static void scanDevice(const int *dIn, int *dOut, int n, int *scratch)
{
    int blocks = (n + PER_CTA - 1) / PER_CTA;
    if (blocks == 1) {
        scanBlocks<<<1, THREADS>>>(dIn, dOut, NULL, n);
        CHECK(cudaGetLastError());
        ++launches;
        return;
    }
    int *totals = scratch, *scannedTotals = scratch + blocks;
    scanBlocks<<<blocks, THREADS>>>(dIn, dOut, totals, n);
    CHECK(cudaGetLastError());
    ++launches;
    scanDevice(totals, scannedTotals, blocks, scratch + 2 * blocks);
    addOffsets<<<blocks, THREADS>>>(dOut, scannedTotals, n);
    CHECK(cudaGetLastError());
    ++launches;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10000;
    if (n <= 0) n = 10000;
    int *h = (int *)malloc(n * sizeof(int)), *got = (int *)malloc(n * sizeof(int));
    for (int i = 0; i < n; ++i) h[i] = (int)((i * 40503u) % 17u);
    int *dIn, *dCopy, *dOut, *dScratch;
    CHECK(cudaMalloc(&dIn, n * sizeof(int)));
    CHECK(cudaMalloc(&dCopy, n * sizeof(int)));
    CHECK(cudaMalloc(&dOut, n * sizeof(int)));
    CHECK(cudaMalloc(&dScratch, 4 * ((n + PER_CTA - 1) / PER_CTA + 8) * sizeof(int)));
    CHECK(cudaMemset(dOut, 0, n * sizeof(int)));
    CHECK(cudaMemcpy(dIn, h, n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dCopy, dIn, n * sizeof(int), cudaMemcpyDeviceToDevice));
    scanDevice(dCopy, dOut, n, dScratch);
    CHECK(cudaMemcpy(got, dOut, n * sizeof(int), cudaMemcpyDeviceToHost));

    int wrong = 0, running = 0;
    for (int i = 0; i < n; ++i) {
        if (got[i] != running) {
            if (wrong < 5) fprintf(stderr, "out[%d] = %d, expected %d\n", i, got[i], running);
            ++wrong;
        }
        running += h[i];
    }
    printf("[scan] %d elements, %d launches, total %d\n", n, launches, running);
    CHECK(cudaFree(dIn));
    CHECK(cudaFree(dCopy));
    CHECK(cudaFree(dOut));
    CHECK(cudaFree(dScratch));
    free(h); free(got);
    if (wrong) {
        printf("FAIL (%d wrong elements)\n", wrong);
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
