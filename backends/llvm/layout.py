"""Shared constants of the SIMT executor: state layouts, address map, status codes.

The generated code (codegen.py, runtime_ir.py) and the Python runtime
(runtime.py) agree on these numbers; nothing else in the executor hard-codes an
offset. See docs/executor.md for the picture.

Address map (generic 64-bit addresses, as a PTX program sees them)
------------------------------------------------------------------
An address is ``segment << SHIFT | offset`` with SHIFT = 32 (or 24 in a
module with ``.address_size 32``: 16 MiB per segment). The segment table (one per worker
thread) holds, for each segment, a host base pointer, a size in bytes and a
per-lane stride (non-zero only for per-thread memory). A load or store
resolves ``host = base[seg] + offset + lane * stride[seg]`` after checking
``seg < nsegs`` and ``offset + size <= size[seg]`` and the natural alignment of
``offset``: a bad address never reaches the host.

State-space addresses (``ld.shared [a]``, ``ld.local [a]``, ``ld.const [a]``,
``ld.param [a]``) are plain offsets into their segment; ``cvta`` adds or strips
the segment number.
"""
from __future__ import annotations

# the module's address width is an IR fact (ptxc/ir/address_size.py); seg_shift
# and the executor's callers (layout.address_bits) read it from here
from ptxc.ir.address_size import address_bits

LANES = 32


def seg_shift(module) -> int:
    """Bits of offset in a generic address of ``module``."""
    return 24 if address_bits(module) == 32 else 32
FULL_MASK = 0xFFFFFFFF

# ------------------------------------------------------------- segments
SEG_NULL = 0        # never valid: address 0..4 GiB traps as a null access
SEG_SHARED = 1      # the current CTA's shared memory (static + dynamic)
SEG_LOCAL = 2       # per-thread local memory (locals, call parameters)
SEG_PARAM = 3       # the kernel parameter buffer
SEG_CONST = 4       # module .const variables
SEG_GLOBALS = 5     # module .global variables
SEG_FIRST_BUFFER = 6  # user buffers: one segment each
SEG_ENTRY_BYTES = 32  # {ptr base, i64 size, i64 lane_stride, ptr initcheck shadow (0: none)}

def spare_segment(segments) -> int:
    """The first segment number after the buffers of ``segments`` (a launch's
    own memory: the device heap, the grid-sync workspace)."""
    return max([SEG_FIRST_BUFFER - 1, *segments]) + 1


SPACE_SEGMENT = {"shared": SEG_SHARED, "local": SEG_LOCAL, "param": SEG_PARAM,
                 "const": SEG_CONST}

# ----------------------------------------------------- warp state (ws)
WS_SP = 0            # i32 stack depth
WS_EXITED = 4        # i32 lanes that executed ret/exit
WS_WARP = 8          # i32 warp index in the CTA
WS_VALID = 12        # i32 lanes that exist (partial last warp)
WS_STEPS = 16        # i64 block executions so far
WS_ERR_CODE = 24     # i32
WS_ERR_ID = 28       # i32 instruction id (or node id for step limit)
WS_ERR_LANE = 32     # i32
WS_RED = 36          # i32 bar.red contribution of this warp (popc count or flag)
WS_ERR_ADDR = 40     # i64
WS_STARTED = 48      # i32 1 once the warp saved its frame (at a barrier)
WS_STATUS = 52       # i32 CTA loop: 0 runnable, 2 done
WS_TID = 64          # 3 x <32 x i32> (x, y, z)
WS_STACK = 448       # stack entries {i32 pc, i32 rpc, i32 mask, i32 unused}
STACK_ENTRY = 16

