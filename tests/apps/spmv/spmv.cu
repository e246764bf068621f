// spmv: sparse matrix times vector in three formats: CSR with one thread per row
// (scalar), CSR with one warp per row and a shuffle reduction (vector), and JDS
// (rows sorted by length, jagged diagonals stored column-wise, the diagonal
// offsets in constant memory).
// Modelled on Parboil spmv (JDS) and the CSR kernels of Bell and Garland,
// "Efficient Sparse Matrix-Vector Multiplication on CUDA" (own implementation).
// Build: nvcc -cudart shared -arch=sm_90 -O3 spmv.cu -o spmv
// Run:   ./spmv [rows]   (default 2048 rows and columns)
// Checks: all three y vectors equal the host product exactly (small integers in f32).
// API: cudaMalloc, cudaMemcpy, cudaMemcpyToSymbol, cudaMemset, __shfl_down_sync,
//      __constant__, cudaFree.
// Launches: 3.
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>
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

#define MAX_DIAGONALS 128

__constant__ int c_jdPtr[MAX_DIAGONALS];

__global__ void csrScalar(const int *rowPtr, const int *cols, const float *vals,
                          const float *x, float *y, int rows)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float sum = 0.0f;
        for (int k = rowPtr[r]; k < rowPtr[r + 1]; ++k)
            sum += vals[k] * x[cols[k]];
        y[r] = sum;
    }
}

__global__ void csrVector(const int *rowPtr, const int *cols, const float *vals,
                          const float *x, float *y, int rows)
{
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x & 31;
    if (warp >= rows) return;                     // whole warps leave together
    float sum = 0.0f;
    for (int k = rowPtr[warp] + lane; k < rowPtr[warp + 1]; k += 32)
        sum += vals[k] * x[cols[k]];
    for (int off = 16; off > 0; off >>= 1)
        sum += __shfl_down_sync(0xffffffffu, sum, off);
    if (lane == 0)
        y[warp] = sum;
}

__global__ void jds(const int *perm, const int *rowLen, const int *cols, const float *vals,
                    const float *x, float *y, int rows)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float sum = 0.0f;
        for (int d = 0; d < rowLen[r]; ++d) {
            int k = c_jdPtr[d] + r;
            sum += vals[k] * x[cols[k]];
        }
        y[perm[r]] = sum;
    }
}

