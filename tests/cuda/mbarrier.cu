// Arrive-wait barriers (cuda::barrier<thread_scope_block> -> mbarrier.*).
//   nvcc -ptx -arch=sm_90 -O3 mbarrier.cu -o mbarrier.sm90.ptx
#include <cuda/barrier>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// Each thread doubles its input into shared memory, arrives, waits, and
// reads the value of the next thread of the CTA (written by another warp):
// out[b, t] = 2 in[b, (t + 1) % blockDim.x].
extern "C" __global__ void neighbour(float *out, const float *in)
{
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    __shared__ float tmp[256];
    auto block = cg::this_thread_block();
    if (block.thread_rank() == 0)
        init(&bar, block.size());
    block.sync();
    int t = threadIdx.x, base = blockIdx.x * blockDim.x;
    tmp[t] = 2.0f * in[base + t];
    auto token = bar.arrive();
    bar.wait(std::move(token));
    out[base + t] = tmp[(t + 1) % blockDim.x];
}

// `rounds` phases of one barrier: in round r every thread adds its value to
// the running sum of thread (t + r) % blockDim.x; threads t >= active leave
// after round 0 with arrive_and_drop, so later phases expect fewer arrivals.
extern "C" __global__ void phases(int *out, int rounds, int active)
{
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    __shared__ int val[256];
    auto block = cg::this_thread_block();
    if (block.thread_rank() == 0)
        init(&bar, block.size());
    block.sync();
    int t = threadIdx.x, n = blockDim.x;
    val[t] = t;
    bar.arrive_and_wait();
    if (t >= active) {
        bar.arrive_and_drop();
        return;
    }
    int acc = 0;
    for (int r = 0; r < rounds; ++r) {
        acc += val[(t + r) % active];
        bar.arrive_and_wait();
        val[t] += 1;
        bar.arrive_and_wait();
    }
    out[blockIdx.x * n + t] = acc;
}
