// Conditional graph nodes under ptxc run (tests/test_runtime_graph_cond.py),
// in the style of cuda-samples graphConditionalNodes: IF, IF/ELSE, WHILE
// (explicit, and captured with cudaStreamBeginCaptureToGraph), SWITCH,
// a WHILE whose body holds an IF node (nested), cudaGraphExecUpdate, and
// the error rules. Kernels set the conditions with cudaGraphSetConditional.
// Prints one line per result and PASS/FAIL; the test derives every number
// it checks (and the launch count of each kernel) by hand.
#include <cstdio>

#ifdef AS_CUDA12
// Built as a CUDA 12 application would call it (tests/test_runtime_graph_cond.py
// links this against ptxc's libcudart.so.12): CUDA 12's cudaGraphAddNode has
// no edge data, cudaGraphAddNode_v2 has.
extern "C" cudaError_t add_node12(cudaGraphNode_t *, cudaGraph_t, const cudaGraphNode_t *, size_t,
                                  cudaGraphNodeParams *) __asm__("cudaGraphAddNode");
extern "C" cudaError_t add_node12_v2(cudaGraphNode_t *, cudaGraph_t, const cudaGraphNode_t *,
                                     const cudaGraphEdgeData *, size_t,
                                     cudaGraphNodeParams *) __asm__("cudaGraphAddNode_v2");
#define cudaGraphAddNode(o, g, d, e, n, p) \
  ((e) ? add_node12_v2(o, g, d, e, n, p) : add_node12(o, g, d, n, p))
#endif

#define N 256
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
  cudaGetLastError();
}

// ---------------------------------------------------------------- kernels
__global__ void set_odd(const int *x, cudaGraphConditionalHandle h) {
  cudaGraphSetConditional(h, *x & 1);
}
__global__ void set_value(const int *x, cudaGraphConditionalHandle h) {
  cudaGraphSetConditional(h, (unsigned)*x);
}
__global__ void bump(int *counter, int by) { *counter += by; }
// y[i] += (i % 7) + 1: the WHILE body's vector work
__global__ void accumulate(int *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += i % 7 + 1;
}
// a countdown: the loop ends when *c reaches 0
__global__ void countdown(int *c, cudaGraphConditionalHandle h) {
  if (--*c == 0) cudaGraphSetConditional(h, 0);
}
// cuda-samples' capturedWhileKernel: decrement if non-zero, condition = *c
__global__ void dec_and_test(int *c, cudaGraphConditionalHandle h) {
  if (*c) (*c)--;
  cudaGraphSetConditional(h, *c);
}
__global__ void after_loop(int *c, int *seen) { *seen = *c + 100; }
// nested: outer WHILE on o, inner IF when o is even
__global__ void outer_step(int *o, cudaGraphConditionalHandle loop, cudaGraphConditionalHandle even) {
  --*o;
  cudaGraphSetConditional(loop, *o != 0);
  cudaGraphSetConditional(even, *o % 2 == 0);
}

static cudaGraphNodeParams kernel_params(void *func, void **args, int grid = 1, int block = 1) {
  cudaGraphNodeParams p = {cudaGraphNodeTypeKernel};
  p.kernel.func = func;
  p.kernel.gridDim = dim3(grid);
  p.kernel.blockDim = dim3(block);
  p.kernel.kernelParams = args;
  return p;
}

static cudaGraphNodeParams cond_params(cudaGraphConditionalHandle h, cudaGraphConditionalNodeType t,
                                       unsigned size) {
  cudaGraphNodeParams p = {cudaGraphNodeTypeConditional};
  p.conditional.handle = h;
  p.conditional.type = t;
  p.conditional.size = size;
  return p;
}

static int *x_d, *c_d, *y_d, *cnt_d;   // input, counter, vector, counters[8]

static void set_int(int *d, int v) { CHECK(cudaMemcpy(d, &v, sizeof v, cudaMemcpyHostToDevice)); }
static int get_int(const int *d) {
  int v = 0;
  CHECK(cudaMemcpy(&v, d, sizeof v, cudaMemcpyDeviceToHost));
  return v;
}

