// Texture read modes and array copies, for the static-runtime tests
// (tests/test_static_runtime.py), which build it twice at test time:
//   nvcc -arch=sm_90 -O3 texture_modes.cu                (static runtime: driver calls)
//   nvcc -cudart shared -arch=sm_90 -O3 texture_modes.cu
// Checks, against values computed here on the host:
//   * an 8-bit unsigned 2-D array read with cudaReadModeNormalizedFloat
//     gives v / 255 (the driver's default for integer formats) and with
//     cudaReadModeElementType gives v (CU_TRSF_READ_AS_INTEGER);
//   * a signed 16-bit array read normalized gives max(v / 32767, -1);
//   * a 3-D float array filled with cudaMemcpy3D at an offset and read back
//     with cudaMemcpy3D (array -> host) keeps every element;
//   * cudaMemcpy2DFromArray returns what cudaMemcpy2DToArray wrote.
// Launches: 3 (readU8, readU8Int, readS16).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    printf("CUDA error %d at line %d\n", (int)e_, __LINE__); exit(2); } } while (0)

__global__ void readU8(cudaTextureObject_t t, float *out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h)
        out[y * w + x] = tex2D<float>(t, x + 0.5f, y + 0.5f);
}

__global__ void readU8Int(cudaTextureObject_t t, unsigned *out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h)
        out[y * w + x] = tex2D<unsigned char>(t, x + 0.5f, y + 0.5f);
}

__global__ void readS16(cudaTextureObject_t t, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex1D<float>(t, i + 0.5f);
}

static cudaTextureObject_t texture(cudaArray_t a, cudaTextureReadMode mode)
{
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = a;
    cudaTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = mode;
    cudaTextureObject_t t;
    CHECK(cudaCreateTextureObject(&t, &res, &td, NULL));
    return t;
}

int main()
{
    const int w = 19, h = 7, n = 40;
    int bad = 0;
    unsigned char u8[h][w];
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            u8[y][x] = (unsigned char)((x * 37 + y * 11) & 255);
    cudaChannelFormatDesc cu8 = cudaCreateChannelDesc<unsigned char>();
    cudaArray_t a8;
    CHECK(cudaMallocArray(&a8, &cu8, w, h));
    CHECK(cudaMemcpy2DToArray(a8, 0, 0, u8, w, w, h, cudaMemcpyHostToDevice));
    unsigned char back8[h][w] = {};
    CHECK(cudaMemcpy2DFromArray(back8, w, a8, 0, 0, w, h, cudaMemcpyDeviceToHost));
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            bad += back8[y][x] != u8[y][x];
    printf("2-D array round trip: %s\n", bad ? "FAIL" : "ok");

    float *dout, out[w * h];
    unsigned *dint, outi[w * h];
    CHECK(cudaMalloc(&dout, sizeof out));
    CHECK(cudaMalloc(&dint, sizeof outi));
    cudaTextureObject_t tn = texture(a8, cudaReadModeNormalizedFloat);
    cudaTextureObject_t te = texture(a8, cudaReadModeElementType);
    dim3 block(8, 8), grid((w + 7) / 8, (h + 7) / 8);
    readU8<<<grid, block>>>(tn, dout, w, h);
    readU8Int<<<grid, block>>>(te, dint, w, h);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(outi, dint, sizeof outi, cudaMemcpyDeviceToHost));
    int bad_n = 0, bad_e = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            bad_n += out[y * w + x] != u8[y][x] / 255.0f;
            bad_e += outi[y * w + x] != u8[y][x];
        }
    printf("u8 normalized float: %s\nu8 element type: %s\n", bad_n ? "FAIL" : "ok",
           bad_e ? "FAIL" : "ok");

    short s16[n];
    for (int i = 0; i < n; i++)
        s16[i] = (short)((i * 2731) % 65536 - 32768);
    cudaChannelFormatDesc cs16 = cudaCreateChannelDesc<short>();
    cudaArray_t a16;
    CHECK(cudaMallocArray(&a16, &cs16, n, 0));
    CHECK(cudaMemcpy2DToArray(a16, 0, 0, s16, n * sizeof(short), n * sizeof(short), 1,
                              cudaMemcpyHostToDevice));
    cudaTextureObject_t ts = texture(a16, cudaReadModeNormalizedFloat);
    readS16<<<1, 64>>>(ts, dout, n);
    CHECK(cudaMemcpy(out, dout, n * sizeof(float), cudaMemcpyDeviceToHost));
    int bad_s = 0;
    for (int i = 0; i < n; i++) {
        float want = s16[i] / 32767.0f;
        bad_s += out[i] != (want < -1.0f ? -1.0f : want);
    }
    printf("s16 normalized float: %s\n", bad_s ? "FAIL" : "ok");

    const int W = 5, H = 4, D = 3;
    float vol[D][H][W], got[D][H][W] = {};
    for (int z = 0; z < D; z++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                vol[z][y][x] = z * 100.0f + y * 10.0f + x;
    cudaChannelFormatDesc cf = cudaCreateChannelDesc<float>();
    cudaArray_t a3;
    CHECK(cudaMalloc3DArray(&a3, &cf, make_cudaExtent(W + 2, H + 1, D + 1)));
    cudaMemcpy3DParms up = {};
    up.srcPtr = make_cudaPitchedPtr(vol, W * sizeof(float), W, H);
    up.dstArray = a3;
    up.dstPos = make_cudaPos(2, 1, 1);
    up.extent = make_cudaExtent(W, H, D);
    up.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&up));
    cudaMemcpy3DParms down = {};
    down.srcArray = a3;
    down.srcPos = make_cudaPos(2, 1, 1);
    down.dstPtr = make_cudaPitchedPtr(got, W * sizeof(float), W, H);
    down.extent = make_cudaExtent(W, H, D);
    down.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3D(&down));
    int bad_3 = 0;
    for (int z = 0; z < D; z++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                bad_3 += got[z][y][x] != vol[z][y][x];
    printf("3-D array round trip at an offset: %s\n", bad_3 ? "FAIL" : "ok");

    CHECK(cudaDestroyTextureObject(tn));
    CHECK(cudaDestroyTextureObject(te));
    CHECK(cudaDestroyTextureObject(ts));
    CHECK(cudaFreeArray(a8));
    CHECK(cudaFreeArray(a16));
    CHECK(cudaFreeArray(a3));
    CHECK(cudaFree(dout));
    CHECK(cudaFree(dint));
    bad += bad_n + bad_e + bad_s + bad_3;
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}
