/* The messages between the shim (libcudart.so.13 in the application) and the
 * ptxc process: one request, one reply, over a Unix stream socket.
 *
 * request  {u32 op; u32 length} + length bytes
 * reply    {i32 status; u32 length; u32 nfds; u32 unused} + length bytes,
 *          with nfds file descriptors (SCM_RIGHTS) on the header
 * status   0 success, > 0 a cudaError_t for the API call to return,
 *          PTXC_ST_FATAL: ptxc printed why and stopped the run; the payload is
 *          the exit status the application must exit with (u32), then, when
 *          the run stopped in a launch that printed, a launch reply with
 *          error 0 (its printf output, written before the exit).
 *
 * ptxc/runtime/protocol.py mirrors every number here (a test compares them).
 * All integers are little-endian; structs are packed by hand, field by field.
 */
#ifndef PTXC_PROTOCOL_H
#define PTXC_PROTOCOL_H

#define PTXC_PROTOCOL_VERSION 3
#define PTXC_FD_ENV "PTXC_RUNTIME_FD"
/* set by the shim (to its pid) when it connects, so that a CUDA program the
 * application starts can say why it cannot be served */
#define PTXC_APP_ENV "PTXC_RUNTIME_APP"
#define PTXC_CLOCK_ENV "PTXC_CLOCK"   /* "model": events stamp the modelled device clock (stream.c) */

#define PTXC_ST_FATAL (-1)

/* exit statuses of an application that ptxc (or the shim) stopped */
#define PTXC_EXIT_UNSUPPORTED 86   /* the application called a CUDA runtime function ptxc lacks */
#define PTXC_EXIT_STOPPED 87       /* ptxc stopped the run (a kernel error: out-of-bounds ...) */
#define PTXC_EXIT_NO_PTXC 88       /* no ptxc process (not started by `ptxc run`, or it died) */
#define PTXC_EXIT_CRASHED 89       /* the ptxc process crashed while running a launch (it said which) */

/* requests (payloads: see ptxc/runtime/protocol.py) */
#define OP_HELLO 1            /* u32 version, u32 pid -> gpu info (u64 values, then name) */
#define OP_REGISTER_FATBIN 2  /* u64 wrapper address, u32 wrapper version, u32 n, fat binary, then the
                                 n-byte path of the shared library that registers it (0: the
                                 executable) -> u32 id */
#define OP_REGISTER_FUNCTION 3 /* u32 module, u64 host address, name -> u32 kernel id */
#define OP_KERNEL_INFO 4      /* u32 kernel -> kernel info (layout, attributes) */
#define OP_SYMBOL 5           /* u32 module, name -> u64 address, u64 size, u32 n, u32 0, n mappings */
#define OP_MALLOC 6           /* u64 size, u32 kind -> mapping; under ptxc check also u32 n,
                                 n x u64 return offsets, the call's name\0, n x object path\0
                                 (where it was made: the leak check, memory.c) */
