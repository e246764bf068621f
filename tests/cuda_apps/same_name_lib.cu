// The second fat binary of the same_name_main application: a kernel of the
// same PTX name (_Z1kPi with nvcc 13) doing other work.
static __global__ void k(int *p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  p[i] = 3 * i + 1;
}
void lib_launch(int *p) { k<<<2, 64>>>(p); }
