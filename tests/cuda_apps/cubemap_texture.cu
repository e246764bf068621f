// simpleCubemapTexture in the style of cuda-samples: a cubemap CUDA array
// (cudaMalloc3DArray with cudaArrayCubemap, width x width x 6, filled by
// cudaMemcpy3D) read through a texture object with texCubemap (linear
// filtering, wrap, normalized coordinates) at each face's texel centres
// (the sample's kernel and check: out = -data) and a third of a texel off;
// texCubemap with point sampling at directions from the host (ties
// included); a layered cubemap (2 cubemaps) with texCubemapLayered and cube
// indices -1 .. 5; a cubemap surface (surfCubemapwrite) copied back with
// cudaMemcpy3D from face 2 on; cudaArrayGetInfo; the extent errors.
// Usage: cubemap_texture OUT.bin [WIDTH] | cubemap_texture seamless.
// Writes the results to OUT.bin (tests/test_runtime_texture_layers.py
// computes every value with numpy). Built with nvcc -cudart shared -arch=sm_90.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    printf("CUDA error %d at %s:%d\n", (int)e_, __FILE__, __LINE__); exit(2); } } while (0)

static float texel(int i) { return (float)((i * 7919) % 1000) / 16.0f - 30.0f; }

__global__ void transformKernel(float *g_odata, int width, float dx, cudaTextureObject_t tex)
{
    unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= (unsigned)width || y >= (unsigned)width) return;
    float u = ((x + 0.5f + dx) / (float)width) * 2.f - 1.f;
    float v = ((y + 0.5f) / (float)width) * 2.f - 1.f;
    float cx, cy, cz;
    for (unsigned int face = 0; face < 6; face++) {
        if (face == 0) { cx = 1; cy = -v; cz = -u; }          // layer 0: +x
        else if (face == 1) { cx = -1; cy = -v; cz = u; }     // layer 1: -x
        else if (face == 2) { cx = u; cy = 1; cz = v; }       // layer 2: +y
        else if (face == 3) { cx = u; cy = -1; cz = -v; }     // layer 3: -y
        else if (face == 4) { cx = u; cy = -v; cz = 1; }      // layer 4: +z
        else { cx = -u; cy = -v; cz = -1; }                   // layer 5: -z
        g_odata[face * width * width + y * width + x] = -texCubemap<float>(tex, cx, cy, cz);
    }
}

__global__ void atDirections(float *out, const float *d, int n, cudaTextureObject_t tex)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = texCubemap<float>(tex, d[3 * i], d[3 * i + 1], d[3 * i + 2]);
}

__global__ void atDirectionsLayered(float *out, const float *d, const int *cube, int n,
                                    cudaTextureObject_t tex)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = texCubemapLayered<float>(tex, d[3 * i], d[3 * i + 1], d[3 * i + 2], cube[i]);
}

__global__ void writeFaces(cudaSurfaceObject_t s, int width)
{
    int x = threadIdx.x, y = blockIdx.x, face = blockIdx.y;
    if (x < width && y < width) surfCubemapwrite<float>(face * 100 + y * width + x + 0.5f, s, x * 4, y, face);
}

static cudaTextureObject_t texture(cudaArray_t a, cudaTextureFilterMode f, cudaTextureAddressMode m,
                                   int normalized, int seamless)
{
    cudaResourceDesc r;
    memset(&r, 0, sizeof r);
    r.resType = cudaResourceTypeArray;
    r.res.array.array = a;
    cudaTextureDesc t;
    memset(&t, 0, sizeof t);
    t.normalizedCoords = normalized;
    t.filterMode = f;
    t.addressMode[0] = t.addressMode[1] = t.addressMode[2] = m;
    t.readMode = cudaReadModeElementType;
    t.seamlessCubemap = seamless;
    cudaTextureObject_t tex;
    CHECK(cudaCreateTextureObject(&tex, &r, &t, NULL));
    return tex;
}

static void info(const char *what, cudaArray_t a)
{
    cudaExtent e;
    unsigned flags;
    CHECK(cudaArrayGetInfo(NULL, &e, &flags, a));
    printf("%s: %zu x %zu x %zu flags %u\n", what, e.width, e.height, e.depth, flags);
}

