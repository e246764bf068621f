// Stream-ordered allocation and memory pools under ptxc run, in the style of
// cuda-samples' streamOrderedAllocation (tests/test_runtime_mempool.py).
//
// basic: cudaMallocAsync a, b, c on a non-blocking stream, copy, add, free
// a and b, copy c back, free c, synchronise (N = 1000, a[i] = i / 2,
// b[i] = 1000 - i + L for iteration L). postsync: the same ten times with
// the default pool's release threshold at UINT64_MAX. The pool counters
// are printed after each step ("name used used_high reserved reserved_high")
// and the test derives them by hand; the error rules print "what -> code".
// Argument `uaf`: a kernel reads memory after cudaFreeAsync (ptxc stops it).
#include <climits>
#include <cstdio>
#include <cstring>
#include <cstdint>

#define N 1000
#define CHECK(x) check((x), #x, __LINE__)

static int failures = 0;
static void check(cudaError_t e, const char *what, int line) {
  if (e != cudaSuccess) {
    printf("line %d: %s: %s\n", line, what, cudaGetErrorName(e));
    failures++;
  }
}
static void show(const char *what, cudaError_t e) { printf("%s -> %d\n", what, (int)e); }

__global__ void vector_add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
__global__ void sum_of(const float *a, float *out, int n) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    float s = 0;
    for (int i = 0; i < n; i++) s += a[i];
    *out = s;
  }
}

static void counters(const char *name, cudaMemPool_t pool) {
  uint64_t v[4];
  const cudaMemPoolAttr attrs[4] = {cudaMemPoolAttrUsedMemCurrent, cudaMemPoolAttrUsedMemHigh,
                                    cudaMemPoolAttrReservedMemCurrent,
                                    cudaMemPoolAttrReservedMemHigh};
  for (int i = 0; i < 4; i++) CHECK(cudaMemPoolGetAttribute(pool, attrs[i], &v[i]));
  printf("%s %llu %llu %llu %llu\n", name, (unsigned long long)v[0], (unsigned long long)v[1],
         (unsigned long long)v[2], (unsigned long long)v[3]);
}

// one iteration: c = a + b on the device, in stream order; returns sum(c) on the host
static double add_once(cudaStream_t s, float *a, float *b, float *c, int L) {
  float *d_a, *d_b, *d_c;
  size_t bytes = N * sizeof(float);
  for (int i = 0; i < N; i++) { a[i] = i / 2.0f; b[i] = (float)(1000 - i + L); }
  CHECK(cudaMallocAsync(&d_a, bytes, s));
  CHECK(cudaMallocAsync(&d_b, bytes, s));
  CHECK(cudaMallocAsync(&d_c, bytes, s));
  CHECK(cudaMemcpyAsync(d_a, a, bytes, cudaMemcpyHostToDevice, s));
  CHECK(cudaMemcpyAsync(d_b, b, bytes, cudaMemcpyHostToDevice, s));
  vector_add<<<(N + 255) / 256, 256, 0, s>>>(d_a, d_b, d_c, N);
  CHECK(cudaFreeAsync(d_a, s));
  CHECK(cudaFreeAsync(d_b, s));
  CHECK(cudaMemcpyAsync(c, d_c, bytes, cudaMemcpyDeviceToHost, s));
  CHECK(cudaFreeAsync(d_c, s));
  CHECK(cudaStreamSynchronize(s));
  double sum = 0;
  for (int i = 0; i < N; i++) {
    if (c[i] != a[i] + b[i]) failures++;
    sum += c[i];
  }
  return sum;
}

