// Stream attributes under ptxc run (tests/test_runtime_graphs.py): the
// values an application sets are returned, unset ones read as CUDA's
// defaults, bad values are refused, and a launch on a stream with an access
// policy window computes the same result. Prints PASS or FAIL.
#include <cstdio>

#define N 512
static int failures = 0;
#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("line %d: %s: %s\n", __LINE__, #x, cudaGetErrorName(e_)); failures++; } } while (0)
#define EXPECT(cond) do { if (!(cond)) { printf("line %d: %s\n", __LINE__, #cond); \
  failures++; } } while (0)

__global__ void triple(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = 3 * i;
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  EXPECT(prop.persistingL2CacheMaxSize > 0);
  CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, prop.persistingL2CacheMaxSize));
  size_t limit = 0;
  CHECK(cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize));
  EXPECT(limit == (size_t)prop.persistingL2CacheMaxSize);

  cudaStream_t s, t;
  CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, -2));
  CHECK(cudaStreamCreate(&t));
  cudaStreamAttrValue v;

  // unset attributes: CUDA's defaults
  CHECK(cudaStreamGetAttribute(s, cudaStreamAttributePriority, &v));
  EXPECT(v.priority == -2);
  CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &v));
  EXPECT(v.syncPolicy == cudaSyncPolicyAuto);
  CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
  EXPECT(v.accessPolicyWindow.base_ptr == NULL && v.accessPolicyWindow.num_bytes == 0);

  // set values are returned as they were set
  int *d;
  CHECK(cudaMalloc(&d, N * sizeof(int)));
  cudaStreamAttrValue w = {};
  w.accessPolicyWindow.base_ptr = d;
  w.accessPolicyWindow.num_bytes = N * sizeof(int);
  w.accessPolicyWindow.hitRatio = 0.625f;
  w.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  w.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &w));
  CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
  EXPECT(v.accessPolicyWindow.base_ptr == d && v.accessPolicyWindow.num_bytes == N * sizeof(int));
  EXPECT(v.accessPolicyWindow.hitRatio == 0.625f);
  EXPECT(v.accessPolicyWindow.hitProp == cudaAccessPropertyPersisting);
  EXPECT(v.accessPolicyWindow.missProp == cudaAccessPropertyStreaming);
  cudaStreamAttrValue p = {};
  p.syncPolicy = cudaSyncPolicyBlockingSync;
  CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &p));
  p.priority = -1;
  CHECK(cudaStreamSetAttribute(s, cudaStreamAttributePriority, &p));
  CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &v));
  EXPECT(v.syncPolicy == cudaSyncPolicyBlockingSync);
  CHECK(cudaStreamGetAttribute(s, cudaStreamAttributePriority, &v));
  EXPECT(v.priority == -1);

  // bad values and attributes that are not stream attributes
  cudaStreamAttrValue bad = w;
  bad.accessPolicyWindow.hitRatio = 1.5f;
  EXPECT(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &bad)
         == cudaErrorInvalidValue);
  EXPECT(cudaStreamSetAttribute(s, cudaLaunchAttributeCooperative, &p) == cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
  EXPECT(v.accessPolicyWindow.hitRatio == 0.625f);   // unchanged by the refused call

  // copying attributes between streams
  CHECK(cudaStreamCopyAttributes(t, s));
  CHECK(cudaStreamGetAttribute(t, cudaStreamAttributeAccessPolicyWindow, &v));
  EXPECT(v.accessPolicyWindow.base_ptr == d && v.accessPolicyWindow.hitRatio == 0.625f);

  // the window changes no result
  CHECK(cudaCtxResetPersistingL2Cache());
  triple<<<(N + 127) / 128, 128, 0, s>>>(d, N);
  CHECK(cudaStreamSynchronize(s));
  int h[N];
  CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) EXPECT(h[i] == 3 * i);

  CHECK(cudaStreamDestroy(s));
  CHECK(cudaStreamDestroy(t));
  CHECK(cudaFree(d));
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures != 0;
}
