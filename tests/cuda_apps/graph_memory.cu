// Graph memory nodes under ptxc run, in the style of cuda-samples'
// graphMemoryNodes (tests/test_runtime_mempool.py).
//
// negateSquares (N = 1000, input[i] = (i % 100) / 10 + R for run R): alloc
// input, alloc square, copy input in, square = input^2, copy square out,
// free input, alloc negSquare, negSquare = -square, free square, copy
// negSquare out, free negSquare; built by stream capture over two streams
// and explicitly. Each run prints "name sums S Q" (S = sum of square,
// Q = sum of negSquare, as the host received them). Then the rules: a
// fixed address across launches, freeing outside the graph (cudaFree,
// cudaFreeAsync, a free node of another graph), a relaunch with an unfreed
// allocation (cudaErrorInvalidValue), AutoFreeOnLaunch, the errors of
// cudaGraphAddMemFreeNode, and the graph memory counters ("graphmem name
// used used_high reserved reserved_high"). Argument `uaf`: a kernel reads
// an allocation after the graph freed it (ptxc stops it).
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

__global__ void square_array(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * in[i];
}
__global__ void negate_array(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = -in[i];
}
__global__ void add_one(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1.0f;
}

static float input[N], square[N], neg[N];
static const size_t bytes = N * sizeof(float);
static const int blocks = (N + 255) / 256;

static void prepare(int R) {
  for (int i = 0; i < N; i++) {
    input[i] = (i % 100) / 10.0f + R;
    square[i] = neg[i] = 12345.0f;   // overwritten by a correct run
  }
}
static void sums(const char *name) {
  double s = 0, q = 0;
  for (int i = 0; i < N; i++) { s += square[i]; q += neg[i]; }
  printf("%s sums %.2f %.2f\n", name, s, q);
}
static void counters(const char *name) {
  uint64_t v[4];
  for (int a = 0; a < 4; a++) CHECK(cudaDeviceGetGraphMemAttribute(0, (cudaGraphMemAttributeType)a, &v[a]));
  printf("graphmem %s %llu %llu %llu %llu\n", name, (unsigned long long)v[0],
         (unsigned long long)v[1], (unsigned long long)v[2], (unsigned long long)v[3]);
}

// the sample's doNegateSquaresInStream: two streams joined by events
static void negate_squares_in_stream(cudaStream_t s1, float **keep) {
  float *d_in, *d_sq, *d_neg;
  cudaStream_t s2;
  cudaEvent_t squared, negated, freed;
  CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  CHECK(cudaEventCreate(&squared));
  CHECK(cudaEventCreate(&negated));
  CHECK(cudaEventCreate(&freed));
  CHECK(cudaMallocAsync(&d_in, bytes, s1));
  CHECK(cudaMallocAsync(&d_sq, bytes, s1));
  CHECK(cudaMemcpyAsync(d_in, input, bytes, cudaMemcpyHostToDevice, s1));
  square_array<<<blocks, 256, 0, s1>>>(d_in, d_sq, N);
  CHECK(cudaEventRecord(squared, s1));
  CHECK(cudaStreamWaitEvent(s2, squared, 0));
  CHECK(cudaMemcpyAsync(square, d_sq, bytes, cudaMemcpyDeviceToHost, s2));
  CHECK(cudaFreeAsync(d_in, s1));
  CHECK(cudaMallocAsync(&d_neg, bytes, s1));
  negate_array<<<blocks, 256, 0, s1>>>(d_sq, d_neg, N);
  CHECK(cudaEventRecord(negated, s1));
  CHECK(cudaMemcpyAsync(neg, d_neg, bytes, cudaMemcpyDeviceToHost, s1));
  if (keep) *keep = d_neg;
  else CHECK(cudaFreeAsync(d_neg, s1));
  CHECK(cudaStreamWaitEvent(s2, negated, 0));
  CHECK(cudaFreeAsync(d_sq, s2));
  CHECK(cudaEventRecord(freed, s2));
  CHECK(cudaStreamWaitEvent(s1, freed, 0));
  CHECK(cudaStreamDestroy(s2));
  CHECK(cudaEventDestroy(squared));
  CHECK(cudaEventDestroy(negated));
  CHECK(cudaEventDestroy(freed));
}

static void node_counts(const char *name, cudaGraph_t g) {
  size_t n = 0;
  CHECK(cudaGraphGetNodes(g, NULL, &n));
  cudaGraphNode_t nodes[64];
  CHECK(cudaGraphGetNodes(g, nodes, &n));
  int alloc = 0, frees = 0;
  for (size_t i = 0; i < n; i++) {
    cudaGraphNodeType t;
    CHECK(cudaGraphNodeGetType(nodes[i], &t));
    if (t == cudaGraphNodeTypeMemAlloc) {
      cudaMemAllocNodeParams p;
      CHECK(cudaGraphMemAllocNodeGetParams(nodes[i], &p));
      if (p.bytesize != bytes || p.poolProps.location.type != cudaMemLocationTypeDevice) failures++;
      alloc++;
    }
    if (t == cudaGraphNodeTypeMemFree) frees++;
  }
  printf("%s: %zu nodes, %d alloc, %d free\n", name, n, alloc, frees);
}