# ------------------------------------------------------ CTA state (cta)
CTA_ID = 0           # 3 x i32 ctaid
CTA_LINEAR = 12      # i32 linear CTA index
CTA_RED_POPC = 16    # i32 bar.red.popc accumulator
CTA_RED_AND = 20     # i32 bar.red.and accumulator
CTA_RED_OR = 24      # i32 bar.red.or accumulator
CTA_RES_POPC = 28    # i32 results of the last bar.red
CTA_RES_AND = 32
CTA_RES_OR = 36
CTA_INST = 40        # i64 warp-level instructions of the current CTA
CTA_TINST = 48       # i64 thread-level instructions of the current CTA
CTA_RACE = 56        # ptr the worker's racecheck shadow (racecheck_ir.py; 0: none)
CTA_LINEAR_HI = 64   # i32 the linear CTA index's high 32 bits (grids of more than 2**32 CTAs)
CTA_SIZE = 72

# ---------------------------------------------------- launch state (L)
L_NTID = 0           # 3 x i32
L_NTHREADS = 12      # i32 threads per CTA
L_NCTAID = 16        # 3 x i32
L_NWARPS = 28        # i32 warps per CTA
L_PARAMS = 32        # ptr kernel parameter buffer
L_MAX_STEPS = 40     # i64 step budget per warp
L_SHARED = 48        # i32 shared bytes (static + dynamic)
L_DYN_SHARED = 52    # i32 dynamic shared bytes
L_LOCAL = 56         # i32 local bytes per lane
L_NSEGS = 60         # i32 segments in the table
L_PER_CTA = 64       # ptr i64[2 * nctas]: per-CTA inst / thread inst (or null)
L_GRID_WS = 72       # i64 generic address of the grid-sync workspace (%envreg1:2; 0 if none)
L_COOP = 80          # i32 1 in a cooperative launch: warps yield at spin points (coop.py)
L_STACK = 84         # i32 stack bytes per thread (cudaLimitStackSize; ops/call_frames.py)
L_HEAP_SEG = 88      # i32 the device heap's segment (0: none; memcheck bounds its blocks)
L_HEAP_GRAN = 92     # i32 its 16-byte granules
L_HEAP_OWNER = 96    # ptr i32 per granule: 1 + the first granule of its malloc block (0: free)
L_HEAP_END = 104     # ptr i64 per block's first granule: the offset its requested bytes end at
L_SIZE = 112

# --------------------------------------------------- worker state (W)
W_WS = 0             # ptr warp states (nwarps * ws_size)
W_LOCAL = 8          # ptr local memory (nwarps * 32 * local bytes)
W_SHARED = 16        # ptr shared memory
W_SEGS = 24          # ptr segment table
W_COUNTERS = 32      # ptr i64 counters
W_CTA = 40           # ptr CTA state
W_WS_SIZE = 48       # i64 bytes per warp state
W_ERR_CTA = 56       # i64 linear CTA of an error
W_ERR_WARP = 64      # i32 warp of an error
W_SIZE = 72

# ------------------------------------------------------- status codes
ST_DONE = 0
ST_BARRIER = 1
ST_ERROR = 2
ST_YIELD = 3         # the warp waits on an mbarrier: run the others, then it again

ERR_NONE = 0
ERR_OOB = 1
ERR_MISALIGNED = 2
ERR_STEPS = 3
ERR_STACK = 4
ERR_TRAP = 5
ERR_UNSUPPORTED = 6
ERR_DEADLOCK = 7
ERR_BAD_FREE = 12   # free() of an address malloc did not return (ops/device_heap.py)
ERR_COOP_ABORT = 13 # another CTA of a cooperative launch failed, or no CTA progressed (coop.py)
ERR_ASSERT = 14     # a failed device assertion (__assertfail; device_calls.py)
ERR_TEX = 15        # a texture/surface instruction failed (ops/texture.py: message in ERRORS)
ERR_PARTIAL_WARP = 20  # a whole-warp (.aligned) matrix instruction run by part of a warp (ops/mma.py)
ERR_STACK_OVERFLOW = 21  # a call needs more stack than the thread has (ops/call_frames.py)
ERR_BAD_CALL = 22   # an indirect call through a pointer that is no callable function (ops/indirect_calls.py)

# pc values: 0..n-1 nodes, then barrier resume points; EXIT_PC never runs
EXIT_PC = 0x7FFFFFFF
