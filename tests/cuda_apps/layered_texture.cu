// simpleLayeredTexture in the style of cuda-samples: a 2-D layered CUDA array
// (cudaMalloc3DArray with cudaArrayLayered, filled by cudaMemcpy3D) read
// through a texture object with tex2DLayered (linear filtering, wrap,
// normalized coordinates) at the texel centres (the sample's check: out =
// -data + layer) and half a texel off; a 1-D layered array (height 0) with
// tex1DLayered (point, clamp, unnormalized), layer operands -1 .. layers;
// a layered surface (surf2DLayeredwrite) copied back with cudaMemcpy3D from
// an offset; array-to-array and pointer-to-pointer (cudaMalloc3D) cudaMemcpy3D;
// cudaArrayGetInfo; the extent
// and cudaMemcpy3D error paths.
// Usage: layered_texture OUT.bin [W H LAYERS]. Writes the results to OUT.bin
// (tests/test_runtime_texture_layers.py computes every value with numpy) and
// prints one line per query. Built with nvcc -cudart shared -arch=sm_90.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    printf("CUDA error %d at %s:%d\n", (int)e_, __FILE__, __LINE__); exit(2); } } while (0)

// texel i of the data: exact in float32 (an integer over 16)
static float texel(int i) { return (float)((i * 7919) % 1000) / 16.0f - 30.0f; }

__global__ void transformKernel(float *g_odata, int width, int height, int layer, float dx, float dy,
                                cudaTextureObject_t tex)
{
    unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= (unsigned)width || y >= (unsigned)height) return;
    float u = (x + 0.5f + dx) / (float)width;
    float v = (y + 0.5f + dy) / (float)height;
    g_odata[layer * width * height + y * width + x] = -tex2DLayered<float>(tex, u, v, layer) + layer;
}

__global__ void layers1d(float *out, const float *xs, const int *layer, int n, cudaTextureObject_t tex)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1DLayered<float>(tex, xs[i], layer[i]);
}

__global__ void writeLayers(cudaSurfaceObject_t s, int width, int height)
{
    int x = threadIdx.x, y = blockIdx.x, layer = blockIdx.y;
    if (x < width && y < height) surf2DLayeredwrite<int>(layer * 1000 + y * width + x, s, x * 4, y, layer);
}

static cudaTextureObject_t texture(cudaArray_t a, cudaTextureFilterMode f, cudaTextureAddressMode m,
                                   int normalized)
{
    cudaResourceDesc r;
    memset(&r, 0, sizeof r);
    r.resType = cudaResourceTypeArray;
    r.res.array.array = a;
    cudaTextureDesc t;
    memset(&t, 0, sizeof t);
    t.normalizedCoords = normalized;
    t.filterMode = f;
    t.addressMode[0] = t.addressMode[1] = m;
    t.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex;
    CHECK(cudaCreateTextureObject(&tex, &r, &t, NULL));
    return tex;
}

static void info(const char *what, cudaArray_t a)
{
    cudaChannelFormatDesc d;
    cudaExtent e;
    unsigned flags;
    CHECK(cudaArrayGetInfo(&d, &e, &flags, a));
    printf("%s: %zu x %zu x %zu flags %u bits %d\n", what, e.width, e.height, e.depth, flags, d.x);
}