// the sample's createNegateSquaresGraphExplicitly; keep: d_negSquare is not freed
static cudaGraph_t explicit_graph(float **keep) {
  cudaMemAllocNodeParams ap;
  memset(&ap, 0, sizeof ap);
  ap.bytesize = bytes;
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location.type = cudaMemLocationTypeDevice;
  ap.poolProps.location.id = 0;
  cudaGraph_t g;
  cudaGraphNode_t a_in, a_sq, a_neg, c_in, c_sq, c_neg, k_sq, k_neg, f_in, f_sq, f_neg;
  float *d_in, *d_sq, *d_neg;
  int n = N;
  CHECK(cudaGraphCreate(&g, 0));
  CHECK(cudaGraphAddMemAllocNode(&a_in, g, NULL, 0, &ap));
  d_in = (float *)ap.dptr;
  CHECK(cudaGraphAddMemAllocNode(&a_sq, g, &a_in, 1, &ap));
  d_sq = (float *)ap.dptr;
  CHECK(cudaGraphAddMemcpyNode1D(&c_in, g, &a_sq, 1, d_in, input, bytes, cudaMemcpyHostToDevice));
  cudaKernelNodeParams kp = {0};
  kp.gridDim = dim3(blocks);
  kp.blockDim = dim3(256);
  void *sq_args[3] = {&d_in, &d_sq, &n};
  kp.func = (void *)square_array;
  kp.kernelParams = sq_args;
  CHECK(cudaGraphAddKernelNode(&k_sq, g, &c_in, 1, &kp));
  CHECK(cudaGraphAddMemcpyNode1D(&c_sq, g, &k_sq, 1, square, d_sq, bytes, cudaMemcpyDeviceToHost));
  CHECK(cudaGraphAddMemFreeNode(&f_in, g, &k_sq, 1, d_in));
  CHECK(cudaGraphAddMemAllocNode(&a_neg, g, &f_in, 1, &ap));
  d_neg = (float *)ap.dptr;
  void *neg_args[3] = {&d_sq, &d_neg, &n};
  kp.func = (void *)negate_array;
  kp.kernelParams = neg_args;
  CHECK(cudaGraphAddKernelNode(&k_neg, g, &a_neg, 1, &kp));
  cudaGraphNode_t both[2] = {c_sq, k_neg};
  CHECK(cudaGraphAddMemFreeNode(&f_sq, g, both, 2, d_sq));
  CHECK(cudaGraphAddMemcpyNode1D(&c_neg, g, &k_neg, 1, neg, d_neg, bytes, cudaMemcpyDeviceToHost));
  if (keep) {
    *keep = d_neg;
  } else {
    CHECK(cudaGraphAddMemFreeNode(&f_neg, g, &c_neg, 1, d_neg));
    void *back = NULL;
    CHECK(cudaGraphMemFreeNodeGetParams(f_neg, &back));
    if (back != d_neg) failures++;
  }
  // the free node rules
  void *plain;
  CHECK(cudaMalloc(&plain, 64));
  cudaGraphNode_t bad;
  show("free node of cudaMalloc memory", cudaGraphAddMemFreeNode(&bad, g, NULL, 0, plain));
  show("second free node", cudaGraphAddMemFreeNode(&bad, g, NULL, 0, d_in));
  show("free node inside an allocation", cudaGraphAddMemFreeNode(&bad, g, NULL, 0, d_sq + 1));
  CHECK(cudaFree(plain));
  cudaGetLastError();
  return g;
}

static void free_graph(cudaGraphExec_t *e, void *p) {
  cudaGraph_t g;
  cudaGraphNode_t f;
  CHECK(cudaGraphCreate(&g, 0));
  CHECK(cudaGraphAddMemFreeNode(&f, g, NULL, 0, p));
  CHECK(cudaGraphInstantiate(e, g, 0));
  CHECK(cudaGraphDestroy(g));
}

static int uaf(cudaStream_t s) {
  cudaMemAllocNodeParams ap;
  memset(&ap, 0, sizeof ap);
  ap.bytesize = bytes;
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location.type = cudaMemLocationTypeDevice;
  cudaGraph_t g;
  cudaGraphNode_t a, k, f;
  CHECK(cudaGraphCreate(&g, 0));
  CHECK(cudaGraphAddMemAllocNode(&a, g, NULL, 0, &ap));
  float *d = (float *)ap.dptr;
  int n = N;
  void *args[2] = {&d, &n};
  cudaKernelNodeParams kp = {(void *)add_one, dim3(blocks), dim3(256), 0, args, NULL};
  CHECK(cudaGraphAddKernelNode(&k, g, &a, 1, &kp));
  CHECK(cudaGraphAddMemFreeNode(&f, g, &k, 1, d));
  cudaGraphExec_t e;
  CHECK(cudaGraphInstantiate(&e, g, 0));
  CHECK(cudaGraphLaunch(e, s));
  printf("touching freed graph memory\n");
  fflush(stdout);
  add_one<<<blocks, 256, 0, s>>>(d, N);
  CHECK(cudaStreamSynchronize(s));
  printf("not reached\n");
  return 1;
}