// --------------------------------------------------------------------- IF
// A -> IF [ bump(cnt[0], 1) ]; launched with x = 0..3: the body runs for 1 and 3
static void if_graph(void) {
  cudaGraph_t g;
  CHECK(cudaGraphCreate(&g, 0));
  cudaGraphConditionalHandle h;
  CHECK(cudaGraphConditionalHandleCreate(&h, g));
  void *a_args[] = {&x_d, &h};
  cudaGraphNodeParams a = kernel_params((void *)set_odd, a_args);
  cudaGraphNode_t na, nc, nb;
  CHECK(cudaGraphAddNode(&na, g, NULL, NULL, 0, &a));
  cudaGraphNodeParams c = cond_params(h, cudaGraphCondTypeIf, 1);
  cudaGraphEdgeData edge = {};          // a default edge, given explicitly
  CHECK(cudaGraphAddNode(&nc, g, &na, &edge, 1, &c));
  int *cnt = cnt_d, one = 1;
  void *b_args[] = {&cnt, &one};
  cudaGraphNodeParams b = kernel_params((void *)bump, b_args);
  CHECK(cudaGraphAddNode(&nb, c.conditional.phGraph_out[0], NULL, NULL, 0, &b));
  int type = -1;
  CHECK(cudaGraphNodeGetType(nc, (cudaGraphNodeType *)&type));
  printf("if node type %d\n", type);
  cudaGraphExec_t e;
  CHECK(cudaGraphInstantiate(&e, g, 0));
  for (int x = 0; x < 4; x++) {
    set_int(x_d, x);
    CHECK(cudaGraphLaunch(e, 0));
    printf("if x=%d count=%d\n", x, get_int(cnt_d));
  }
  CHECK(cudaGraphExecDestroy(e));
  CHECK(cudaGraphDestroy(g));
}

// A -> IF [ bump(cnt[1], 1) | bump(cnt[2], 1) ]; x = 0..4: 2 true, 3 false
static void if_else_graph(void) {
  cudaGraph_t g;
  CHECK(cudaGraphCreate(&g, 0));
  cudaGraphConditionalHandle h;
  CHECK(cudaGraphConditionalHandleCreate(&h, g));
  void *a_args[] = {&x_d, &h};
  cudaGraphNodeParams a = kernel_params((void *)set_odd, a_args);
  cudaGraphNode_t na, nc, nt, nf;
  CHECK(cudaGraphAddNode(&na, g, NULL, NULL, 0, &a));
  cudaGraphNodeParams c = cond_params(h, cudaGraphCondTypeIf, 2);
  CHECK(cudaGraphAddNode(&nc, g, &na, NULL, 1, &c));
  int *t = cnt_d + 1, *f = cnt_d + 2, one = 1;
  void *t_args[] = {&t, &one}, *f_args[] = {&f, &one};
  cudaGraphNodeParams bt = kernel_params((void *)bump, t_args);
  cudaGraphNodeParams bf = kernel_params((void *)bump, f_args);
  CHECK(cudaGraphAddNode(&nt, c.conditional.phGraph_out[0], NULL, NULL, 0, &bt));
  CHECK(cudaGraphAddNode(&nf, c.conditional.phGraph_out[1], NULL, NULL, 0, &bf));
  cudaGraphExec_t e;
  CHECK(cudaGraphInstantiate(&e, g, 0));
  for (int x = 0; x < 5; x++) {
    set_int(x_d, x);
    CHECK(cudaGraphLaunch(e, 0));
  }
  printf("if/else true=%d false=%d\n", get_int(cnt_d + 1), get_int(cnt_d + 2));
  CHECK(cudaGraphExecDestroy(e));
  CHECK(cudaGraphDestroy(g));
}

