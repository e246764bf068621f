/* The shim's connection to the ptxc process (protocol.h).
 *
 * The connection is made on the first CUDA call (a static constructor of the
 * application registers its fat binary before main). Every request holds
 * the shim's recursive lock, so threads of the application take turns. When
 * ptxc stops the run, the shim calls exit(): stdio buffers of the application
 * are flushed and its atexit handlers run (the CUDA calls they make return
 * cudaErrorCudartUnloading without talking to ptxc).
 *
 * One process is served: the one that loaded the shim. A child it forks
 * gets no CUDA (shim.h, CHILD_GUARD; docs/runtime.md, "fork and exec"): its
 * copy of the connection is closed at the fork, so that the parent's end
 * closes when the parent exits and the child never writes into the
 * parent's conversation. A program the application starts (exec) finds no
 * connection and exits with a message that says why.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "shim.h"

pthread_mutex_t shim_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

#ifdef PTXC_SOURCE_TAG
/* which sources this library was built from (build_shim.is_current) */
__attribute__((used)) static const char source_tag[] = PTXC_SOURCE_TAG;
#endif

static int conn_fd = -1;
static int dead;                 /* set once the run is over */
static pid_t owner;              /* the process that loaded the shim (the one served) */
volatile int shim_child;         /* this is a forked child of it (CHILD_GUARD) */
static uint64_t gpu[GPU_COUNT];
static char gpu_name_buf[256];

void put32(char *p, uint32_t v) { memcpy(p, &v, 4); }
void put64(char *p, uint64_t v) { memcpy(p, &v, 8); }
uint32_t get32(const char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
uint64_t get64(const char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

int shim_dead(void) { return dead; }
int shim_connected(void) { return conn_fd >= 0; }

/* pthread_atfork's child handler: in the child only this thread runs; the
 * lock may be held by a thread of the parent that does not exist here, so
 * nothing here takes it */
static void at_fork_child(void)
{
    shim_child = 1;
    if (conn_fd >= 0)
        close(conn_fd);
}

__attribute__((constructor)) static void shim_init(void)
{
    owner = getpid();
    pthread_atfork(NULL, NULL, at_fork_child);
}

/* not the process that loaded the shim (a child made without fork(), whose
 * atfork handlers did not run): never talk to ptxc from there */
static int foreign(void)
{
    if (!shim_child && owner && getpid() != owner)
        shim_child = 1;
    return shim_child;
}

static void lost(void) __attribute__((noreturn));
static void lost(void)
{
    dead = 1;
    UNLOCK();
    fprintf(stderr, "ptxc: lost the connection to the ptxc process\n");
    exit(PTXC_EXIT_NO_PTXC);
}

void shim_fatal(int status)
{
    dead = 1;
    /* the lock is recursive and held by this thread (maybe more than once):
       release it fully so that atexit handlers calling CUDA do not block */
    while (pthread_mutex_unlock(&shim_lock) == 0)
        ;
    exit(status);
}

static void send_all(const struct iovec *iov, int n)
{
    struct iovec v[2];
    memcpy(v, iov, n * sizeof *v);
    struct msghdr m = { .msg_iov = v, .msg_iovlen = n };
    while (m.msg_iovlen > 0) {
        ssize_t k = sendmsg(conn_fd, &m, MSG_NOSIGNAL);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            lost();
        }
        while (m.msg_iovlen > 0 && (size_t)k >= m.msg_iov->iov_len) {
            k -= m.msg_iov->iov_len;
            m.msg_iov++;
            m.msg_iovlen--;
        }
        if (m.msg_iovlen > 0) {
            m.msg_iov->iov_base = (char *)m.msg_iov->iov_base + k;
            m.msg_iov->iov_len -= k;
        }
    }
}

static void recv_all(void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = recv(conn_fd, (char *)buf + got, n - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            lost();
        got += k;
    }
}

/* the reply header and its descriptors */
static void recv_header(char *hdr, struct reply *r)
{
    union { char buf[CMSG_SPACE(8 * sizeof(int))]; struct cmsghdr align; } ctl;
    size_t got = 0;
    r->nfds = 0;
    while (got < 16) {
        struct iovec v = { hdr + got, 16 - got };
        struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1,
                            .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf };
        ssize_t k = recvmsg(conn_fd, &m, MSG_CMSG_CLOEXEC);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            lost();
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                int n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (int i = 0; i < n && r->nfds < 8; i++)
                    memcpy(&r->fds[r->nfds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
            }
        }
        got += k;
    }
}

