// Seeded barrier and warp-synchronisation errors for synccheck
// (tests/test_synccheck.py).  Block sizes are in the comments.

// block 32: only lanes 0-15 reach the barrier.
__global__ void sync_in_if(int *out)
{
    int t = threadIdx.x;
    if (t < 16)
        __syncthreads();
    out[t] = t;
}

// block 64: warp 0 waits at one barrier, warp 1 at another.
__global__ void two_barriers(int *out)
{
    int t = threadIdx.x;
    if (t < 32) {
        out[t] = 1;
        __syncthreads();
        out[t] += 2;
    } else {
        out[t] = 3;
        __syncthreads();
        out[t] += 4;
    }
}

// block 32: a full-mask shuffle that only lanes 0-15 execute.
__global__ void shfl_divergent(const int *in, int *out)
{
    int t = threadIdx.x;
    int v = in[t];
    if (t < 16)
        v = __shfl_sync(0xffffffff, v, 0);
    out[t] = v;
}

// block 32: correct: the mask names exactly the lanes that execute, and a
// full mask after lanes 16-31 exited (exited lanes may be named).
__global__ void masks_ok(const int *in, int *out)
{
    int t = threadIdx.x;
    int v = in[t];
    if (t < 16) {
        v = __shfl_sync(0x0000ffff, v, 0);
        __syncwarp(0x0000ffff);
    }
    out[t] = v;
    if (t >= 16)
        return;
    out[t] = __shfl_sync(0xffffffff, v, 1);
    __syncthreads();
}

// block 32: __syncwarp() (all lanes) that only lanes 0-15 execute; lanes
// 16-31 wait for them after the if (they have not exited).
__global__ void syncwarp_divergent(int *out)
{
    int t = threadIdx.x;
    if (t < 16) {
        out[t] = t;
        __syncwarp();
        out[t] += out[t ^ 1];
    }
    out[t + 32] = t;
}