#define OP_REMAP 7            /* u32 segment (mapping it failed) -> a new mapping */
#define OP_FREE 8             /* u32 segment */
#define OP_LAUNCH 9           /* u32 kernel, u32 grid[3], u32 block[3], u32 flags, u64 shared, u64 stream,
                                 u64 graph launch (0: not run by cudaGraphLaunch), params
                                 -> u32 device error, u32 stdout bytes, u32 stderr bytes,
                                    u32 timed (1: the next f64 is the launch's modelled GPU time),
                                    f64 modelled seconds, bytes (devout.c, stream.c) */
#define LAUNCH_REPLY_BYTES 24 /* the fixed part of a launch reply */
#define LAUNCH_COOPERATIVE 1  /* OP_LAUNCH flag: cudaLaunchCooperativeKernel */
#define OP_UNSUPPORTED 10     /* name of the unsupported call */
#define OP_HOST_WRITE 11      /* u64 dst, u64 src (0: host), u64 width, u64 rows, u64 dpitch, u64 spitch:
                                 a host copy or set wrote device memory (sent under ptxc check only) */
#define OP_API_ERROR 12       /* u32 cudaError_t, u32 0, u64 pointer, u64 bytes, call name: a memory call
                                 failed its argument checks (sent under ptxc check only) */
#define OP_SET_HEAP_LIMIT 13 /* u64 bytes: cudaDeviceSetLimit(cudaLimitMallocHeapSize); reply: cudaError_t */
#define OP_SET_STACK_LIMIT 14 /* u64 bytes: cudaDeviceSetLimit(cudaLimitStackSize); reply: cudaError_t */
#define OP_SET_PENDING_LIMIT 19 /* u64 launches: cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount); reply: cudaError_t */
/* the driver API (driver.h; numbers apart from the runtime's own requests) */
#define OP_DRIVER_UNSUPPORTED 50 /* name of an unsupported driver API call (it returned 801) */
#define OP_MODULE_LOAD 51     /* u32 library (0/1), u32 0, image bytes -> u32 module, u32 kernel count,
                                 names (NUL-ended) of its kernels (runtime/driver_modules.py) */
#define OP_MODULE_FUNCTION 52 /* u32 module, name -> u32 kernel id (CUDA_ERROR_NOT_FOUND: none) */
#define PTXC_CHECK_ENV "PTXC_CHECK_HOST"  /* "1": send OP_HOST_WRITE and OP_API_ERROR */
#define OP_TEXTURE_CREATE 40  /* texture/surface description (runtime/textures.py) -> u64 handle */
#define OP_TEXTURE_DESTROY 41 /* u64 handle */
/* graph memory nodes (runtime/graph_memory.py): an allocation's address is
 * fixed when its node is made, its memory exists between the alloc node and
 * the free */
#define OP_MEM_RESERVE 60     /* u64 size, u32 segment the shim could not reserve (0: none) -> u32 segment */
#define OP_MALLOC_AT 61       /* u64 size, u32 kind, u32 segment (reserved) -> mapping; under ptxc
                                 check also the allocation site (as OP_MALLOC) */

/* allocation kinds (also the report's names) */
#define KIND_DEVICE 0         /* cudaMalloc, cudaMallocPitch, cudaMalloc3D */
#define KIND_MANAGED 1        /* cudaMallocManaged */
#define KIND_HOST 2           /* cudaMallocHost, cudaHostAlloc */
#define KIND_MODULE 3         /* a module's .const or .global variables */

/* A mapping in a reply: u32 segment, u32 kind, u64 size (bytes to map); its
 * file descriptor is the next one of the reply's descriptors. */
#define MAPPING_BYTES 16

/* kernel info reply: u32 nparams, u32 param bytes, u32 attribute count,
 * u32 unused, nparams x (u32 offset, u32 size), then attribute count x i64 in
 * this order: */
#define KATTR_SHARED 0        /* static shared bytes */
#define KATTR_CONST 1         /* .const bytes of the module */
#define KATTR_LOCAL 2         /* local bytes per thread */
#define KATTR_MAX_THREADS 3   /* most threads per block */
#define KATTR_NUM_REGS 4      /* registers per thread (an estimate) */
#define KATTR_PTX_VERSION 5   /* 10 * major + minor of the PTX ISA */
#define KATTR_BINARY_VERSION 6 /* the target sm (e.g. 90) */
#define KATTR_COUNT 7

/* gpu info (OP_HELLO reply): GPU_COUNT x u64 in this order, then the name */
#define GPU_TOTAL_MEM 0
#define GPU_SHARED_PER_BLOCK 1
#define GPU_SHARED_PER_BLOCK_OPTIN 2
#define GPU_SHARED_PER_SM 3
#define GPU_REGS_PER_BLOCK 4
#define GPU_REGS_PER_SM 5
#define GPU_MAX_THREADS_PER_BLOCK 6
#define GPU_MAX_THREADS_PER_SM 7
#define GPU_MAX_BLOCKS_PER_SM 8
#define GPU_SM_COUNT 9
#define GPU_MAJOR 10
#define GPU_MINOR 11
#define GPU_CLOCK_KHZ 12
#define GPU_MEM_CLOCK_KHZ 13
#define GPU_MEM_BUS_WIDTH 14
#define GPU_L2_SIZE 15
#define GPU_CONST_MEM 16
#define GPU_PERSISTING_L2_MAX 17
#define GPU_RESERVED_SHARED_PER_BLOCK 18
#define GPU_COUNT 19

#endif