void shim_call(uint32_t op, const void *a, size_t alen, const void *b, size_t blen, struct reply *r)
{
    if (foreign()) {             /* a forked child: no ptxc here (and no lock: see above) */
        memset(r, 0, sizeof *r);
        r->status = cudaErrorInitializationError;
        return;
    }
    LOCK();
    if (dead) {                  /* after the end of the run (atexit handlers) */
        memset(r, 0, sizeof *r);
        r->status = cudaErrorCudartUnloading;
        UNLOCK();
        return;
    }
    if (conn_fd < 0)
        shim_connect();
    char hdr[16];
    put32(hdr, op);
    put32(hdr + 4, (uint32_t)(alen + blen));
    struct iovec v[2] = { { hdr, 8 }, { (void *)a, alen } };
    send_all(v, alen ? 2 : 1);
    if (blen) {
        struct iovec w = { (void *)b, blen };
        send_all(&w, 1);
    }
    recv_header(hdr, r);
    r->status = (int)get32(hdr);
    r->len = get32(hdr + 4);
    r->data = malloc(r->len + 1);
    if (!r->data)
        lost();
    recv_all(r->data, r->len);
    r->data[r->len] = 0;
    if (r->status == PTXC_ST_FATAL) {
        int status = r->len >= 4 ? (int)get32(r->data) : PTXC_EXIT_STOPPED;
        if (r->len > 4)      /* what the stopped launch printed: written at exit (devout.c) */
            device_launch_result(r->data + 4, r->len - 4);
        fflush(NULL);
        shim_fatal(status);
    }
    UNLOCK();
}

void reply_free(struct reply *r)
{
    for (int i = 0; i < r->nfds; i++)
        if (r->fds[i] >= 0)
            close(r->fds[i]);
    free(r->data);
    r->data = NULL;
    r->nfds = 0;
}

void shim_connect(void)
{
    LOCK();
    if (conn_fd >= 0) {
        UNLOCK();
        return;
    }
    const char *s = getenv(PTXC_FD_ENV);
    if (!s || !*s) {
        const char *app = getenv(PTXC_APP_ENV);
        if (app && *app)
            fprintf(stderr, "ptxc: error: this program (pid %d) was started by the application "
                            "that `ptxc run` serves (pid %s) and uses the CUDA runtime too; ptxc "
                            "serves the CUDA calls of one process per run (docs/runtime.md, "
                            "\"fork and exec\")\n", (int)getpid(), app);
        else
            fprintf(stderr, "ptxc: this libcudart.so.13 is ptxc's CUDA runtime: run the "
                            "application with `ptxc run -- APP ARGS...`\n");
        fflush(NULL);
        dead = 1;
        UNLOCK();
        exit(PTXC_EXIT_NO_PTXC);
    }
    conn_fd = atoi(s);
    /* programs this one starts must not talk to ptxc on its connection; a
       CUDA program among them says why it cannot (above) */
    fcntl(conn_fd, F_SETFD, FD_CLOEXEC);
    unsetenv(PTXC_FD_ENV);
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    setenv(PTXC_APP_ENV, pid, 1);
    char req[8];
    put32(req, PTXC_PROTOCOL_VERSION);
    put32(req + 4, (uint32_t)getpid());
    struct reply r;
    shim_call(OP_HELLO, req, sizeof req, NULL, 0, &r);
    if (r.len < 8 * GPU_COUNT)
        lost();
    for (int i = 0; i < GPU_COUNT; i++)
        gpu[i] = get64(r.data + 8 * i);
    snprintf(gpu_name_buf, sizeof gpu_name_buf, "%s", r.data + 8 * GPU_COUNT);
    reply_free(&r);
    UNLOCK();
}

const uint64_t *gpu_info(void)
{
    if (conn_fd < 0)
        shim_connect();
    return gpu;
}

const char *gpu_name(void)
{
    gpu_info();
    return gpu_name_buf;
}

void shim_unsupported(const char *name)
{
    if (foreign()) {             /* a forked child: say so without ptxc */
        fflush(NULL);
        fprintf(stderr, "ptxc: unsupported CUDA runtime call: %s\n", name);
        exit(PTXC_EXIT_UNSUPPORTED);
    }
    LOCK();
    fflush(NULL);
    fprintf(stderr, "ptxc: unsupported CUDA runtime call: %s\n", name);
    if (!dead) {
        struct reply r;
        shim_call(OP_UNSUPPORTED, name, strlen(name), NULL, 0, &r);
        reply_free(&r);
    }
    shim_fatal(PTXC_EXIT_UNSUPPORTED);
}