// ------------------------------------------------------------------ WHILE
// WHILE (default 1, cudaGraphCondAssignDefault) [ accumulate(y) -> countdown(c) ]:
// launched with c = 5, then c = 3: the body runs 5 + 3 times (the default
// re-arms the loop at the second launch)
static void while_graph(void) {
  cudaGraph_t g;
  CHECK(cudaGraphCreate(&g, 0));
  cudaGraphConditionalHandle h;
  CHECK(cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault));
  cudaGraphNodeParams c = cond_params(h, cudaGraphCondTypeWhile, 1);
  cudaGraphNode_t nc, n1, n2;
  CHECK(cudaGraphAddNode(&nc, g, NULL, NULL, 0, &c));
  cudaGraph_t body = c.conditional.phGraph_out[0];
  int n = N;
  void *acc_args[] = {&y_d, &n}, *cd_args[] = {&c_d, &h};
  cudaGraphNodeParams acc = kernel_params((void *)accumulate, acc_args, N / 64, 64);
  cudaGraphNodeParams cd = kernel_params((void *)countdown, cd_args);
  CHECK(cudaGraphAddNode(&n1, body, NULL, NULL, 0, &acc));
  CHECK(cudaGraphAddNode(&n2, body, &n1, NULL, 1, &cd));
  cudaGraphExec_t e;
  CHECK(cudaGraphInstantiate(&e, g, 0));
  CHECK(cudaMemset(y_d, 0, N * sizeof(int)));
  int starts[] = {5, 3};
  for (int k = 0; k < 2; k++) {
    set_int(c_d, starts[k]);
    CHECK(cudaGraphLaunch(e, 0));
    printf("while start=%d counter=%d\n", starts[k], get_int(c_d));
  }
  int y[N];
  CHECK(cudaMemcpy(y, y_d, sizeof y, cudaMemcpyDeviceToHost));
  long sum = 0;
  for (int i = 0; i < N; i++) sum += y[i];
  printf("while y[0]=%d y[6]=%d y[255]=%d sum=%ld\n", y[0], y[6], y[255], sum);
  CHECK(cudaGraphExecDestroy(e));
  CHECK(cudaGraphDestroy(g));
}

// cuda-samples' capturedWhileGraph: A -> WHILE [ C ] -> D, all captured;
// A and C are dec_and_test, the body filled by cudaStreamBeginCaptureToGraph.
// From c = 0: A leaves 0, the body never runs; from c = 10: A leaves 9, the
// body runs 9 times
static void captured_while_graph(void) {
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  cudaGraph_t g;
  cudaStreamCaptureStatus status;
  const cudaGraphNode_t *deps;
  size_t ndeps;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CHECK(cudaStreamGetCaptureInfo(s, &status, NULL, &g, &deps, NULL, &ndeps));
  cudaGraphConditionalHandle h;
  CHECK(cudaGraphConditionalHandleCreate(&h, g));
  dec_and_test<<<1, 1, 0, s>>>(c_d, h);
  CHECK(cudaStreamGetCaptureInfo(s, &status, NULL, &g, &deps, NULL, &ndeps));
  cudaGraphNodeParams c = cond_params(h, cudaGraphCondTypeWhile, 1);
  cudaGraphNode_t nc;
  CHECK(cudaGraphAddNode(&nc, g, deps, NULL, ndeps, &c));
  CHECK(cudaStreamUpdateCaptureDependencies(s, &nc, NULL, 1, cudaStreamSetCaptureDependencies));
  int *seen = cnt_d + 3;
  after_loop<<<1, 1, 0, s>>>(c_d, seen);
  CHECK(cudaStreamEndCapture(s, &g));

  cudaStream_t bs;
  CHECK(cudaStreamCreate(&bs));
  CHECK(cudaStreamBeginCaptureToGraph(bs, c.conditional.phGraph_out[0], NULL, NULL, 0,
                                      cudaStreamCaptureModeGlobal));
  dec_and_test<<<1, 1, 0, bs>>>(c_d, h);
  CHECK(cudaStreamEndCapture(bs, NULL));
  size_t nodes = 0, body_nodes = 0;
  CHECK(cudaGraphGetNodes(g, NULL, &nodes));
  CHECK(cudaGraphGetNodes(c.conditional.phGraph_out[0], NULL, &body_nodes));
  printf("captured while: %zu nodes, body %zu nodes\n", nodes, body_nodes);

  cudaGraphExec_t e;
  CHECK(cudaGraphInstantiate(&e, g, 0));
  int starts[] = {0, 10};
  for (int k = 0; k < 2; k++) {
    set_int(c_d, starts[k]);
    CHECK(cudaGraphLaunch(e, s));
    CHECK(cudaStreamSynchronize(s));
    printf("captured while start=%d counter=%d after=%d\n", starts[k], get_int(c_d), get_int(seen));
  }
  CHECK(cudaGraphExecDestroy(e));
  CHECK(cudaGraphDestroy(g));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaStreamDestroy(bs));
}

