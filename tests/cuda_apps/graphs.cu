// CUDA graphs under ptxc run (tests/test_runtime_graphs.py): the same
// fork/join pipeline built by stream capture and explicitly, launched
// several times, cloned, updated; the error rules of stream capture. Checks its own results
// and prints one line per graph launch ("launch L sum S") and PASS/FAIL.
//
// One graph launch L (a_h[i] = i + L when it starts, N = 1000):
//   memcpy a_d <- a_h | memset b_d = 0     (two roots: the fork)
//   scale(a_d, 3)     | fill_b(b_d)         a = 3(i + L), b = 2i + 1
//   combine(c_d, a_d, b_d)                  (the join) c = 5i + 3L + 1
//   memcpy c_h <- c_d, host node: sums[L] = sum(c_h), a_h[i] += 1
#include <cstdio>
#include <cstring>

#define N 1000
#define CHECK(x) check((x), #x, __LINE__)

static int failures = 0;
static void check(cudaError_t e, const char *what, int line) {
  if (e != cudaSuccess) {
    printf("line %d: %s: %s\n", line, what, cudaGetErrorName(e));
    failures++;
  }
}
static void expect(cudaError_t got, cudaError_t want, const char *what) {
  if (got != want) {
    printf("%s: got %s, want %s\n", what, cudaGetErrorName(got), cudaGetErrorName(want));
    failures++;
  }
}