static void errors(void)
{
    cudaChannelFormatDesc d = cudaCreateChannelDesc<float>();
    cudaArray_t a;
    printf("layered depth 0: %d\n", (int)cudaMalloc3DArray(&a, &d, make_cudaExtent(4, 4, 0), cudaArrayLayered));
    cudaGetLastError();
    printf("cudaMallocArray layered: %d\n", (int)cudaMallocArray(&a, &d, 4, 4, cudaArrayLayered));
    cudaGetLastError();
    printf("3-D height 0: %d\n", (int)cudaMalloc3DArray(&a, &d, make_cudaExtent(4, 0, 3), 0));
    cudaGetLastError();
    CHECK(cudaMalloc3DArray(&a, &d, make_cudaExtent(4, 4, 2), cudaArrayLayered));
    float host[4 * 4 * 3] = {0};
    cudaMemcpy3DParms p = {0};
    p.srcPtr = make_cudaPitchedPtr(host, 16, 4, 4);
    p.dstArray = a;
    p.extent = make_cudaExtent(4, 4, 3);          // one layer too many
    p.kind = cudaMemcpyHostToDevice;
    printf("copy past the last layer: %d\n", (int)cudaMemcpy3D(&p));
    cudaGetLastError();
    p.extent = make_cudaExtent(4, 4, 2);
    p.dstPtr = make_cudaPitchedPtr(host, 16, 4, 4);   // an array and a pointer
    printf("copy to array and pointer: %d\n", (int)cudaMemcpy3D(&p));
    cudaGetLastError();
    CHECK(cudaFreeArray(a));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: layered_texture OUT.bin [W H LAYERS]\n");
        return 2;
    }
    int w = argc > 4 ? atoi(argv[2]) : 8, h = argc > 4 ? atoi(argv[3]) : 6;
    int layers = argc > 4 ? atoi(argv[4]) : 3;
    FILE *out = fopen(argv[1], "wb");
    size_t n = (size_t)w * h * layers;
    float *data = (float *)malloc(n * sizeof(float)), *res = (float *)malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) data[i] = texel((int)i);

    // 2-D layered: the sample's steps
    cudaChannelFormatDesc desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    cudaArray *cu_3darray;
    CHECK(cudaMalloc3DArray(&cu_3darray, &desc, make_cudaExtent(w, h, layers), cudaArrayLayered));
    cudaMemcpy3DParms myparms = {0};
    myparms.srcPos = make_cudaPos(0, 0, 0);
    myparms.dstPos = make_cudaPos(0, 0, 0);
    myparms.srcPtr = make_cudaPitchedPtr(data, w * sizeof(float), w, h);
    myparms.dstArray = cu_3darray;
    myparms.extent = make_cudaExtent(w, h, layers);
    myparms.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&myparms));
    info("2-D layered", cu_3darray);
    cudaTextureObject_t tex = texture(cu_3darray, cudaFilterModeLinear, cudaAddressModeWrap, 1);
    float *d_out;
    CHECK(cudaMalloc(&d_out, n * sizeof(float)));
    dim3 block(8, 8), grid((w + 7) / 8, (h + 7) / 8);
    const float offsets[2][2] = {{0.0f, 0.0f}, {0.3f, -0.45f}};
    for (int k = 0; k < 2; k++) {
        for (int layer = 0; layer < layers; layer++)
            transformKernel<<<grid, block>>>(d_out, w, h, layer, offsets[k][0], offsets[k][1], tex);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(res, d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
        fwrite(res, sizeof(float), n, out);
    }
    CHECK(cudaDestroyTextureObject(tex));

    // 1-D layered (height 0), copied with the kind cudaMemcpyHostToHost (corrected)
    int w1 = 5, n1 = 48;
    cudaArray_t a1;
    CHECK(cudaMalloc3DArray(&a1, &desc, make_cudaExtent(w1, 0, layers), cudaArrayLayered));
    info("1-D layered", a1);
    cudaMemcpy3DParms p1 = {0};
    p1.srcPtr = make_cudaPitchedPtr(data, w1 * sizeof(float), w1, 1);
    p1.dstArray = a1;
    p1.extent = make_cudaExtent(w1, 1, layers);
    p1.kind = cudaMemcpyHostToHost;
    CHECK(cudaMemcpy3D(&p1));
    float xs[48];
    int ls[48];
    for (int i = 0; i < n1; i++) {
        xs[i] = (i % 16 - 3) * 0.375f;              // -1.125 .. 4.5 texels: exact
        ls[i] = i / 16 * (layers + 1) - 1 + i % 3;  // -1 .. layers + 2
    }
    float *d_xs, *d_o1;
    int *d_ls;
    CHECK(cudaMalloc(&d_xs, sizeof xs));
    CHECK(cudaMalloc(&d_ls, sizeof ls));
    CHECK(cudaMalloc(&d_o1, n1 * sizeof(float)));
    CHECK(cudaMemcpy(d_xs, xs, sizeof xs, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_ls, ls, sizeof ls, cudaMemcpyHostToDevice));
    cudaTextureObject_t t1 = texture(a1, cudaFilterModePoint, cudaAddressModeClamp, 0);
    layers1d<<<2, 32>>>(d_o1, d_xs, d_ls, n1, t1);
    CHECK(cudaMemcpy(res, d_o1, n1 * sizeof(float), cudaMemcpyDeviceToHost));
    fwrite(res, sizeof(float), n1, out);
    CHECK(cudaDestroyTextureObject(t1));

    // a layered surface, copied back from (2, 1, 1) into a pitched buffer at (1, 0, 0)
    cudaArray_t sa;
    cudaChannelFormatDesc idesc = cudaCreateChannelDesc<int>();
    CHECK(cudaMalloc3DArray(&sa, &idesc, make_cudaExtent(w, h, layers),
                            cudaArrayLayered | cudaArraySurfaceLoadStore));
    info("layered surface", sa);
    cudaResourceDesc r;
    memset(&r, 0, sizeof r);
    r.resType = cudaResourceTypeArray;
    r.res.array.array = sa;
    cudaSurfaceObject_t s;
    CHECK(cudaCreateSurfaceObject(&s, &r));
    writeLayers<<<dim3(h, layers), 32>>>(s, w, h);
    int *back = (int *)malloc(n * sizeof(int));
    for (size_t i = 0; i < n; i++) back[i] = -1;
    cudaMemcpy3DParms p2 = {0};
    p2.srcArray = sa;
    p2.srcPos = make_cudaPos(2, 1, 1);
    p2.dstPtr = make_cudaPitchedPtr(back, w * sizeof(int), w, h);
    p2.dstPos = make_cudaPos(sizeof(int), 0, 0);            // bytes on the pointer side
    p2.extent = make_cudaExtent(w - 2, h - 1, layers - 1);
    p2.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3D(&p2));
    fwrite(back, sizeof(int), n, out);
    CHECK(cudaDestroySurfaceObject(s));

    // array to array: layers 1.. of the 2-D layered array, from (1, 2), into a
    // second layered array at (0, 0, 0), then back to the host
    cudaArray_t a2;
    CHECK(cudaMalloc3DArray(&a2, &desc, make_cudaExtent(w, h, layers), cudaArrayLayered));
    cudaMemcpy3DParms p3 = {0};
    p3.srcArray = cu_3darray;
    p3.srcPos = make_cudaPos(1, 2, 1);
    p3.dstArray = a2;
    p3.extent = make_cudaExtent(w - 1, h - 2, layers - 1);
    p3.kind = cudaMemcpyDeviceToDevice;
    float *zeros = (float *)calloc(n, sizeof(float));
    cudaMemcpy3DParms pz = {0};
    pz.srcPtr = make_cudaPitchedPtr(zeros, w * sizeof(float), w, h);
    pz.dstArray = a2;
    pz.extent = make_cudaExtent(w, h, layers);
    pz.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&pz));
    CHECK(cudaMemcpy3D(&p3));
    cudaMemcpy3DParms pb = {0};
    pb.srcArray = a2;
    pb.dstPtr = make_cudaPitchedPtr(res, w * sizeof(float), w, h);
    pb.extent = make_cudaExtent(w, h, layers);
    pb.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3D(&pb));
    fwrite(res, sizeof(float), n, out);
    p3.dstArray = sa;                                    // int array: same element size
    CHECK(cudaMemcpy3D(&p3));
    cudaArray_t small;
    cudaChannelFormatDesc hdesc = cudaCreateChannelDesc<short>();
    CHECK(cudaMalloc3DArray(&small, &hdesc, make_cudaExtent(w, h, layers), cudaArrayLayered));
    p3.dstArray = small;
    printf("copy between element sizes 4 and 2: %d\n", (int)cudaMemcpy3D(&p3));
    cudaGetLastError();
    CHECK(cudaFreeArray(a2));
    CHECK(cudaFreeArray(small));

    // pointer to pointer: into cudaMalloc3D memory (pitched), back from (4 bytes, 1, 1)
    cudaPitchedPtr pp;
    CHECK(cudaMalloc3D(&pp, make_cudaExtent(w * sizeof(float), h, layers)));
    cudaMemcpy3DParms q = {0};
    q.srcPtr = make_cudaPitchedPtr(data, w * sizeof(float), w, h);
    q.dstPtr = pp;
    q.extent = make_cudaExtent(w * sizeof(float), h, layers);     // bytes: no array
    q.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&q));
    for (size_t i = 0; i < n; i++) res[i] = 0.0f;
    cudaMemcpy3DParms qb = {0};
    qb.srcPtr = pp;
    qb.srcPos = make_cudaPos(sizeof(float), 1, 1);
    qb.dstPtr = make_cudaPitchedPtr(res, w * sizeof(float), w, h);
    qb.extent = make_cudaExtent((w - 1) * sizeof(float), h - 1, layers - 1);
    qb.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3D(&qb));
    fwrite(res, sizeof(float), n, out);
    CHECK(cudaFree(pp.ptr));

    errors();
    fclose(out);
    CHECK(cudaFreeArray(cu_3darray));
    CHECK(cudaFreeArray(a1));
    CHECK(cudaFreeArray(sa));
    printf("done\n");
    return 0;
}