int main(int argc, char **argv) {
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  if (argc > 1 && !strcmp(argv[1], "uaf")) return uaf(s);
  counters("start");

  prepare(0);
  negate_squares_in_stream(s, NULL);
  CHECK(cudaStreamSynchronize(s));
  sums("stream");

  cudaGraph_t g;
  cudaGraphExec_t e;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  negate_squares_in_stream(s, NULL);
  CHECK(cudaStreamEndCapture(s, &g));
  node_counts("captured", g);
  CHECK(cudaGraphInstantiate(&e, g, 0));
  prepare(1);
  CHECK(cudaGraphLaunch(e, s));
  CHECK(cudaStreamSynchronize(s));
  sums("captured");
  prepare(2);
  CHECK(cudaGraphLaunch(e, s));                // all freed inside: relaunch is fine
  sums("captured again");
  CHECK(cudaGraphExecDestroy(e));
  CHECK(cudaGraphDestroy(g));

  g = explicit_graph(NULL);
  node_counts("explicit", g);
  cudaGraph_t clone;
  show("clone", cudaGraphClone(&clone, g));
  cudaGetLastError();
  CHECK(cudaGraphInstantiate(&e, g, 0));
  CHECK(cudaGraphDestroy(g));
  prepare(3);
  CHECK(cudaGraphLaunch(e, s));
  sums("explicit");
  CHECK(cudaGraphExecDestroy(e));

  // d_negSquare outlives the graph
  CHECK(cudaDeviceGraphMemTrim(0));
  uint64_t zero = 0;
  CHECK(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &zero));
  CHECK(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrReservedMemHigh, &zero));
  counters("reset");
  float *kept = NULL, *kept2 = NULL;
  g = explicit_graph(&kept);
  CHECK(cudaGraphInstantiate(&e, g, 0));
  prepare(4);
  CHECK(cudaGraphLaunch(e, s));
  counters("kept");
  add_one<<<blocks, 256, 0, s>>>(kept, N);     // stream work after the graph may use it
  CHECK(cudaMemcpy(neg, kept, bytes, cudaMemcpyDeviceToHost));
  sums("kept plus one");
  show("relaunch with an unfreed allocation", cudaGraphLaunch(e, s));
  cudaGraphExec_t e2;
  show("second instantiation", cudaGraphInstantiate(&e2, g, 0));
  cudaGetLastError();
  CHECK(cudaFree(kept));                        // freed outside: by cudaFree
  counters("freed");
  CHECK(cudaDeviceGraphMemTrim(0));
  counters("trimmed");
  prepare(5);
  CHECK(cudaGraphLaunch(e, s));
  cudaMemAllocNodeParams ap;
  cudaGraphNode_t nodes[32];
  size_t n = 32;
  CHECK(cudaGraphGetNodes(g, nodes, &n));
  for (size_t i = 0; i < n; i++) {
    cudaGraphNodeType t;
    CHECK(cudaGraphNodeGetType(nodes[i], &t));
    if (t == cudaGraphNodeTypeMemAlloc) {
      CHECK(cudaGraphMemAllocNodeGetParams(nodes[i], &ap));
      kept2 = (float *)ap.dptr;                 // the last one: d_negSquare
    }
  }
  printf("same address %d\n", kept2 == kept);
  sums("relaunched");
  CHECK(cudaFreeAsync(kept, s));                // freed outside: by cudaFreeAsync
  prepare(6);
  CHECK(cudaGraphLaunch(e, s));
  cudaGraphExec_t fe;
  free_graph(&fe, kept);                        // freed outside: by another graph
  show("free node in the owning graph after another graph's",
       cudaGraphAddMemFreeNode(&nodes[0], g, NULL, 0, kept));
  cudaGetLastError();
  CHECK(cudaGraphLaunch(fe, s));
  CHECK(cudaStreamSynchronize(s));
  sums("freed by a graph");
  counters("all freed");
  CHECK(cudaGraphExecDestroy(e));

  // AutoFreeOnLaunch: each launch frees the last launch's allocation first
  CHECK(cudaGraphInstantiateWithFlags(&e, g, cudaGraphInstantiateFlagAutoFreeOnLaunch));
  for (int R = 7; R <= 8; R++) {
    prepare(R);
    CHECK(cudaGraphLaunch(e, s));
    sums("auto free");
  }
  CHECK(cudaFree(kept));
  CHECK(cudaGraphExecDestroy(e));
  CHECK(cudaGraphDestroy(g));
  counters("end");
  CHECK(cudaStreamDestroy(s));
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
