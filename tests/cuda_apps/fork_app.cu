// fork and exec under `ptxc run` (tests/test_run_processes.py): a host thread
// of the parent launches and copies back all the time while the main
// thread forks children that call the CUDA runtime (a forked child cannot
// use its parent's CUDA context: every call fails with
// cudaErrorInitializationError, 3) and, last, a child that execs this
// program again, which uses CUDA in its own right (ptxc serves one process
// per run: it exits with status 88 and says why). The parent's results
// must stay right all along and after.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda_runtime.h>

__global__ void scale(int *a, int r)
{
    a[threadIdx.x] = threadIdx.x * r + 1;
}

static volatile int stop, rounds, bad;
static int *d;                      // the parent's device buffer

static long sum_of(int *dev, int r)
{
    int h[64];
    scale<<<1, 64>>>(dev, r);
    if (cudaMemcpy(h, dev, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess)
        return -1;
    long s = 0;
    for (int i = 0; i < 64; i++)
        s += h[i];
    return s;
}

static void *launcher(void *)
{
    int *mine;
    cudaMalloc(&mine, 64 * sizeof(int));
    for (int r = 1; !stop; r++) {
        if (sum_of(mine, r) != 2016L * r + 64)      // sum of i*r + 1 over i < 64
            bad = bad + 1;
        rounds = rounds + 1;
    }
    return nullptr;
}

static void child(int k)
{
    int *p = nullptr, h[64], n = -1;
    cudaError_t e1 = cudaMalloc(&p, 256);
    scale<<<1, 64>>>(d, 7);
    cudaError_t e2 = cudaGetLastError();
    cudaError_t e3 = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    cudaError_t e4 = cudaDeviceSynchronize();
    cudaError_t e5 = cudaGetDeviceCount(&n);
    cudaError_t e6 = cudaGetLastError();
    printf("child %d: malloc %d launch %d memcpy %d sync %d count %d last %d (%s)\n", k, e1, e2,
           e3, e4, e5, e6, cudaGetErrorName(e6));
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "exec-child") == 0) {
        int *p;                      // not reached under ptxc (the shim exits first)
        printf("exec child: malloc %d\n", cudaMalloc(&p, 4));
        return 0;
    }
    cudaMalloc(&d, 64 * sizeof(int));
    pthread_t t;
    pthread_create(&t, nullptr, launcher, nullptr);
    while (rounds < 2)
        usleep(1000);
    for (int k = 0; k < 6; k++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            child(k);
            exit(0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            printf("child %d: ended with wait status %d\n", k, st);
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", argv[0], "exec-child", (char *)nullptr);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    printf("exec child: exit status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    stop = 1;
    pthread_join(t, nullptr);
    printf("parent: rounds %s, wrong %d\n", rounds >= 2 ? "ok" : "too few", bad);
    printf("parent after the children: %ld\n", sum_of(d, 3));   // 2016 * 3 + 64
    return 0;
}