// ----------------------------------------------------------------- SWITCH
// A -> SWITCH(4) [ bump(cnt[4], 1) | bump(cnt[4], 10) | bump(cnt[4], 100) |
// bump(cnt[4], 1000) ]; x = 0..4: each body once, x = 4 runs none
static void switch_graph(void) {
  cudaGraph_t g;
  CHECK(cudaGraphCreate(&g, 0));
  cudaGraphConditionalHandle h;
  CHECK(cudaGraphConditionalHandleCreate(&h, g));
  void *a_args[] = {&x_d, &h};
  cudaGraphNodeParams a = kernel_params((void *)set_value, a_args);
  cudaGraphNode_t na, nc, nb;
  CHECK(cudaGraphAddNode(&na, g, NULL, NULL, 0, &a));
  cudaGraphNodeParams c = cond_params(h, cudaGraphCondTypeSwitch, 4);
  CHECK(cudaGraphAddNode(&nc, g, &na, NULL, 1, &c));
  int *sw = cnt_d + 4;
  int by[4] = {1, 10, 100, 1000};
  for (int k = 0; k < 4; k++) {
    void *args[] = {&sw, &by[k]};
    cudaGraphNodeParams b = kernel_params((void *)bump, args);
    CHECK(cudaGraphAddNode(&nb, c.conditional.phGraph_out[k], NULL, NULL, 0, &b));
  }
  cudaGraphExec_t e;
  CHECK(cudaGraphInstantiate(&e, g, 0));
  for (int x = 0; x < 5; x++) {
    set_int(x_d, x);
    CHECK(cudaGraphLaunch(e, 0));
    printf("switch x=%d total=%d\n", x, get_int(sw));
  }
  CHECK(cudaGraphExecDestroy(e));
  CHECK(cudaGraphDestroy(g));
}

// ----------------------------------------------------------------- nested
// WHILE (default 1, assign default) [ outer_step(o) -> IF(even) [ bump(cnt[5], 1) ] ];
// o = 4: o becomes 3, 2, 1, 0; the IF body runs for 2 and 0
static void nested_graph(void) {
  cudaGraph_t g;
  CHECK(cudaGraphCreate(&g, 0));
  cudaGraphConditionalHandle loop, even;
  CHECK(cudaGraphConditionalHandleCreate(&loop, g, 1, cudaGraphCondAssignDefault));
  CHECK(cudaGraphConditionalHandleCreate(&even, g));
  cudaGraphNodeParams w = cond_params(loop, cudaGraphCondTypeWhile, 1);
  cudaGraphNode_t nw, ns, ni, nb;
  CHECK(cudaGraphAddNode(&nw, g, NULL, NULL, 0, &w));
  cudaGraph_t body = w.conditional.phGraph_out[0];
  void *s_args[] = {&c_d, &loop, &even};
  cudaGraphNodeParams st = kernel_params((void *)outer_step, s_args);
  CHECK(cudaGraphAddNode(&ns, body, NULL, NULL, 0, &st));
  cudaGraphNodeParams i = cond_params(even, cudaGraphCondTypeIf, 1);
  CHECK(cudaGraphAddNode(&ni, body, &ns, NULL, 1, &i));
  int *cnt = cnt_d + 5, one = 1;
  void *b_args[] = {&cnt, &one};
  cudaGraphNodeParams b = kernel_params((void *)bump, b_args);
  CHECK(cudaGraphAddNode(&nb, i.conditional.phGraph_out[0], NULL, NULL, 0, &b));
  cudaGraphExec_t e;
  CHECK(cudaGraphInstantiate(&e, g, 0));
  set_int(c_d, 4);
  CHECK(cudaGraphLaunch(e, 0));
  printf("nested outer=%d inner=%d\n", get_int(c_d), get_int(cnt));
  CHECK(cudaGraphExecDestroy(e));
  CHECK(cudaGraphDestroy(g));
}