static void pools(cudaStream_t s) {
  cudaMemPool_t def, cur, mine;
  CHECK(cudaDeviceGetDefaultMemPool(&def, 0));
  CHECK(cudaDeviceGetMemPool(&cur, 0));
  printf("current is default %d\n", cur == def);

  // 3 MiB: used 3 MiB, reserved 4 MiB (2 chunks); kept after the free and
  // the synchronisation (threshold UINT64_MAX, set by postsync)
  void *big;
  CHECK(cudaMallocAsync(&big, 3 << 20, s));
  counters("big", def);
  CHECK(cudaFreeAsync(big, s));
  CHECK(cudaStreamSynchronize(s));
  counters("big freed", def);
  CHECK(cudaMemPoolTrimTo(def, 1 << 20));   // keep at least 1 MiB: one chunk
  counters("trim 1MiB", def);
  CHECK(cudaMemPoolTrimTo(def, 0));
  counters("trim 0", def);
  uint64_t zero = 0, five = 5;
  CHECK(cudaMemPoolSetAttribute(def, cudaMemPoolAttrUsedMemHigh, &zero));
  CHECK(cudaMemPoolSetAttribute(def, cudaMemPoolAttrReservedMemHigh, &zero));
  counters("reset", def);
  show("set used high 5", cudaMemPoolSetAttribute(def, cudaMemPoolAttrUsedMemHigh, &five));
  show("set used current", cudaMemPoolSetAttribute(def, cudaMemPoolAttrUsedMemCurrent, &zero));
  uint64_t threshold = 0;
  CHECK(cudaMemPoolGetAttribute(def, cudaMemPoolAttrReleaseThreshold, &threshold));
  printf("threshold max %d\n", threshold == ULLONG_MAX);
  int reuse = -1;
  int off = 0;
  CHECK(cudaMemPoolSetAttribute(def, cudaMemPoolReuseAllowOpportunistic, &off));
  CHECK(cudaMemPoolGetAttribute(def, cudaMemPoolReuseAllowOpportunistic, &reuse));
  printf("opportunistic %d\n", reuse);
  CHECK(cudaMemPoolGetAttribute(def, cudaMemPoolReuseFollowEventDependencies, &reuse));
  printf("follow events %d\n", reuse);

  // an explicit pool: its own counters; the current pool for cudaMallocAsync
  cudaMemPoolProps props;
  memset(&props, 0, sizeof props);
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  CHECK(cudaMemPoolCreate(&mine, &props));
  float *x, *y;
  CHECK(cudaMallocFromPoolAsync((void **)&x, 100, mine, s));      // 512 used
  CHECK(cudaDeviceSetMemPool(0, mine));
  CHECK(cudaDeviceGetMemPool(&cur, 0));
  printf("current is mine %d\n", cur == mine);
  CHECK(cudaMallocAsync(&y, 513, s));                               // 1024 used
  counters("mine", mine);
  counters("default", def);
  CHECK(cudaMemsetAsync(y, 0, 513, s));
  CHECK(cudaMemPoolDestroy(mine));              // live allocations: it goes with them
  CHECK(cudaDeviceGetMemPool(&cur, 0));
  printf("current is default again %d\n", cur == def);
  show("get attribute of a destroyed pool",
       cudaMemPoolGetAttribute(mine, cudaMemPoolAttrUsedMemCurrent, &zero));
  CHECK(cudaFreeAsync(x, s));
  CHECK(cudaFree(y));                           // cudaFree of stream-ordered memory

  // access: one device, read-write
  cudaMemLocation dev0 = {cudaMemLocationTypeDevice, 0};
  cudaMemAccessFlags flags;
  CHECK(cudaMemPoolGetAccess(&flags, def, &dev0));
  printf("access %d\n", (int)flags);
  cudaMemAccessDesc rw = {dev0, cudaMemAccessFlagsProtReadWrite};
  CHECK(cudaMemPoolSetAccess(def, &rw, 1));

  // error paths
  void *p = NULL;
  show("destroy default pool", cudaMemPoolDestroy(def));
  show("default pool of device 1", cudaDeviceGetDefaultMemPool(&cur, 1));
  show("bad pool", cudaMallocFromPoolAsync(&p, 16, (cudaMemPool_t)&flags, s));
  CHECK(cudaMallocAsync(&p, 16, s));
  CHECK(cudaFreeAsync(p, s));
  show("double free", cudaFreeAsync(p, s));
  show("free inside", cudaFreeAsync((char *)x + 4, s));
  cudaMemAccessDesc ro = {dev0, cudaMemAccessFlagsProtRead};
  show("read-only access", cudaMemPoolSetAccess(def, &ro, 1));
  props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  show("ipc pool", cudaMemPoolCreate(&mine, &props));
  int fd = -1;
  show("export", cudaMemPoolExportToShareableHandle(&fd, def, cudaMemHandleTypePosixFileDescriptor, 0));
  cudaGetLastError();
}

int main(int argc, char **argv) {
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int supported = 0, handles = -1;
  CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, 0));
  CHECK(cudaDeviceGetAttribute(&handles, cudaDevAttrMemoryPoolSupportedHandleTypes, 0));
  printf("pools supported %d handle types %d\n", supported, handles);

  if (argc > 1 && !strcmp(argv[1], "uaf")) {
    float *d, *out;
    CHECK(cudaMalloc(&out, sizeof(float)));
    CHECK(cudaMallocAsync(&d, N * sizeof(float), s));
    CHECK(cudaMemsetAsync(d, 0, N * sizeof(float), s));
    CHECK(cudaFreeAsync(d, s));
    printf("reading freed memory\n");
    fflush(stdout);
    sum_of<<<1, 32, 0, s>>>(d, out, N);
    CHECK(cudaStreamSynchronize(s));
    printf("not reached\n");
    return 1;
  }

  static float a[N], b[N], c[N];
  cudaMemPool_t def;
  CHECK(cudaDeviceGetDefaultMemPool(&def, 0));
  counters("start", def);
  printf("basic sum %.1f\n", add_once(s, a, b, c, 0));
  counters("basic", def);                     // threshold 0: released at the synchronize

  uint64_t max = ULLONG_MAX;
  CHECK(cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold, &max));
  double total = 0;
  for (int L = 1; L <= 10; L++) total += add_once(s, a, b, c, L);
  printf("postsync sum %.1f\n", total);
  counters("postsync", def);                  // kept: one chunk

  pools(s);
  CHECK(cudaStreamDestroy(s));
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
