// simpleTexture in the style of cuda-samples: rotate an image through a 2-D
// texture object (CUDA array, linear filtering, wrap addressing, normalized
// coordinates) and compare with a CPU reference of the CUDA programming
// guide's texture fetching formulas (appendix "Texture Fetching": weights in
// 9-bit fixed point with 8 fractional bits). Then a surface object round
// trip (surf2Dread/surf2Dwrite on an array made with
// cudaArraySurfaceLoadStore), tex1Dfetch on linear memory and pitched memory
// as a 2-D texture (clamp), each checked on the host. Prints one line per
// check and "PASSED" or "FAILED"; exits 1 on a failure. Built by tests/test_runtime_textures.py with
// nvcc -cudart shared -arch=sm_90.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    printf("CUDA error %d at %s:%d\n", (int)e_, __FILE__, __LINE__); exit(2); } } while (0)

__global__ void transformKernel(float *out, float2 *coords, int width, int height, float theta,
                                cudaTextureObject_t tex)
{
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= (unsigned)width || y >= (unsigned)height) return;
    float u = (float)x - (float)width / 2;
    float v = (float)y - (float)height / 2;
    float tu = u * cosf(theta) - v * sinf(theta);
    float tv = v * cosf(theta) + u * sinf(theta);
    tu /= (float)width;
    tv /= (float)height;
    out[y * width + x] = tex2D<float>(tex, tu + 0.5f, tv + 0.5f);
    coords[y * width + x] = make_float2(tu + 0.5f, tv + 0.5f);   // the host model uses these
}

__global__ void surfaceKernel(cudaSurfaceObject_t s, int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= width || y >= height) return;
    int v = surf2Dread<int>(s, x * 4, y);
    surf2Dwrite<int>(v * 3 + x - y, s, x * 4, y);
}

__global__ void fetchKernel(cudaTextureObject_t t, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<int>(t, 2 * i - 3);
}

// out[y][x] = tex2D(t, x + off, y + off) for a w x h grid
__global__ void readKernel(cudaTextureObject_t t, float *out, int w, int h, float off)
{
    int x = threadIdx.x, y = blockIdx.x;
    if (x < w && y < h) out[y * w + x] = tex2D<float>(t, x + off, y + off);
}

// ---------------------------------------------------------------- host model
// 9-bit fixed point, 8 fractional bits: nearest, ties up (ptxc's choice, docs/executor.md)
static float weight(float frac) { return floorf(frac * 256.0f + 0.5f) / 256.0f; }

static int wrap(int i, int n) { int m = i % n; return m < 0 ? m + n : m; }

static float tex2d_ref(const float *img, int w, int h, float u, float v)
{
    float x = u * (float)w - 0.5f, y = v * (float)h - 0.5f;
    float fx = floorf(x), fy = floorf(y);
    float a = weight(x - fx), b = weight(y - fy);
    int i = (int)fx, j = (int)fy;
    float t00 = img[wrap(j, h) * w + wrap(i, w)], t10 = img[wrap(j, h) * w + wrap(i + 1, w)];
    float t01 = img[wrap(j + 1, h) * w + wrap(i, w)], t11 = img[wrap(j + 1, h) * w + wrap(i + 1, w)];
    return (1 - a) * (1 - b) * t00 + a * (1 - b) * t10 + (1 - a) * b * t01 + a * b * t11;
}

static int check(const char *what, int bad)
{
    printf("%s: %s\n", what, bad ? "mismatch" : "ok");
    return bad;
}

static int rotate(int w, int h, float angle)
{
    size_t bytes = (size_t)w * h * sizeof(float);
    float *img = (float *)malloc(bytes), *out = (float *)malloc(bytes);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            img[y * w + x] = (float)((x * 7 + y * 13) % 29) / 29.0f;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    cudaArray_t arr;
    CHECK(cudaMallocArray(&arr, &desc, w, h));
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, img, w * sizeof(float), w * sizeof(float), h,
                              cudaMemcpyHostToDevice));
    cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.normalizedCoords = 1;
    td.filterMode = cudaFilterModeLinear;
    td.addressMode[0] = cudaAddressModeWrap;
    td.addressMode[1] = cudaAddressModeWrap;
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex;
    CHECK(cudaCreateTextureObject(&tex, &res, &td, NULL));
    cudaTextureDesc back;
    CHECK(cudaGetTextureObjectTextureDesc(&back, tex));
    int bad = back.filterMode != cudaFilterModeLinear || back.normalizedCoords != 1;
    float *dout;
    float2 *dcoords, *coords = (float2 *)malloc(2 * bytes);
    CHECK(cudaMalloc(&dout, bytes));
    CHECK(cudaMalloc(&dcoords, 2 * bytes));
    dim3 block(8, 8), grid((w + 7) / 8, (h + 7) / 8);
    transformKernel<<<grid, block>>>(dout, dcoords, w, h, angle, tex);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, dout, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(coords, dcoords, 2 * bytes, cudaMemcpyDeviceToHost));
    int mism = 0;
    for (int k = 0; k < w * h; k++) {
        float ref = tex2d_ref(img, w, h, coords[k].x, coords[k].y);
        if (fabsf(ref - out[k]) > 1e-5f)     // the order of the weighted sum may differ
            if (mism++ < 3)
                printf("pixel %d at (%.9g, %.9g): %.9g, expected %.9g\n", k, coords[k].x,
                       coords[k].y, out[k], ref);
    }
    if (mism)
        printf("rotate: %d of %d pixels differ\n", mism, w * h);
    CHECK(cudaDestroyTextureObject(tex));
    CHECK(cudaFreeArray(arr));
    CHECK(cudaFree(dout));
    CHECK(cudaFree(dcoords));
    free(coords);
    free(img);
    free(out);
    return check("rotate (linear, wrap, normalized)", bad || mism);
}