// ------------------------------------------------------- cudaGraphExecUpdate
// an IF graph whose body bumps cnt[6] by `by`, with a handle of its own
static cudaGraph_t if_bump_graph(int *by, unsigned size, void **args_store) {
  cudaGraph_t g;
  CHECK(cudaGraphCreate(&g, 0));
  cudaGraphConditionalHandle *h = (cudaGraphConditionalHandle *)args_store[2];
  CHECK(cudaGraphConditionalHandleCreate(h, g));
  args_store[0] = &x_d;
  args_store[1] = h;
  cudaGraphNodeParams a = kernel_params((void *)set_odd, args_store);
  cudaGraphNode_t na, nc, nb;
  CHECK(cudaGraphAddNode(&na, g, NULL, NULL, 0, &a));
  cudaGraphNodeParams c = cond_params(*h, cudaGraphCondTypeIf, size);
  CHECK(cudaGraphAddNode(&nc, g, &na, NULL, 1, &c));
  static int *cnt;
  cnt = cnt_d + 6;
  void *b_args[] = {&cnt, by};
  cudaGraphNodeParams b = kernel_params((void *)bump, b_args);
  CHECK(cudaGraphAddNode(&nb, c.conditional.phGraph_out[0], NULL, NULL, 0, &b));
  return g;
}

// x = 1: the first graph adds 1; updated from a graph that adds 10, it adds
// 10 (total 11); then x = 0 adds nothing: the node reads the new graph's
// handle, which its own A kernel set to 0 (the old handle still holds 1);
// a graph whose IF has an ELSE body cannot update it
static void update_graph(void) {
  int one = 1, ten = 10;
  cudaGraphConditionalHandle h1, h2, h3;
  void *s1[3] = {0, 0, &h1}, *s2[3] = {0, 0, &h2}, *s3[3] = {0, 0, &h3};
  cudaGraph_t g1 = if_bump_graph(&one, 1, s1);
  cudaGraph_t g2 = if_bump_graph(&ten, 1, s2);
  cudaGraph_t g3 = if_bump_graph(&ten, 2, s3);
  cudaGraphExec_t e;
  CHECK(cudaGraphInstantiate(&e, g1, 0));
  set_int(x_d, 1);
  CHECK(cudaGraphLaunch(e, 0));
  cudaGraphExecUpdateResultInfo info;
  CHECK(cudaGraphExecUpdate(e, g2, &info));
  CHECK(cudaGraphLaunch(e, 0));
  set_int(x_d, 0);
  CHECK(cudaGraphLaunch(e, 0));
  printf("update total=%d\n", get_int(cnt_d + 6));
  expect(cudaGraphExecUpdate(e, g3, &info), cudaErrorGraphExecUpdateFailure, "update IF size 1 from 2");
  printf("update mismatch result=%d\n", (int)info.result);
  CHECK(cudaGraphExecDestroy(e));
  CHECK(cudaGraphDestroy(g1));
  CHECK(cudaGraphDestroy(g2));
  CHECK(cudaGraphDestroy(g3));
}

// ------------------------------------------------------------------ errors
static void host_fn(void *) {}

