// An application that dies while a kernel runs: one short launch, then a
// kernel that never ends (it waits for a flag nobody sets) while a second
// host thread kills the process as soon as the kernel has started (the
// kernel sets `started`, managed memory the host thread polls):
//   dies_app segv     the host thread dereferences a null pointer (SIGSEGV)
//   dies_app kill     it raises SIGKILL on its own process
//   dies_app exit N   it calls exit(N)
// tests/test_run_processes.py checks that ptxc notices the death promptly and
// says what it was, instead of running the kernel on to its step budget.
//   dies_app stubborn  no kernel: it ignores SIGTERM, prints "ready PID" and
// sleeps, so that ptxc, stopping it after a SIGTERM, waits for it (and a
// second SIGTERM comes meanwhile).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <cuda_runtime.h>

__global__ void fill(int *out, int v)
{
    out[threadIdx.x] = v + threadIdx.x;
}

__global__ void spin(volatile int *flag, volatile int *started, int *out)
{
    int n = 0;
    if (threadIdx.x == 0)
        *started = 1;
    while (*flag == 0)
        n++;
    out[threadIdx.x] = n;
}

static const char *how;
static int status;
static volatile int *started;

static void *killer(void *)
{
    while (*started == 0)
        usleep(1000);
    if (strcmp(how, "segv") == 0)
        *(volatile int *)nullptr = 1;
    else if (strcmp(how, "kill") == 0)
        raise(SIGKILL);
    else
        exit(status);
    return nullptr;
}

int main(int argc, char **argv)
{
    how = argc > 1 ? argv[1] : "segv";
    status = argc > 2 ? atoi(argv[2]) : 0;
    int *flag, *out, *start;
    if (strcmp(how, "stubborn") == 0) {
        cudaMalloc(&flag, sizeof(int));
        signal(SIGTERM, SIG_IGN);
        printf("ready %d\n", (int)getpid());
        fflush(stdout);
        sleep(60);
        return 0;
    }
    cudaMalloc(&flag, sizeof(int));
    cudaMalloc(&out, 32 * sizeof(int));
    cudaMallocManaged(&start, sizeof(int));
    cudaMemset(flag, 0, sizeof(int));
    *start = 0;
    started = start;
    fill<<<1, 32>>>(out, 1);
    cudaDeviceSynchronize();
    printf("1 launch done\n");
    fflush(stdout);
    pthread_t t;
    pthread_create(&t, nullptr, killer, nullptr);
    spin<<<1, 32>>>(flag, start, out);
    cudaError_t err = cudaDeviceSynchronize();
    printf("%s\n", cudaGetErrorString(err));
    return 0;
}