static int surfaces(int w, int h)
{
    int *a = (int *)malloc(w * h * sizeof(int)), *b = (int *)malloc(w * h * sizeof(int));
    for (int i = 0; i < w * h; i++)
        a[i] = i * 5 - 40;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<int>();
    cudaArray_t arr;
    CHECK(cudaMalloc3DArray(&arr, &desc, make_cudaExtent(w, h, 0), cudaArraySurfaceLoadStore));
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, a, w * sizeof(int), w * sizeof(int), h,
                              cudaMemcpyHostToDevice));
    cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaSurfaceObject_t s;
    CHECK(cudaCreateSurfaceObject(&s, &res));
    surfaceKernel<<<dim3(1, h), 64>>>(s, w, h);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy2DFromArray(b, w * sizeof(int), arr, 0, 0, w * sizeof(int), h,
                                cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            bad |= b[y * w + x] != a[y * w + x] * 3 + x - y;
    cudaChannelFormatDesc got;
    cudaExtent ext;
    unsigned flags;
    CHECK(cudaArrayGetInfo(&got, &ext, &flags, arr));
    bad |= got.x != 32 || got.f != cudaChannelFormatKindSigned || ext.width != (size_t)w
        || ext.height != (size_t)h || ext.depth != 0 || flags != cudaArraySurfaceLoadStore;
    CHECK(cudaDestroySurfaceObject(s));
    CHECK(cudaFreeArray(arr));
    free(a);
    free(b);
    return check("surface read/write", bad);
}

static int fetch(int n)
{
    int *h = (int *)malloc(n * sizeof(int)), *o = (int *)malloc(n * sizeof(int));
    for (int i = 0; i < n; i++)
        h[i] = 1000 + i * i;
    int *d, *dout;
    CHECK(cudaMalloc(&d, n * sizeof(int)));
    CHECK(cudaMalloc(&dout, n * sizeof(int)));
    CHECK(cudaMemcpy(d, h, n * sizeof(int), cudaMemcpyHostToDevice));
    cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = d;
    res.res.linear.desc = cudaCreateChannelDesc<int>();
    res.res.linear.sizeInBytes = n * sizeof(int);
    cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    cudaTextureObject_t t;
    CHECK(cudaCreateTextureObject(&t, &res, &td, NULL));
    fetchKernel<<<(n + 63) / 64, 64>>>(t, dout, n);
    CHECK(cudaMemcpy(o, dout, n * sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++) {
        int k = 2 * i - 3;                      // out of range reads 0
        bad |= o[i] != (k >= 0 && k < n ? h[k] : 0);
    }
    CHECK(cudaDestroyTextureObject(t));
    CHECK(cudaFree(d));
    CHECK(cudaFree(dout));
    free(h);
    free(o);
    return check("tex1Dfetch on linear memory", bad);
}

// pitched linear memory (cudaMallocPitch) as a 2-D texture: point sampling,
// clamp, unnormalized coordinates; read past every edge
static int pitched(int w, int h)
{
    float *img = (float *)malloc(w * h * sizeof(float));
    for (int i = 0; i < w * h; i++)
        img[i] = (float)(i * 3 % 17);
    float *d;
    size_t pitch;
    CHECK(cudaMallocPitch((void **)&d, &pitch, w * sizeof(float), h));
    CHECK(cudaMemcpy2D(d, pitch, img, w * sizeof(float), w * sizeof(float), h,
                       cudaMemcpyHostToDevice));
    cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = d;
    res.res.pitch2D.desc = cudaCreateChannelDesc<float>();
    res.res.pitch2D.width = w;
    res.res.pitch2D.height = h;
    res.res.pitch2D.pitchInBytes = pitch;
    cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    cudaTextureObject_t t;
    CHECK(cudaCreateTextureObject(&t, &res, &td, NULL));
    int W = w + 4, H = h + 4;
    float *dout, *out = (float *)malloc(W * H * sizeof(float));
    CHECK(cudaMalloc(&dout, W * H * sizeof(float)));
    readKernel<<<H, 32>>>(t, dout, W, H, -1.5f);
    CHECK(cudaMemcpy(out, dout, W * H * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int i = (int)floorf(x - 1.5f), j = (int)floorf(y - 1.5f);
            i = i < 0 ? 0 : i >= w ? w - 1 : i;
            j = j < 0 ? 0 : j >= h ? h - 1 : j;
            bad |= out[y * W + x] != img[j * w + i];
        }
    CHECK(cudaDestroyTextureObject(t));
    CHECK(cudaFree(d));
    CHECK(cudaFree(dout));
    free(img);
    free(out);
    return check("pitch2D (point, clamp)", bad);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "sparse")) {     // ptxc refuses sparse arrays
        cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
        cudaArray_t arr;
        CHECK(cudaMalloc3DArray(&arr, &desc, make_cudaExtent(8, 8, 2), cudaArraySparse));
        return 0;
    }
    int w = argc > 1 ? atoi(argv[1]) : 64, h = argc > 2 ? atoi(argv[2]) : 48;
    int bad = rotate(w, h, 0.5f);
    bad |= surfaces(40, 6);
    bad |= fetch(100);
    bad |= pitched(13, 5);
    printf("%s\n", bad ? "FAILED" : "PASSED");
    return bad ? 1 : 0;
}