__global__ void fill_b(int *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] += 2 * i + 1;   // += : wrong unless the memset ran first
}
__global__ void scale(int *a, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= k;
}
__global__ void combine(int *c, const int *a, const int *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

struct Ctx {
  int *a_h, *c_h;
  long long sums[16];
  int launches;
};

static void CUDART_CB host_sum(void *p) {
  Ctx *ctx = (Ctx *)p;
  long long s = 0;
  for (int i = 0; i < N; i++) s += ctx->c_h[i];
  ctx->sums[ctx->launches++] = s;
  for (int i = 0; i < N; i++) ctx->a_h[i] += 1;
}

static int *a_d, *b_d, *c_d;
static Ctx ctx;
static const dim3 grid(8), block(128);

static cudaGraph_t captured_graph(cudaStream_t s1, cudaStream_t s2) {
  cudaEvent_t fork, joined;
  CHECK(cudaEventCreate(&fork));
  CHECK(cudaEventCreate(&joined));
  cudaStreamCaptureStatus st;
  CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  CHECK(cudaStreamIsCapturing(s1, &st));
  if (st != cudaStreamCaptureStatusActive) failures++, printf("s1 not capturing\n");
  CHECK(cudaEventRecord(fork, s1));
  CHECK(cudaStreamWaitEvent(s2, fork, 0));            // s2 joins the capture
  CHECK(cudaStreamIsCapturing(s2, &st));
  if (st != cudaStreamCaptureStatusActive) failures++, printf("s2 not capturing\n");
  CHECK(cudaMemcpyAsync(a_d, ctx.a_h, N * sizeof(int), cudaMemcpyHostToDevice, s1));
  CHECK(cudaMemsetAsync(b_d, 0, N * sizeof(int), s2));
  scale<<<grid, block, 0, s1>>>(a_d, N, 3);
  fill_b<<<grid, block, 0, s2>>>(b_d, N);
  CHECK(cudaEventRecord(joined, s2));
  CHECK(cudaStreamWaitEvent(s1, joined, 0));          // the join
  combine<<<grid, block, 0, s1>>>(c_d, a_d, b_d, N);
  CHECK(cudaMemcpyAsync(ctx.c_h, c_d, N * sizeof(int), cudaMemcpyDeviceToHost, s1));
  CHECK(cudaLaunchHostFunc(s1, host_sum, &ctx));
  unsigned long long id = 0;
  const cudaGraphNode_t *deps = NULL;
  size_t ndeps = 0;
  CHECK(cudaStreamGetCaptureInfo(s1, &st, &id, NULL, &deps, NULL, &ndeps));
  if (id == 0 || ndeps != 1) failures++, printf("capture info: id %llu, %zu deps\n", id, ndeps);
  cudaGraph_t g = NULL;
  CHECK(cudaStreamEndCapture(s1, &g));
  CHECK(cudaStreamIsCapturing(s2, &st));
  if (st != cudaStreamCaptureStatusNone) failures++, printf("s2 still capturing\n");
  CHECK(cudaEventDestroy(fork));
  CHECK(cudaEventDestroy(joined));
  return g;
}

struct Explicit {
  cudaGraph_t graph;
  cudaGraphNode_t scale, combine;
};

// The same pipeline; nodes are added in an order that is not a topological
// order (scale before the copy it depends on), with an empty node as the join.
static Explicit explicit_graph() {
  Explicit e;
  cudaGraph_t g;
  CHECK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t scale_n, memset_n, fill_n, copy_n, empty_n, combine_n, back_n, host_n;
  int n = N, k = 3;
  void *scale_args[] = {&a_d, &n, &k};
  cudaKernelNodeParams kp = {};
  kp.func = (void *)scale;
  kp.gridDim = grid;
  kp.blockDim = block;
  kp.kernelParams = scale_args;
  CHECK(cudaGraphAddKernelNode(&scale_n, g, NULL, 0, &kp));
  k = 100;                                 // the node copied the arguments: no effect
  cudaMemsetParams mp = {};
  mp.dst = b_d;
  mp.value = 0;
  mp.elementSize = 4;
  mp.width = N;
  mp.height = 1;
  CHECK(cudaGraphAddMemsetNode(&memset_n, g, NULL, 0, &mp));
  void *fill_args[] = {&b_d, &n};
  kp.func = (void *)fill_b;
  kp.kernelParams = fill_args;
  CHECK(cudaGraphAddKernelNode(&fill_n, g, &memset_n, 1, &kp));
  cudaMemcpy3DParms cp = {};
  cp.srcPtr = make_cudaPitchedPtr(ctx.a_h, N * sizeof(int), N, 1);
  cp.dstPtr = make_cudaPitchedPtr(a_d, N * sizeof(int), N, 1);
  cp.extent = make_cudaExtent(N * sizeof(int), 1, 1);
  cp.kind = cudaMemcpyHostToDevice;
  CHECK(cudaGraphAddMemcpyNode(&copy_n, g, NULL, 0, &cp));
  CHECK(cudaGraphAddDependencies(g, &copy_n, &scale_n, NULL, 1));
  cudaGraphNode_t join[] = {scale_n, fill_n};
  CHECK(cudaGraphAddEmptyNode(&empty_n, g, join, 2));
  void *combine_args[] = {&c_d, &a_d, &b_d, &n};
  kp.func = (void *)combine;
  kp.kernelParams = combine_args;
  CHECK(cudaGraphAddKernelNode(&combine_n, g, &empty_n, 1, &kp));
  CHECK(cudaGraphAddMemcpyNode1D(&back_n, g, &combine_n, 1, ctx.c_h, c_d, N * sizeof(int),
                                 cudaMemcpyDeviceToHost));
  cudaHostNodeParams hp = {host_sum, &ctx};
  CHECK(cudaGraphAddHostNode(&host_n, g, &back_n, 1, &hp));
  e.graph = g;
  e.scale = scale_n;
  e.combine = combine_n;
  return e;
}

static void shape(const char *name, cudaGraph_t g) {
  size_t nodes = 0, roots = 0, edges = 0;
  CHECK(cudaGraphGetNodes(g, NULL, &nodes));
  CHECK(cudaGraphGetRootNodes(g, NULL, &roots));
  CHECK(cudaGraphGetEdges(g, NULL, NULL, NULL, &edges));
  printf("%s graph: %zu nodes, %zu roots, %zu edges\n", name, nodes, roots, edges);
}

static void capture_errors() {
  cudaStream_t s, s2;
  cudaGraph_t g = (cudaGraph_t)1;
  cudaStreamCaptureStatus st;
  CHECK(cudaStreamCreate(&s));
  CHECK(cudaStreamCreate(&s2));
  // a synchronous call on a capturing stream invalidates the capture
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  expect(cudaStreamSynchronize(s), cudaErrorStreamCaptureUnsupported, "sync in capture");
  CHECK(cudaStreamIsCapturing(s, &st));
  if (st != cudaStreamCaptureStatusInvalidated) failures++, printf("not invalidated\n");
  expect(cudaMemsetAsync(b_d, 0, 4, s), cudaErrorStreamCaptureInvalidated, "work after");
  expect(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated, "end invalidated");
  if (g != NULL) failures++, printf("invalidated capture gave a graph\n");
  // the legacy stream waits for blocking streams: an implicit dependency
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  int x = 0;
  expect(cudaMemcpy(b_d, &x, 4, cudaMemcpyHostToDevice), cudaErrorStreamCaptureImplicit,
         "legacy copy in capture");
  expect(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated, "end after legacy");
  // a fork that is never joined back
  cudaEvent_t e;
  CHECK(cudaEventCreate(&e));
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CHECK(cudaEventRecord(e, s));
  CHECK(cudaStreamWaitEvent(s2, e, 0));
  CHECK(cudaMemsetAsync(b_d, 0, 4, s2));
  expect(cudaStreamEndCapture(s2, &g), cudaErrorStreamCaptureUnmatched, "end on joined stream");
  expect(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated, "end after unmatched");
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CHECK(cudaEventRecord(e, s));
  CHECK(cudaStreamWaitEvent(s2, e, 0));
  CHECK(cudaMemsetAsync(b_d, 0, 4, s2));
  expect(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureUnjoined, "unjoined fork");
  CHECK(cudaStreamIsCapturing(s2, &st));
  if (st != cudaStreamCaptureStatusNone) failures++, printf("s2 still capturing\n");
  // device synchronisation during a capture
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  expect(cudaDeviceSynchronize(), cudaErrorStreamCaptureUnsupported, "device sync");
  expect(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated, "end after device sync");
  expect(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal),
         cudaErrorStreamCaptureUnsupported, "capture of the legacy stream");
  cudaGetLastError();
  CHECK(cudaEventDestroy(e));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaStreamDestroy(s2));
}

