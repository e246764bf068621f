// Warp collectives whose lanes pass different member masks in one converged
// instruction (cooperative groups' labeled_partition), with inactive, exited and
// missing lanes (tests/test_warp_masks.py; issue 17).
//   nvcc -ptx -arch=sm_90 -O3 warp_masks.cu -o warp_masks.sm90.ptx
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

// The reproducer of issue 17: the max over the lanes of the warp with the same key.
extern "C" __global__ void repro_max(const int *key, const int *val, int *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t] = __reduce_max_sync(__match_any_sync(~0u, key[t]), val[t]);
}

#define NOUT 24

// Every collective over g = the executing lanes of the warp with the same key.
// key < 0: the lane exits first (inline-PTX exit: the lane leaves the warp for good);
// key % 8 == 7: the lane takes the else branch (inactive during the ops).
extern "C" __global__ void group_ops(const int *key, const unsigned *val, unsigned *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int k = key[t];
    if (k < 0)
        asm volatile("exit;");
    unsigned v = val[t];
    unsigned *o = out + NOUT * t;
    if (k % 8 == 7) {
        o[0] = 0xdeadbeefu;
    } else {
        unsigned g = __match_any_sync(__activemask(), k);
        o[0] = g;
        o[1] = __reduce_add_sync(g, v);
        o[2] = __reduce_min_sync(g, v);
        o[3] = __reduce_max_sync(g, v);
        o[4] = (unsigned)__reduce_min_sync(g, (int)v);
        o[5] = (unsigned)__reduce_max_sync(g, (int)v);
        o[6] = __reduce_and_sync(g, v);
        o[7] = __reduce_or_sync(g, v);
        o[8] = __reduce_xor_sync(g, v);
        o[9] = __ballot_sync(g, v & 1);
        o[10] = __any_sync(g, (v & 6) == 6);
        o[11] = __all_sync(g, (v & 24) != 0);
        o[12] = __uni_sync(g, v & 32);
        o[13] = __match_any_sync(g, v % 3);
        int pred;
        o[14] = __match_all_sync(g, (v >> 6) & 1, &pred);
        o[15] = pred;
        // 64-bit values whose low halves are all equal.
        o[16] = __match_any_sync(g, ((unsigned long long)(v % 3) << 32) | 7u);
        o[17] = __match_all_sync(g, ((unsigned long long)((v >> 7) & 1) << 40) | 3u, &pred);
        o[18] = pred;
        unsigned leader, elected;
        asm volatile("{ .reg .pred p; elect.sync %0|p, %2; selp.u32 %1, 1, 0, p; }"
                     : "=r"(leader), "=r"(elected) : "r"(g));
        o[19] = leader;
        o[20] = elected;
        o[21] = __shfl_sync(g, v, __ffs(g) - 1);     // broadcast from the group's first lane
        o[22] = __activemask();
        o[23] = __shfl_xor_sync(__activemask(), v, 1);
    }
}

#define NTILE 6

// Shuffles within tiles: each 8-lane (16-lane) segment passes its own mask.
extern "C" __global__ void tile_shfl(const unsigned *val, const unsigned *lane_arg, unsigned *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane = threadIdx.x & 31;
    unsigned v = val[t], b = lane_arg[t];
    unsigned seg8 = 0xffu << (lane & 24), seg16 = 0xffffu << (lane & 16);
    unsigned *o = out + NTILE * t;
    o[0] = __shfl_sync(seg8, v, b, 8);
    o[1] = __shfl_up_sync(seg8, v, 3, 8);
    o[2] = __shfl_down_sync(seg8, v, 2, 8);
    o[3] = __shfl_xor_sync(seg8, v, 5, 8);
    o[4] = __shfl_xor_sync(seg16, v, 9, 16);
    o[5] = __shfl_down_sync(seg16, v, b & 15, 16);
}

// warpAggregatedAtomicsCG's mapToBuckets: one atomic per labeled group, plus the
// group's maximum value with cg::reduce(cg::greater).
extern "C" __global__ void bucket_agg(const int *bucket, const int *val, int *mx, int *idx,
                                      int *counters, int n, int nbuckets)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n)
        return;
    int b = bucket[t];
    if (b >= nbuckets)
        return;
    cg::coalesced_group active = cg::coalesced_threads();
    auto g = cg::labeled_partition(active, b);
    mx[t] = cg::reduce(g, val[t], cg::greater<int>());
    int res;
    if (g.thread_rank() == 0)
        res = atomicAdd(&counters[b], g.size());
    res = g.shfl(res, 0);
    idx[t] = res + g.thread_rank();
}

// warpAggregatedAtomicsCG's filter_arr: coalesced_threads() inside a divergent if.
extern "C" __global__ void filter_pos(int *dst, int *nres, const int *src, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n && src[t] > 0) {
        cg::coalesced_group active = cg::coalesced_threads();
        int res;
        if (active.thread_rank() == 0)
            res = atomicAdd(nres, active.size());
        res = active.shfl(res, 0);
        dst[res + active.thread_rank()] = src[t];
    }
}

// fns (find the n-th set bit), every base / offset case.
extern "C" __global__ void find_nth(const unsigned *mask, const unsigned *base, const int *offset,
                                    unsigned *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t] = __fns(mask[t], base[t], offset[t]);
}

#define NOUTSIDE 6

// Member masks that leave the lane itself out (undefined in the ISA; ptxc's
// documented choice: the lane reduces over mask & executing all the same):
// lane l passes the 4 lanes after it (mod 32), or no lane at all when v % 5 == 0.
extern "C" __global__ void outside_mask(const unsigned *val, unsigned *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane = threadIdx.x & 31, v = val[t];
    unsigned m = v % 5 == 0 ? 0u : __funnelshift_l(0xfu, 0xfu, lane + 1);
    unsigned *o = out + NOUTSIDE * t;
    o[0] = __reduce_add_sync(m, v);
    o[1] = (unsigned)__reduce_max_sync(m, (int)v);
    o[2] = __ballot_sync(m, v & 1);
    o[3] = __all_sync(m, v & 1);
    o[4] = __any_sync(m, v & 1);
    o[5] = __match_any_sync(m, v & 3);
}

#define NBRANCH 6

// Branches on collectives over labeled groups, so that the hybrid (slice-only)
// run must compute them, member masks included: hit[NBRANCH * t + i] = 1 when
// lane t takes branch i.
extern "C" __global__ void branch_on_groups(const int *key, const unsigned *val, unsigned *hit)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int k = key[t];
    unsigned v = val[t];
    unsigned *h = hit + NBRANCH * t;
    if (k < 0)
        return;
    unsigned g = __match_any_sync(__activemask(), k);
    if (__reduce_max_sync(g, v) == v)
        h[0] = 1;
    if (__reduce_add_sync(g, v & 7) > 3 * __popc(g))
        h[1] = 1;
    if (__all_sync(g, v & 1))
        h[2] = 1;
    if (__ballot_sync(g, v & 2) == (g & 0x55555555u))
        h[3] = 1;
    unsigned elected;
    asm volatile("{ .reg .pred p; elect.sync _|p, %1; selp.u32 %0, 1, 0, p; }" : "=r"(elected) : "r"(g));
    if (elected)
        h[4] = 1;
    int pred;
    __match_all_sync(g, v & 4, &pred);
    if (pred)
        h[5] = 1;
}
