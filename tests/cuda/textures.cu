// Texture and surface objects read and written by kernels (tests/test_textures.py):
// tex1D/tex2D/tex3D with float coordinates (filter, address mode and coordinate
// mode come from the texture object), tex1Dfetch on linear memory, float4 and
// normalized-float reads of integer textures, tex2Dgather (tld4) and
// surf2Dread/surf2Dwrite with each boundary mode.
//   nvcc -ptx -arch=sm_90 -O3 textures.cu -o textures.sm90.ptx

// out[i] = tex1D(t, x0 + i * dx)
extern "C" __global__ void tex1d(cudaTextureObject_t t, float *out, float x0, float dx, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(t, x0 + i * dx);
}

// out[j][i] = tex2D(t, x0 + i * dx, y0 + j * dy); one row per block
extern "C" __global__ void tex2d(cudaTextureObject_t t, float *out, float x0, float dx, float y0,
                                 float dy, int w)
{
    int i = threadIdx.x, j = blockIdx.x;
    if (i < w) out[j * w + i] = tex2D<float>(t, x0 + i * dx, y0 + j * dy);
}

// four channels of an 8-bit texture read as normalized floats
extern "C" __global__ void tex2d_rgba(cudaTextureObject_t t, float4 *out, float x0, float dx,
                                      float y0, float dy, int w)
{
    int i = threadIdx.x, j = blockIdx.x;
    if (i < w) out[j * w + i] = tex2D<float4>(t, x0 + i * dx, y0 + j * dy);
}

extern "C" __global__ void tex3d(cudaTextureObject_t t, float *out, float x0, float dx, float y,
                                 float z, int w)
{
    int i = threadIdx.x;
    if (i < w) out[i] = tex3D<float>(t, x0 + i * dx, y + blockIdx.x, z);
}

// tex1Dfetch: integer index, no filtering; out of range reads 0
extern "C" __global__ void fetch(cudaTextureObject_t t, int *out, int stride, int start, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<int>(t, start + i * stride);
}

// tld4: component comp of the 2x2 footprint (counter-clockwise from lower left)
extern "C" __global__ void gather(cudaTextureObject_t t, float4 *out, float x0, float dx, float y)
{
    int i = threadIdx.x;
    out[i] = tex2Dgather<float4>(t, x0 + i * dx, y, 0);
}

// surf2Dread -> transform -> surf2Dwrite (trap mode: the default)
extern "C" __global__ void surf_rw(cudaSurfaceObject_t s, int w, int h)
{
    int x = threadIdx.x, y = blockIdx.x;
    if (x < w && y < h) {
        int v = surf2Dread<int>(s, x * 4, y);
        surf2Dwrite<int>(v * 7 - x + 100 * y, s, x * 4, y);
    }
}

// reads at (x + dx, y) with the clamp and zero boundary modes, writes out[]
extern "C" __global__ void surf_modes(cudaSurfaceObject_t s, int *clamped, int *zeroed, int dx)
{
    int x = threadIdx.x, y = blockIdx.x;
    clamped[y * blockDim.x + x] = surf2Dread<int>(s, (x + dx) * 4, y, cudaBoundaryModeClamp);
    zeroed[y * blockDim.x + x] = surf2Dread<int>(s, (x + dx) * 4, y, cudaBoundaryModeZero);
}

// an out-of-range surface write in trap mode: a run-time error
extern "C" __global__ void surf_trap(cudaSurfaceObject_t s, int w)
{
    surf2Dwrite<int>(1, s, (threadIdx.x + w - 2) * 4, 0);
}

// a loop whose trip count is a texel: the slice keeps the tex (hybrid == full)
extern "C" __global__ void tex_branch(cudaTextureObject_t t, int *out, float x0)
{
    int i = threadIdx.x;
    int n = (int)tex1D<float>(t, x0 + i);
    int s = 0;
    for (int k = 0; k < n; k++)
        s += (k * k) ^ i;
    out[i] = s;
}

// vector surface accesses: uchar4 (suld/sust .v4.b8) and short2 (.v2.b16)
extern "C" __global__ void surf_vec(cudaSurfaceObject_t s4, cudaSurfaceObject_t s2, int w)
{
    int x = threadIdx.x, y = blockIdx.x;
    if (x >= w) return;
    uchar4 c = surf2Dread<uchar4>(s4, x * 4, y);
    surf2Dwrite<uchar4>(make_uchar4(c.w, c.z + 1, c.y, c.x ^ 0x5a), s4, x * 4, y);
    short2 p = surf2Dread<short2>(s2, x * 4, y);
    surf2Dwrite<short2>(make_short2(p.y - 3, p.x * 2), s2, x * 4, y);
}

// a 1-channel signed 16-bit texture read as normalized floats, point sampling
extern "C" __global__ void tex1d_norm(cudaTextureObject_t t, float *out, float x0, float dx)
{
    int i = threadIdx.x;
    out[i] = tex1D<float>(t, x0 + i * dx);
}

// layered textures: tex1DLayered / tex2DLayered (tex.a1d / tex.a2d)
extern "C" __global__ void tex_layered(cudaTextureObject_t t1, cudaTextureObject_t t2, float *out1,
                                       float *out2, float x0, float dx, float y, int w)
{
    int i = threadIdx.x, layer = blockIdx.x;
    if (i < w) {
        out1[layer * w + i] = tex1DLayered<float>(t1, x0 + i * dx, layer);
        out2[layer * w + i] = tex2DLayered<float>(t2, x0 + i * dx, y, layer);
    }
}
