// simpleStreams: the array is cut into one chunk per stream; each stream copies its
// chunk in, runs a kernel on it and copies it out, all asynchronously from pinned
// host memory; the host polls an event while the work is in flight.
// Modelled on cuda-samples 0_Introduction/simpleStreams and asyncAPI (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 simpleStreams.cu -o simpleStreams
// Run:   ./simpleStreams [n]   (default n = 16384, a multiple of 4 * 128)
// Checks: out[i] == in[i] + ITER * factor for every i; a second round after a
//         cudaMemsetAsync gives ITER * factor; every stream and event reports done.
// API: cudaMallocHost, cudaFreeHost, cudaStreamCreate, cudaStreamCreateWithFlags,
//      cudaStreamDestroy, cudaStreamSynchronize, cudaStreamQuery, cudaStreamWaitEvent,
//      cudaMemcpyAsync (H2D, D2H), cudaMemsetAsync, cudaEventCreate,
//      cudaEventCreateWithFlags, cudaEventRecord (on streams), cudaEventQuery,
//      cudaEventSynchronize, cudaEventElapsedTime, cudaEventDestroy, launches on streams.
// Launches: 2 * NSTREAMS = 8.
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

#define NSTREAMS 4
#define ITER 5

// Adds *factor to every element ITER times (the factor is read from device memory).
__global__ void addFactor(int *data, const int *factor, int iterations)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < iterations; ++k)
        data[i] += *factor;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 16384;
    if (n <= 0 || n % (NSTREAMS * 128)) n = 16384;
    int chunk = n / NSTREAMS;
    size_t bytes = n * sizeof(int), chunkBytes = chunk * sizeof(int);
    int *hIn, *hOut;
    CHECK(cudaMallocHost((void **)&hIn, bytes));
    CHECK(cudaMallocHost((void **)&hOut, bytes));
    for (int i = 0; i < n; ++i) { hIn[i] = i % 1000; hOut[i] = -1; }
    int factor = 7;
    int *dData, *dFactor;
    CHECK(cudaMalloc(&dData, bytes));
    CHECK(cudaMalloc(&dFactor, sizeof(int)));
    CHECK(cudaMemcpy(dFactor, &factor, sizeof(int), cudaMemcpyHostToDevice));

    cudaStream_t streams[NSTREAMS];
    for (int s = 0; s < NSTREAMS; ++s) {
        if (s == NSTREAMS - 1)
            CHECK(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
        else
            CHECK(cudaStreamCreate(&streams[s]));
    }
    cudaEvent_t start, stop, marker;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventCreateWithFlags(&marker, cudaEventDisableTiming));

    // Round 1: copy in, add, copy out, one chunk per stream.
    CHECK(cudaEventRecord(start, 0));
    for (int s = 0; s < NSTREAMS; ++s) {
        int off = s * chunk;
        CHECK(cudaMemcpyAsync(dData + off, hIn + off, chunkBytes, cudaMemcpyHostToDevice, streams[s]));
        addFactor<<<chunk / 128, 128, 0, streams[s]>>>(dData + off, dFactor, ITER);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpyAsync(hOut + off, dData + off, chunkBytes, cudaMemcpyDeviceToHost, streams[s]));
    }
    CHECK(cudaEventRecord(stop, 0));
    unsigned long polls = 0;
    while (cudaEventQuery(stop) == cudaErrorNotReady)
        ++polls;                                  // the CPU could work here
    CHECK(cudaEventSynchronize(stop));
    float ms = -1.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    int wrong = 0;
    for (int i = 0; i < n; ++i)
        if (hOut[i] != hIn[i] + ITER * factor) {
            if (wrong < 5) fprintf(stderr, "round 1: out[%d] = %d, expected %d\n", i, hOut[i], hIn[i] + ITER * factor);
            ++wrong;
        }

    // Round 2: clear on stream 0, mark it, let every stream wait for the mark.
    CHECK(cudaMemsetAsync(dData, 0, bytes, streams[0]));
    CHECK(cudaEventRecord(marker, streams[0]));
    for (int s = 0; s < NSTREAMS; ++s) {
        int off = s * chunk;
        CHECK(cudaStreamWaitEvent(streams[s], marker, 0));
        addFactor<<<chunk / 128, 128, 0, streams[s]>>>(dData + off, dFactor, ITER);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpyAsync(hOut + off, dData + off, chunkBytes, cudaMemcpyDeviceToHost, streams[s]));
    }
    int notDone = 0;
    for (int s = 0; s < NSTREAMS; ++s) {
        CHECK(cudaStreamSynchronize(streams[s]));
        if (cudaStreamQuery(streams[s]) != cudaSuccess) ++notDone;
    }
    if (cudaEventQuery(marker) != cudaSuccess) ++notDone;
    for (int i = 0; i < n; ++i)
        if (hOut[i] != ITER * factor) {
            if (wrong < 5) fprintf(stderr, "round 2: out[%d] = %d, expected %d\n", i, hOut[i], ITER * factor);
            ++wrong;
        }
    printf("[simpleStreams] %d streams x %d ints, %.3f ms, %lu event polls\n", NSTREAMS, chunk, ms, polls);

    for (int s = 0; s < NSTREAMS; ++s) CHECK(cudaStreamDestroy(streams[s]));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaEventDestroy(marker));
    CHECK(cudaFree(dData));
    CHECK(cudaFree(dFactor));
    CHECK(cudaFreeHost(hIn));
    CHECK(cudaFreeHost(hOut));
    if (wrong || notDone || ms < 0.0f) {
        printf("FAIL (%d wrong elements, %d not done, elapsed %f ms)\n", wrong, notDone, ms);
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
