// Layered and cubemap textures and surfaces (tests/test_texture_layers.py):
// tex1DLayered/tex2DLayered (tex.a1d/tex.a2d) with any layer operand,
// texCubemap/texCubemapLayered (tex.cube/tex.acube) at given directions,
// surf1DLayered/surf2DLayered/surfCubemap/surfCubemapLayered read and write
// (suld.b.a1d/a2d, sust.b.a1d/a2d: a cubemap face is a layer), and the LOD and
// gradient forms (tex.level, tex.grad).
//   nvcc -ptx -arch=sm_90 -O3 texture_layers.cu -o texture_layers.sm90.ptx

// o1[i] = tex1DLayered(t1, x[i], layer[i]); o2[i] = tex2DLayered(t2, x[i], y[i], layer[i])
extern "C" __global__ void layered_at(cudaTextureObject_t t1, cudaTextureObject_t t2,
                                      const float *x, const float *y, const int *layer,
                                      float *o1, float *o2, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        o1[i] = tex1DLayered<float>(t1, x[i], layer[i]);
        o2[i] = tex2DLayered<float>(t2, x[i], y[i], layer[i]);
    }
}

// out[i] = texCubemap(t, d[3i], d[3i+1], d[3i+2])
extern "C" __global__ void cube_at(cudaTextureObject_t t, const float *d, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = texCubemap<float>(t, d[3 * i], d[3 * i + 1], d[3 * i + 2]);
}

// four channels of an integer cubemap (element reads, point sampling)
extern "C" __global__ void cube_at4(cudaTextureObject_t t, const float *d, int4 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = texCubemap<int4>(t, d[3 * i], d[3 * i + 1], d[3 * i + 2]);
}

// out[i] = texCubemapLayered(t, d[3i], d[3i+1], d[3i+2], cube[i])
extern "C" __global__ void cube_layered_at(cudaTextureObject_t t, const float *d, const int *cube,
                                           float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = texCubemapLayered<float>(t, d[3 * i], d[3 * i + 1], d[3 * i + 2], cube[i]);
}

// every texel (x, y) of layer blockIdx.x: v -> 3 v + 1000 layer - x (2-D layers)
extern "C" __global__ void surf2d_layered(cudaSurfaceObject_t s, int w, int h)
{
    int layer = blockIdx.x;
    for (int k = threadIdx.x; k < w * h; k += blockDim.x) {
        int x = k % w, y = k / w;
        int v = surf2DLayeredread<int>(s, x * 4, y, layer);
        surf2DLayeredwrite<int>(3 * v + 1000 * layer - x, s, x * 4, y, layer);
    }
}

// 1-D layers of unsigned shorts: v -> v ^ (layer << 8 | x)
extern "C" __global__ void surf1d_layered(cudaSurfaceObject_t s, int w)
{
    int layer = blockIdx.x, x = threadIdx.x;
    if (x < w) {
        unsigned short v = surf1DLayeredread<unsigned short>(s, x * 2, layer);
        surf1DLayeredwrite<unsigned short>(v ^ (unsigned short)(layer << 8 | x), s, x * 2, layer);
    }
}

// face blockIdx.x of a cubemap surface: (x, y) -> face * 10000 + y * 100 + x - old value
extern "C" __global__ void surf_cube(cudaSurfaceObject_t s, int w)
{
    int face = blockIdx.x;
    for (int k = threadIdx.x; k < w * w; k += blockDim.x) {
        int x = k % w, y = k / w;
        int v = surfCubemapread<int>(s, x * 4, y, face);
        surfCubemapwrite<int>(face * 10000 + y * 100 + x - v, s, x * 4, y, face);
    }
}

// cubemap blockIdx.y, face blockIdx.x of a layered cubemap surface: float2 (a, b) -> (b, a + cube)
extern "C" __global__ void surf_cube_layered(cudaSurfaceObject_t s, int w)
{
    int face = blockIdx.x, cube = blockIdx.y;
    for (int k = threadIdx.x; k < w * w; k += blockDim.x) {
        int x = k % w, y = k / w;
        float2 v = surfCubemapLayeredread<float2>(s, x * 8, y, 6 * cube + face);
        surfCubemapLayeredwrite<float2>(make_float2(v.y, v.x + cube), s, x * 8, y, 6 * cube + face);
    }
}

// one write at (x bytes, y, layer) with each boundary mode (trap, clamp, zero)
extern "C" __global__ void surf_layered_at(cudaSurfaceObject_t s, int x, int y, int layer, int mode,
                                           int value)
{
    if (mode == 0)
        surf2DLayeredwrite<int>(value, s, x, y, layer, cudaBoundaryModeTrap);
    else if (mode == 1)
        surf2DLayeredwrite<int>(value, s, x, y, layer, cudaBoundaryModeClamp);
    else
        surf2DLayeredwrite<int>(value, s, x, y, layer, cudaBoundaryModeZero);
}

// tex2DLayeredLod, texCubemapLod, texCubemapGrad (tex.level.a2d, tex.level.cube,
// tex.grad.cube): ptxc's textures have one level, so these read level 0
extern "C" __global__ void lod_at(cudaTextureObject_t t2, cudaTextureObject_t tc, const float *x,
                                  float lod, float *o1, float *o2, float *o3, int n)
{
    int i = threadIdx.x;
    if (i < n) {
        o1[i] = tex2DLayeredLod<float>(t2, x[i], 0.5f, 1, lod);
        o2[i] = texCubemapLod<float>(tc, x[i], 1.0f, 0.25f, lod);
        o3[i] = texCubemapGrad<float>(tc, x[i], 1.0f, 0.25f, make_float4(lod, 0, 0, 0),
                                      make_float4(0, lod, 0, 0));
    }
}