static void errors(void) {
  cudaGraph_t g1, g2, g3;
  CHECK(cudaGraphCreate(&g1, 0));
  CHECK(cudaGraphCreate(&g2, 0));
  cudaGraphConditionalHandle h1, h2;
  CHECK(cudaGraphConditionalHandleCreate(&h1, g1, 1, cudaGraphCondAssignDefault));
  CHECK(cudaGraphConditionalHandleCreate(&h2, g2));
  expect(cudaGraphConditionalHandleCreate(&h2, g2, 0, 2), cudaErrorInvalidValue, "handle flags 2");
  cudaGraphNode_t n;
  cudaGraphNodeParams other = cond_params(h2, cudaGraphCondTypeIf, 1);
  expect(cudaGraphAddNode(&n, g1, NULL, NULL, 0, &other), cudaErrorInvalidValue,
         "a handle of another graph");
  cudaGraphNodeParams w2 = cond_params(h1, cudaGraphCondTypeWhile, 2);
  expect(cudaGraphAddNode(&n, g1, NULL, NULL, 0, &w2), cudaErrorInvalidValue, "WHILE of size 2");
  cudaGraphNodeParams i3 = cond_params(h1, cudaGraphCondTypeIf, 3);
  expect(cudaGraphAddNode(&n, g1, NULL, NULL, 0, &i3), cudaErrorInvalidValue, "IF of size 3");
  cudaGraphNodeParams s0 = cond_params(h1, cudaGraphCondTypeSwitch, 0);
  expect(cudaGraphAddNode(&n, g1, NULL, NULL, 0, &s0), cudaErrorInvalidValue, "SWITCH of size 0");
  cudaGraphNodeParams w = cond_params(h1, cudaGraphCondTypeWhile, 1);
  CHECK(cudaGraphAddNode(&n, g1, NULL, NULL, 0, &w));
  cudaGraph_t body = w.conditional.phGraph_out[0];
  // a body may hold kernel, empty, child graph, memset, memcpy and conditional nodes only
  cudaHostNodeParams hp = {host_fn, NULL};
  cudaGraphNode_t hn;
  expect(cudaGraphAddHostNode(&hn, body, NULL, 0, &hp), cudaErrorInvalidValue, "host node in a body");
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  CHECK(cudaStreamBeginCaptureToGraph(s, body, NULL, NULL, 0, cudaStreamCaptureModeGlobal));
  expect(cudaLaunchHostFunc(s, host_fn, NULL), cudaErrorStreamCaptureUnsupported,
         "captured host function in a body");
  expect(cudaStreamEndCapture(s, NULL), cudaErrorStreamCaptureInvalidated, "end of that capture");
  size_t count = 7;
  CHECK(cudaGraphGetNodes(body, NULL, &count));
  printf("errors: body nodes %zu\n", count);
  // a cycle in a body stops the instantiation, as one in the graph does
  cudaGraphNode_t e1, e2;
  CHECK(cudaGraphAddEmptyNode(&e1, body, NULL, 0));
  CHECK(cudaGraphAddEmptyNode(&e2, body, &e1, 1));
  CHECK(cudaGraphAddDependencies(body, &e2, &e1, NULL, 1));
  cudaGraphExec_t cyclic;
  expect(cudaGraphInstantiate(&cyclic, g1, 0), cudaErrorInvalidValue, "a cycle in a body");
  CHECK(cudaGraphRemoveDependencies(body, &e2, &e1, NULL, 1));
  // graphs with conditional nodes cannot be cloned or become child graphs
  expect(cudaGraphClone(&g3, g1), cudaErrorInvalidValue, "clone of a conditional graph");
  expect(cudaGraphAddChildGraphNode(&n, g2, NULL, 0, g1), cudaErrorInvalidValue,
         "conditional graph as a child");
  // nor be launched into a capture (that would record a child graph node)
  cudaGraphExec_t e;
  CHECK(cudaGraphInstantiate(&e, g1, 0));
  cudaGraph_t captured = NULL;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  expect(cudaGraphLaunch(e, s), cudaErrorInvalidValue, "conditional graph launched into a capture");
  expect(cudaStreamEndCapture(s, &captured), cudaErrorStreamCaptureInvalidated,
         "end of that capture");
  printf("errors: captured graph %s\n", captured ? "made" : "none");
  CHECK(cudaGraphExecDestroy(e));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaGraphDestroy(g1));
  CHECK(cudaGraphDestroy(g2));
}

int main() {
  CHECK(cudaMalloc(&x_d, sizeof(int)));
  CHECK(cudaMalloc(&c_d, sizeof(int)));
  CHECK(cudaMalloc(&y_d, N * sizeof(int)));
  CHECK(cudaMalloc(&cnt_d, 8 * sizeof(int)));
  CHECK(cudaMemset(cnt_d, 0, 8 * sizeof(int)));
  if_graph();
  if_else_graph();
  while_graph();
  captured_while_graph();
  switch_graph();
  nested_graph();
  update_graph();
  errors();
  CHECK(cudaFree(x_d));
  CHECK(cudaFree(c_d));
  CHECK(cudaFree(y_d));
  CHECK(cudaFree(cnt_d));
  printf(failures ? "FAIL\n" : "PASS\n");
  return failures ? 1 : 0;
}