// dependency sets of a capture: queried and replaced; node queries
static void capture_queries(cudaGraphNode_t combine_n) {
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  int x = 7;      // a non-blocking capture leaves the legacy stream usable
  CHECK(cudaMemcpy(b_d, &x, 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemsetAsync(b_d, 0, 4, s));
  cudaStreamCaptureStatus st;
  const cudaGraphNode_t *deps = NULL;
  size_t ndeps = 0;
  cudaGraph_t g = NULL, got = NULL;
  CHECK(cudaStreamGetCaptureInfo(s, &st, NULL, &got, &deps, NULL, &ndeps));
  cudaGraphNode_t first = ndeps == 1 ? deps[0] : NULL;
  CHECK(cudaStreamUpdateCaptureDependencies(s, NULL, NULL, 0, cudaStreamSetCaptureDependencies));
  CHECK(cudaMemsetAsync(b_d, 0, 4, s));       // depends on nothing now
  CHECK(cudaStreamUpdateCaptureDependencies(s, &first, NULL, 1, cudaStreamAddCaptureDependencies));
  CHECK(cudaMemsetAsync(b_d, 0, 4, s));       // depends on the second and the first
  CHECK(cudaStreamEndCapture(s, &g));
  size_t nodes = 0, roots = 0, edges = 0, last_deps = 0;
  CHECK(cudaGraphGetNodes(g, NULL, &nodes));
  CHECK(cudaGraphGetRootNodes(g, NULL, &roots));
  CHECK(cudaGraphGetEdges(g, NULL, NULL, NULL, &edges));
  cudaGraphNode_t all[3];
  size_t three = 3;
  CHECK(cudaGraphGetNodes(g, all, &three));
  CHECK(cudaGraphNodeGetDependencies(all[2], NULL, NULL, &last_deps));
  cudaGraphNodeType type;
  CHECK(cudaGraphNodeGetType(all[0], &type));
  printf("update graph: %zu nodes, %zu roots, %zu edges, last has %zu deps, same graph %d, "
         "first is node 0 %d, memset %d\n", nodes, roots, edges, last_deps, got == g,
         first == all[0], type == cudaGraphNodeTypeMemset);
  size_t combine_deps = 0, combine_users = 0;
  CHECK(cudaGraphNodeGetDependencies(combine_n, NULL, NULL, &combine_deps));
  CHECK(cudaGraphNodeGetDependentNodes(combine_n, NULL, NULL, &combine_users));
  printf("explicit combine node: %zu deps, %zu dependents\n", combine_deps, combine_users);
  CHECK(cudaGraphDestroy(g));
  CHECK(cudaStreamDestroy(s));
}

static long long expected_sum(long long k, long long L) {
  // c[i] = k (i + L) + 2i + 1, summed over i < N
  return (k + 2) * (long long)N * (N - 1) / 2 + (long long)N * (k * L + 1);
}

int main() {
  CHECK(cudaMallocHost(&ctx.a_h, N * sizeof(int)));
  CHECK(cudaMallocHost(&ctx.c_h, N * sizeof(int)));
  for (int i = 0; i < N; i++) ctx.a_h[i] = i;
  CHECK(cudaMalloc(&a_d, N * sizeof(int)));
  CHECK(cudaMalloc(&b_d, N * sizeof(int)));
  CHECK(cudaMalloc(&c_d, N * sizeof(int)));
  cudaStream_t s1, s2, ga, gb;
  CHECK(cudaStreamCreate(&s1));
  CHECK(cudaStreamCreate(&s2));
  CHECK(cudaStreamCreate(&ga));    // stream 3: the captured graph's launches
  CHECK(cudaStreamCreate(&gb));    // stream 4: the explicit graph's launches

  cudaGraph_t cg = captured_graph(s1, s2);
  shape("captured", cg);
  cudaGraphExec_t cx;
  CHECK(cudaGraphInstantiate(&cx, cg, 0));
  for (int L = 0; L < 3; L++) CHECK(cudaGraphLaunch(cx, ga));    // launches 0-2
  CHECK(cudaStreamSynchronize(ga));

  Explicit ex = explicit_graph();
  shape("explicit", ex.graph);
  cudaGraphExec_t xx;
  CHECK(cudaGraphInstantiateWithFlags(&xx, ex.graph, 0));
  for (int L = 3; L < 6; L++) CHECK(cudaGraphLaunch(xx, gb));    // launches 3-5
  // launch 6: the executable graph's scale node gets k = 4
  int n = N, k = 4;
  void *args[] = {&a_d, &n, &k};
  cudaKernelNodeParams kp = {};
  CHECK(cudaGraphKernelNodeGetParams(ex.scale, &kp));
  kp.kernelParams = args;
  CHECK(cudaGraphExecKernelNodeSetParams(xx, ex.scale, &kp));
  CHECK(cudaGraphLaunch(xx, gb));
  // launch 7: a clone of the graph (not of the executable graph): k = 3
  cudaGraph_t clone;
  cudaGraphExec_t clx;
  CHECK(cudaGraphClone(&clone, ex.graph));
  CHECK(cudaGraphInstantiate(&clx, clone, 0));
  CHECK(cudaGraphLaunch(clx, gb));
  // launch 8: the executable graph (k = 4) launched into a capture becomes a
  // child graph node of the captured graph
  cudaGraph_t nested;
  cudaGraphExec_t nx;
  CHECK(cudaStreamBeginCapture(ga, cudaStreamCaptureModeGlobal));
  CHECK(cudaGraphLaunch(xx, ga));
  CHECK(cudaStreamEndCapture(ga, &nested));
  if (ctx.launches != 8) failures++, printf("a captured graph launch ran\n");
  shape("nested", nested);
  CHECK(cudaGraphInstantiate(&nx, nested, 0));
  CHECK(cudaGraphLaunch(nx, ga));
  CHECK(cudaDeviceSynchronize());
  // launch 9: cudaGraphExecUpdate from the explicit graph (k = 3) succeeds;
  // from a graph of another shape it fails and changes nothing
  cudaGraphExecUpdateResultInfo info;
  CHECK(cudaGraphExecUpdate(xx, ex.graph, &info));
  if (info.result != cudaGraphExecUpdateSuccess) failures++, printf("update: %d\n", info.result);
  cudaGraph_t other;
  cudaGraphNode_t empty;
  CHECK(cudaGraphCreate(&other, 0));
  CHECK(cudaGraphAddEmptyNode(&empty, other, NULL, 0));
  expect(cudaGraphExecUpdate(xx, other, &info), cudaErrorGraphExecUpdateFailure, "update");
  if (info.result != cudaGraphExecUpdateErrorTopologyChanged) failures++, printf("bad result\n");
  cudaGetLastError();
  CHECK(cudaGraphLaunch(xx, gb));
  CHECK(cudaStreamSynchronize(gb));
  CHECK(cudaGraphDestroy(other));

  const long long ks[] = {3, 3, 3, 3, 3, 3, 4, 3, 4, 3};
  if (ctx.launches != 10) failures++, printf("%d graph launches ran\n", ctx.launches);
  for (int L = 0; L < ctx.launches && L < 10; L++) {
    printf("launch %d sum %lld\n", L, ctx.sums[L]);
    if (ctx.sums[L] != expected_sum(ks[L], L)) failures++, printf("launch %d: wrong sum\n", L);
  }

  capture_errors();
  capture_queries(ex.combine);

  // a graph with a cycle cannot be instantiated
  cudaGraph_t cyc;
  cudaGraphNode_t na, nb;
  cudaGraphExec_t cycx;
  CHECK(cudaGraphCreate(&cyc, 0));
  CHECK(cudaGraphAddEmptyNode(&na, cyc, NULL, 0));
  CHECK(cudaGraphAddEmptyNode(&nb, cyc, &na, 1));
  CHECK(cudaGraphAddDependencies(cyc, &nb, &na, NULL, 1));
  expect(cudaGraphInstantiate(&cycx, cyc, 0), cudaErrorInvalidValue, "cycle");
  cudaGetLastError();
  CHECK(cudaGraphDestroy(cyc));

  CHECK(cudaGraphExecDestroy(cx));
  CHECK(cudaGraphExecDestroy(xx));
  CHECK(cudaGraphExecDestroy(clx));
  CHECK(cudaGraphExecDestroy(nx));
  CHECK(cudaGraphDestroy(cg));
  CHECK(cudaGraphDestroy(ex.graph));
  CHECK(cudaGraphDestroy(clone));
  CHECK(cudaGraphDestroy(nested));
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures != 0;
}
