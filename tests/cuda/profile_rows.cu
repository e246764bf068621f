// Rows of `ptxc profile` (ptxc/module_profile.py): per-CTA rows of kernels
// with no bound check, launches from a launch file, --zero-fill of memory the
// control flow reads.  __block_size__ gives .reqntid, __launch_bounds__ .maxntid.
//   nvcc -ptx -arch=sm_90 -O3 profile_rows.cu -o profile_rows.sm90.ptx

// No bound check (XLA's exact-fit grid): the grid is not in the PTX, so
// without a launch the kernel gets a per-CTA row.  Threads 0..39 of a CTA
// store, 40..63 do not.
extern "C" __global__ void __block_size__((64, 1, 1)) exact_fit(float *out, const float *in)
{
    unsigned i = blockIdx.x * 64 + threadIdx.x;
    if (threadIdx.x < 40)
        out[i] = 3.0f * in[i];
}

// Only .maxntid: the per-CTA row uses the largest block the kernel allows.
extern "C" __global__ void __launch_bounds__(96) max_only(float *out)
{
    out[blockIdx.x * 96 + threadIdx.x] = 1.0f;
}

// Neither .reqntid nor .maxntid: no per-CTA row either.
extern "C" __global__ void no_bounds(float *out)
{
    out[blockIdx.x * blockDim.x + threadIdx.x] = 2.0f;
}

// A bound check against a constant: the launch is inferred (grid ceil(50/32) = 2).
extern "C" __global__ void __block_size__((32, 1, 1)) guarded(float *out)
{
    unsigned i = blockIdx.x * 32 + threadIdx.x;
    if (i < 50)
        out[i] = 1.0f;
}

// The bound is a parameter: a scalar control input (--arg or a launch file).
extern "C" __global__ void __block_size__((32, 1, 1)) bounded(float *out, int n)
{
    int i = blockIdx.x * 32 + threadIdx.x;
    if (i < n)
        out[i] = (float)i;
}

// The branch reads memory: flags is a control input (--arg or --zero-fill).
extern "C" __global__ void __block_size__((32, 1, 1)) data_branch(float *out, const int *flags)
{
    unsigned i = blockIdx.x * 32 + threadIdx.x;
    if (flags[i] != 0)
        out[i] = 5.0f;
}

// Memory and a scalar: --zero-fill covers flags, n still needs --arg.
extern "C" __global__ void __block_size__((32, 1, 1)) mixed(float *out, const int *flags, int n)
{
    int i = blockIdx.x * 32 + threadIdx.x;
    if (i < n && flags[i] != 0)
        out[i] = 7.0f;
}