static void errors(void)
{
    cudaChannelFormatDesc d = cudaCreateChannelDesc<float>();
    const struct { const char *what; size_t w, h, depth; unsigned flags; } cases[] = {
        {"cubemap 4 x 5 x 6", 4, 5, 6, cudaArrayCubemap},
        {"cubemap 4 x 4 x 5", 4, 4, 5, cudaArrayCubemap},
        {"cubemap 4 x 4 x 12", 4, 4, 12, cudaArrayCubemap},
        {"layered cubemap 4 x 4 x 8", 4, 4, 8, cudaArrayCubemap | cudaArrayLayered},
        {"layered cubemap 4 x 4 x 0", 4, 4, 0, cudaArrayCubemap | cudaArrayLayered},
        {"cubemap 0 x 0 x 6", 0, 0, 6, cudaArrayCubemap},
        {"layered cubemap 3 x 3 x 18", 3, 3, 18, cudaArrayCubemap | cudaArrayLayered},
    };
    for (int k = 0; k < 7; k++) {
        cudaArray_t a = NULL;
        cudaError_t e = cudaMalloc3DArray(&a, &d, make_cudaExtent(cases[k].w, cases[k].h, cases[k].depth),
                                          cases[k].flags);
        printf("%s: %d\n", cases[k].what, (int)e);
        cudaGetLastError();
        if (e == cudaSuccess) CHECK(cudaFreeArray(a));
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cubemap_texture OUT.bin [WIDTH] | cubemap_texture seamless\n");
        return 2;
    }
    int seamless = !strcmp(argv[1], "seamless");
    int width = argc > 2 ? atoi(argv[2]) : 8, num_faces = 6;
    size_t n = (size_t)width * width * num_faces;
    size_t room = n > 192 ? n : 192;     // the layered cubemap takes 4 x 4 x 12 texels
    float *h_data = (float *)malloc(room * sizeof(float)), *res = (float *)malloc(room * sizeof(float));
    for (size_t i = 0; i < room; i++) h_data[i] = texel((int)i);

    cudaChannelFormatDesc channelDesc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    cudaArray *cu_3darray;
    CHECK(cudaMalloc3DArray(&cu_3darray, &channelDesc, make_cudaExtent(width, width, num_faces),
                            cudaArrayCubemap));
    cudaMemcpy3DParms myparms = {0};
    myparms.srcPos = make_cudaPos(0, 0, 0);
    myparms.dstPos = make_cudaPos(0, 0, 0);
    myparms.srcPtr = make_cudaPitchedPtr(h_data, width * sizeof(float), width, width);
    myparms.dstArray = cu_3darray;
    myparms.extent = make_cudaExtent(width, width, num_faces);
    myparms.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&myparms));
    if (seamless) {                 // ptxc stops here: seamless filtering is not supported
        texture(cu_3darray, cudaFilterModeLinear, cudaAddressModeWrap, 1, 1);
        printf("seamless texture made\n");
        return 0;
    }
    FILE *out = fopen(argv[1], "wb");
    info("cubemap", cu_3darray);

    cudaTextureObject_t tex = texture(cu_3darray, cudaFilterModeLinear, cudaAddressModeWrap, 1, 0);
    float *d_data;
    CHECK(cudaMalloc(&d_data, n * sizeof(float)));
    dim3 dimBlock(8, 8, 1), dimGrid((width + 7) / 8, (width + 7) / 8, 1);
    const float offsets[2] = {0.0f, 1.0f / 3.0f};
    for (int k = 0; k < 2; k++) {
        transformKernel<<<dimGrid, dimBlock>>>(d_data, width, offsets[k], tex);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(res, d_data, n * sizeof(float), cudaMemcpyDeviceToHost));
        fwrite(res, sizeof(float), n, out);
        if (k == 0) {               // the sample's own check: texel centres read -data
            int bad = 0;
            for (size_t i = 0; i < n; i++) bad += res[i] != -h_data[i];
            printf("texel centres: %s\n", bad ? "FAILED" : "PASSED");
        }
    }

    // point sampling at directions with components k / 4 - 2 (ties included)
    const int nd = 96;
    float dirs[3 * nd];
    for (int i = 0; i < 3 * nd; i++) dirs[i] = (float)((i * 37 + i / 3) % 17) / 4.0f - 2.0f;
    float *d_dirs, *d_o;
    CHECK(cudaMalloc(&d_dirs, sizeof dirs));
    CHECK(cudaMalloc(&d_o, nd * sizeof(float)));
    CHECK(cudaMemcpy(d_dirs, dirs, sizeof dirs, cudaMemcpyHostToDevice));
    cudaTextureObject_t tp = texture(cu_3darray, cudaFilterModePoint, cudaAddressModeClamp, 0, 0);
    atDirections<<<3, 32>>>(d_o, d_dirs, nd, tp);
    CHECK(cudaMemcpy(res, d_o, nd * sizeof(float), cudaMemcpyDeviceToHost));
    fwrite(res, sizeof(float), nd, out);

    // a layered cubemap of 2 cubemaps of 4 x 4 faces
    cudaArray_t lc;
    CHECK(cudaMalloc3DArray(&lc, &channelDesc, make_cudaExtent(4, 4, 12),
                            cudaArrayCubemap | cudaArrayLayered));
    info("layered cubemap", lc);
    cudaMemcpy3DParms p2 = {0};
    p2.srcPtr = make_cudaPitchedPtr(h_data, 4 * sizeof(float), 4, 4);
    p2.dstArray = lc;
    p2.extent = make_cudaExtent(4, 4, 12);
    p2.kind = cudaMemcpyDefault;
    CHECK(cudaMemcpy3D(&p2));
    int cubes[nd];
    for (int i = 0; i < nd; i++) cubes[i] = i % 4 == 3 ? -1 : i % 4 == 2 ? 5 : i % 2;
    int *d_cubes;
    CHECK(cudaMalloc(&d_cubes, sizeof cubes));
    CHECK(cudaMemcpy(d_cubes, cubes, sizeof cubes, cudaMemcpyHostToDevice));
    cudaTextureObject_t tl = texture(lc, cudaFilterModeLinear, cudaAddressModeClamp, 1, 0);
    atDirectionsLayered<<<3, 32>>>(d_o, d_dirs, d_cubes, nd, tl);
    CHECK(cudaMemcpy(res, d_o, nd * sizeof(float), cudaMemcpyDeviceToHost));
    fwrite(res, sizeof(float), nd, out);

    // a cubemap surface: faces 2..5 copied back
    cudaArray_t sc;
    CHECK(cudaMalloc3DArray(&sc, &channelDesc, make_cudaExtent(width, width, 6),
                            cudaArrayCubemap | cudaArraySurfaceLoadStore));
    info("cubemap surface", sc);
    cudaResourceDesc r;
    memset(&r, 0, sizeof r);
    r.resType = cudaResourceTypeArray;
    r.res.array.array = sc;
    cudaSurfaceObject_t s;
    CHECK(cudaCreateSurfaceObject(&s, &r));
    writeFaces<<<dim3(width, 6), 32>>>(s, width);
    cudaMemcpy3DParms p3 = {0};
    p3.srcArray = sc;
    p3.srcPos = make_cudaPos(0, 0, 2);
    p3.dstPtr = make_cudaPitchedPtr(res, width * sizeof(float), width, width);
    p3.extent = make_cudaExtent(width, width, 4);
    p3.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3D(&p3));
    fwrite(res, sizeof(float), (size_t)width * width * 4, out);
    p3.srcPos = make_cudaPos(0, 0, 3);               // faces 3..6: one past the last
    printf("copy past the last face: %d\n", (int)cudaMemcpy3D(&p3));
    cudaGetLastError();

    errors();
    fclose(out);
    CHECK(cudaDestroyTextureObject(tex));
    CHECK(cudaDestroyTextureObject(tp));
    CHECK(cudaDestroyTextureObject(tl));
    CHECK(cudaDestroySurfaceObject(s));
    CHECK(cudaFreeArray(cu_3darray));
    CHECK(cudaFreeArray(lc));
    CHECK(cudaFreeArray(sc));
    printf("done\n");
    return 0;
}