int main(int argc, char **argv)
{
    int rows = argc > 1 ? atoi(argv[1]) : 2048;
    if (rows <= 0) rows = 2048;
    // Row r has 1 + (r * 37 % 12) entries, every 97th row 100; distinct columns.
    std::vector<int> rowPtr(rows + 1, 0), cols;
    std::vector<float> vals;
    for (int r = 0; r < rows; ++r) {
        int len = r % 97 == 5 ? 100 : 1 + (r * 37) % 12;
        if (len > rows) len = rows;
        for (int k = 0; k < len; ++k) {
            cols.push_back((r * 31 + k * 17) % rows);
            vals.push_back((float)((r + 3 * k) % 7 - 3));
        }
        rowPtr[r + 1] = (int)cols.size();
    }
    int nnz = (int)cols.size();
    std::vector<float> x(rows), want(rows);
    for (int c = 0; c < rows; ++c) x[c] = (float)(c % 5 - 2);
    for (int r = 0; r < rows; ++r) {
        float s = 0.0f;
        for (int k = rowPtr[r]; k < rowPtr[r + 1]; ++k) s += vals[k] * x[cols[k]];
        want[r] = s;
    }

    // JDS: sort rows by length (longest first), then store diagonal d of every row.
    std::vector<int> perm(rows), rowLen(rows);
    for (int r = 0; r < rows; ++r) perm[r] = r;
    std::stable_sort(perm.begin(), perm.end(), [&](int a, int b) {
        return rowPtr[a + 1] - rowPtr[a] > rowPtr[b + 1] - rowPtr[b];
    });
    for (int r = 0; r < rows; ++r) rowLen[r] = rowPtr[perm[r] + 1] - rowPtr[perm[r]];
    int diagonals = rowLen[0];
    if (diagonals > MAX_DIAGONALS) { printf("FAIL (too many diagonals)\n"); return EXIT_FAILURE; }
    std::vector<int> jdPtr(MAX_DIAGONALS, 0), jdsCols(nnz + rows, 0);
    std::vector<float> jdsVals(nnz + rows, 0.0f);
    int offset = 0;
    for (int d = 0; d < diagonals; ++d) {
        jdPtr[d] = offset;
        int count = 0;
        while (count < rows && rowLen[count] > d) ++count;
        for (int r = 0; r < count; ++r) {
            jdsCols[offset + r] = cols[rowPtr[perm[r]] + d];
            jdsVals[offset + r] = vals[rowPtr[perm[r]] + d];
        }
        offset += count;
    }

    int *dRowPtr, *dCols, *dPerm, *dRowLen, *dJdsCols;
    float *dVals, *dX, *dY, *dJdsVals;
    CHECK(cudaMalloc(&dRowPtr, (rows + 1) * sizeof(int)));
    CHECK(cudaMalloc(&dCols, nnz * sizeof(int)));
    CHECK(cudaMalloc(&dVals, nnz * sizeof(float)));
    CHECK(cudaMalloc(&dPerm, rows * sizeof(int)));
    CHECK(cudaMalloc(&dRowLen, rows * sizeof(int)));
    CHECK(cudaMalloc(&dJdsCols, offset * sizeof(int)));
    CHECK(cudaMalloc(&dJdsVals, offset * sizeof(float)));
    CHECK(cudaMalloc(&dX, rows * sizeof(float)));
    CHECK(cudaMalloc(&dY, rows * sizeof(float)));
    CHECK(cudaMemcpy(dRowPtr, rowPtr.data(), (rows + 1) * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dCols, cols.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dVals, vals.data(), nnz * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dPerm, perm.data(), rows * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dRowLen, rowLen.data(), rows * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dJdsCols, jdsCols.data(), offset * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dJdsVals, jdsVals.data(), offset * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dX, x.data(), rows * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpyToSymbol(c_jdPtr, jdPtr.data(), MAX_DIAGONALS * sizeof(int)));

    std::vector<float> got(rows);
    int wrong = 0;
    const char *names[3] = {"csr-scalar", "csr-vector", "jds"};
    for (int v = 0; v < 3; ++v) {
        CHECK(cudaMemset(dY, 0xff, rows * sizeof(float)));      // NaNs
        if (v == 0) csrScalar<<<(rows + 127) / 128, 128>>>(dRowPtr, dCols, dVals, dX, dY, rows);
        if (v == 1) csrVector<<<(rows * 32 + 127) / 128, 128>>>(dRowPtr, dCols, dVals, dX, dY, rows);
        if (v == 2) jds<<<(rows + 127) / 128, 128>>>(dPerm, dRowLen, dJdsCols, dJdsVals, dX, dY, rows);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(got.data(), dY, rows * sizeof(float), cudaMemcpyDeviceToHost));
        int bad = 0;
        for (int r = 0; r < rows; ++r)
            if (got[r] != want[r]) {
                if (bad < 3) fprintf(stderr, "%s: y[%d] = %f, expected %f\n", names[v], r, got[r], want[r]);
                ++bad;
            }
        printf("[spmv] %-10s %d rows, %d nonzeros, %d diagonals: %d wrong\n", names[v], rows, nnz, diagonals, bad);
        wrong += bad;
    }
    CHECK(cudaFree(dRowPtr)); CHECK(cudaFree(dCols)); CHECK(cudaFree(dVals));
    CHECK(cudaFree(dPerm)); CHECK(cudaFree(dRowLen)); CHECK(cudaFree(dJdsCols));
    CHECK(cudaFree(dJdsVals)); CHECK(cudaFree(dX)); CHECK(cudaFree(dY));
    if (wrong) {
        printf("FAIL (%d wrong values)\n", wrong);
        return EXIT_FAILURE;
    }
    printf("PASS\n");
    return 0;
}
