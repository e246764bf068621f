// hotspot: transient chip temperature on a 2-D grid: every step, each cell moves
// towards its four neighbours, the ambient temperature and its power input
// (explicit 5-point stencil; cells on the border use their own temperature for
// the missing neighbours). Each CTA stages a 16 x 16 tile plus a one-cell halo
// in shared memory; one launch per time step, ping-pong between two grids.
// Modelled on Rodinia hotspot (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 hotspot.cu -o hotspot
// Run:   ./hotspot [side] [out.bin]   (default a 64 x 64 grid, 6 steps)
// Checks: every cell within 1e-3 of the host simulation (f32; the device may fuse
//         multiply-adds). out.bin: int32 side, int32 steps, f32 coefficients
//         cp cx cy cz amb, f32 temp0[side^2], power[side^2], result[side^2];
//         the test recomputes the simulation with numpy.
// API: cudaMalloc, cudaMemcpy, 2-D grid and block, shared tile with halo,
//      __syncthreads, cudaDeviceSynchronize, cudaFree.
// Launches: STEPS = 6.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>

#define CHECK(call)                                                              \
    do {                                                                         \
        cudaError_t err_ = (call);                                               \
        if (err_ != cudaSuccess) {                                               \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
                    cudaGetErrorString(err_));                                   \
            exit(EXIT_FAILURE);                                                  \
        }                                                                        \
    } while (0)

#define BS 16
#define STEPS 6

struct Coefficients {
    float cp, cx, cy, cz, amb;
};

__global__ void hotspotStep(const float *temp, const float *power, float *out, int side,
                            Coefficients k)
{
    __shared__ float tile[BS + 2][BS + 2];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * BS + tx, y = blockIdx.y * BS + ty;
    bool inside = x < side && y < side;
    float t = inside ? temp[y * side + x] : 0.0f;
    tile[ty + 1][tx + 1] = t;
    if (inside) {   // halo: the neighbour, or the cell itself on the grid border
        if (tx == 0) tile[ty + 1][0] = x > 0 ? temp[y * side + x - 1] : t;
        if (tx == BS - 1 || x == side - 1) tile[ty + 1][tx + 2] = x < side - 1 ? temp[y * side + x + 1] : t;
        if (ty == 0) tile[0][tx + 1] = y > 0 ? temp[(y - 1) * side + x] : t;
        if (ty == BS - 1 || y == side - 1) tile[ty + 2][tx + 1] = y < side - 1 ? temp[(y + 1) * side + x] : t;
    }
    __syncthreads();
    if (!inside) return;
    float west = tile[ty + 1][tx], east = tile[ty + 1][tx + 2];
    float north = tile[ty][tx + 1], south = tile[ty + 2][tx + 1];
    out[y * side + x] = t + k.cp * power[y * side + x] + k.cy * (north + south - 2.0f * t) +
                        k.cx * (east + west - 2.0f * t) + k.cz * (k.amb - t);
}

int main(int argc, char **argv)
{
    int side = argc > 1 ? atoi(argv[1]) : 64;
    if (side <= 0) side = 64;
    const char *outPath = argc > 2 ? argv[2] : NULL;
    size_t cells = (size_t)side * side, bytes = cells * sizeof(float);
    float *temp = (float *)malloc(bytes), *power = (float *)malloc(bytes);
    float *ref = (float *)malloc(bytes), *next = (float *)malloc(bytes), *got = (float *)malloc(bytes);
    for (size_t i = 0; i < cells; ++i) {
        temp[i] = 320.0f + (float)((i * 7919) % 200) * 0.1f;
        power[i] = (float)((i * 104729) % 97) * 0.01f;
    }
    Coefficients k = {0.5f, 0.12f, 0.1f, 0.01f, 80.0f};

    float *dTemp[2], *dPower;
    CHECK(cudaMalloc(&dTemp[0], bytes));
    CHECK(cudaMalloc(&dTemp[1], bytes));
    CHECK(cudaMalloc(&dPower, bytes));
    CHECK(cudaMemcpy(dTemp[0], temp, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dPower, power, bytes, cudaMemcpyHostToDevice));
    dim3 block(BS, BS), grid((side + BS - 1) / BS, (side + BS - 1) / BS);
    int src = 0;
    for (int s = 0; s < STEPS; ++s) {
        hotspotStep<<<grid, block>>>(dTemp[src], dPower, dTemp[1 - src], side, k);
        CHECK(cudaGetLastError());
        src = 1 - src;
    }
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(got, dTemp[src], bytes, cudaMemcpyDeviceToHost));

    for (size_t i = 0; i < cells; ++i) ref[i] = temp[i];
    for (int s = 0; s < STEPS; ++s) {
        for (int y = 0; y < side; ++y)
            for (int x = 0; x < side; ++x) {
                float t = ref[y * side + x];
                float w = x > 0 ? ref[y * side + x - 1] : t, e = x < side - 1 ? ref[y * side + x + 1] : t;
                float n = y > 0 ? ref[(y - 1) * side + x] : t, so = y < side - 1 ? ref[(y + 1) * side + x] : t;
                next[y * side + x] = t + k.cp * power[y * side + x] + k.cy * (n + so - 2.0f * t) +
                                     k.cx * (e + w - 2.0f * t) + k.cz * (k.amb - t);
            }
        float *tmp = ref; ref = next; next = tmp;
    }
    int wrong = 0;
    double maxErr = 0.0;
    for (size_t i = 0; i < cells; ++i) {
        double err = fabs((double)got[i] - (double)ref[i]);
        if (err > maxErr) maxErr = err;
        if (!(err <= 1e-3)) {
            if (wrong < 5) fprintf(stderr, "cell %zu = %f, expected %f\n", i, got[i], ref[i]);
            ++wrong;
        }
    }
    printf("[hotspot] %d x %d grid, %d steps, max error %g\n", side, side, STEPS, maxErr);
    if (outPath) {
        FILE *f = fopen(outPath, "wb");
        if (!f) { perror(outPath); return EXIT_FAILURE; }
        int header[2] = {side, STEPS};
        fwrite(header, sizeof(int), 2, f);
        fwrite(&k, sizeof(float), 5, f);
        fwrite(temp, sizeof(float), cells, f);
        fwrite(power, sizeof(float), cells, f);
        fwrite(got, sizeof(float), cells, f);
        fclose(f);
    }
    CHECK(cudaFree(dTemp[0]));
    CHECK(cudaFree(dTemp[1]));
    CHECK(cudaFree(dPower));
    free(temp); free(power); free(ref); free(next); free(got);
    if (wrong) {
        printf("FAIL (%d cells off)\n", wrong);
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
