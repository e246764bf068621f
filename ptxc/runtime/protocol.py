"""The messages between ptxc and the shim in the application (the ptxc side).

native/protocol.h is the definition; every number here mirrors it and
tests/test_runtime_protocol.py compares the two files. A request is
``{u32 op; u32 length} + payload``; a reply is ``{i32 status; u32 length;
u32 nfds; u32 0} + payload`` with ``nfds`` file descriptors passed with
SCM_RIGHTS on the header (the memfds of new device memory).
"""
from __future__ import annotations

import struct
from typing import TYPE_CHECKING

if TYPE_CHECKING:       # imported where used: `ptxc profile` reads GPU_FIELDS only
    import socket

PROTOCOL_VERSION = 3
FD_ENV = "PTXC_RUNTIME_FD"
APP_ENV = "PTXC_RUNTIME_APP"     # the served application's pid, for the programs it starts
CLOCK_ENV = "PTXC_CLOCK"   # "model": the shim's events stamp the modelled device clock
ST_FATAL = -1

EXIT_UNSUPPORTED = 86
EXIT_STOPPED = 87
EXIT_NO_PTXC = 88
EXIT_CRASHED = 89

OP_HELLO = 1
OP_REGISTER_FATBIN = 2
OP_REGISTER_FUNCTION = 3
OP_KERNEL_INFO = 4
OP_SYMBOL = 5
OP_MALLOC = 6
OP_REMAP = 7
OP_FREE = 8
OP_LAUNCH = 9              # server.LAUNCH + params; reply: runtime/faults.launch_reply
LAUNCH_COOPERATIVE = 1     # OP_LAUNCH flag: cudaLaunchCooperativeKernel
LAUNCH_REPLY_BYTES = 24    # u32 error, u32 stdout, u32 stderr, u32 timed, f64 modelled seconds
OP_UNSUPPORTED = 10
OP_HOST_WRITE = 11         # under ptxc check: device bytes a host copy or set wrote
OP_API_ERROR = 12          # under ptxc check: a memory call that failed its checks
OP_SET_HEAP_LIMIT = 13     # u64 bytes: cudaDeviceSetLimit(cudaLimitMallocHeapSize)
OP_SET_STACK_LIMIT = 14    # u64 bytes: cudaDeviceSetLimit(cudaLimitStackSize)
OP_SET_PENDING_LIMIT = 19  # u64 launches: cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount)
OP_DRIVER_UNSUPPORTED = 50  # name of an unsupported driver API call (it returned 801)
OP_MODULE_LOAD = 51        # driver modules (runtime/driver_modules.py)
OP_MODULE_FUNCTION = 52
CHECK_ENV = "PTXC_CHECK_HOST"
OP_TEXTURE_CREATE = 40     # runtime/textures.py
OP_TEXTURE_DESTROY = 41
OP_MEM_RESERVE = 60        # runtime/graph_memory.py: a fixed address for a graph allocation
OP_MALLOC_AT = 61

KIND_DEVICE = 0
KIND_MANAGED = 1
KIND_HOST = 2
KIND_MODULE = 3

MAPPING_BYTES = 16

KATTR_SHARED = 0
KATTR_CONST = 1
KATTR_LOCAL = 2
KATTR_MAX_THREADS = 3
KATTR_NUM_REGS = 4
KATTR_PTX_VERSION = 5
KATTR_BINARY_VERSION = 6
KATTR_COUNT = 7

GPU_FIELDS = ("TOTAL_MEM", "SHARED_PER_BLOCK", "SHARED_PER_BLOCK_OPTIN", "SHARED_PER_SM",
              "REGS_PER_BLOCK", "REGS_PER_SM", "MAX_THREADS_PER_BLOCK", "MAX_THREADS_PER_SM",
              "MAX_BLOCKS_PER_SM", "SM_COUNT", "MAJOR", "MINOR", "CLOCK_KHZ", "MEM_CLOCK_KHZ",
              "MEM_BUS_WIDTH", "L2_SIZE", "CONST_MEM", "PERSISTING_L2_MAX",
              "RESERVED_SHARED_PER_BLOCK")

# cudaError_t values the ptxc side returns
CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_MEMORY_ALLOCATION = 2
CUDA_ERROR_INVALID_CONFIGURATION = 9
CUDA_ERROR_INVALID_SYMBOL = 13
CUDA_ERROR_INVALID_DEVICE_FUNCTION = 98
CUDA_ERROR_NO_KERNEL_IMAGE = 209

_REQUEST = struct.Struct("<II")
_REPLY = struct.Struct("<iIII")


class Closed(Exception):
    """The application closed its end (it exited)."""


class Channel:
    """The ptxc end of the socket: read requests, send replies."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.owed = False          # a request was read and its reply not sent (the shim waits)
        self.replying = False      # a reply is being sent (an interrupt may cut it short)

    def _read(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(min(n - len(buf), 1 << 20))
            if not chunk:
                raise Closed()
            buf += chunk
        return bytes(buf)

    def request(self) -> tuple[int, bytes]:
        """The next request: (op, payload); raises Closed at the end."""
        op, length = _REQUEST.unpack(self._read(_REQUEST.size))
        payload = self._read(length) if length else b""
        self.owed = True
        return op, payload

    def peer_closed(self) -> bool:
        """Has the application's end of the socket closed (without blocking)?"""
        import socket
        try:
            return self.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True

    def reply(self, status: int = 0, payload: bytes = b"", fds=()) -> None:
        head = _REPLY.pack(status, len(payload), len(fds), 0)
        self.replying = True
        if fds:
            import socket
            socket.send_fds(self.sock, [head], list(fds))
            if payload:
                self.sock.sendall(payload)
        else:
            self.sock.sendall(head + payload)
        self.owed = self.replying = False


def mapping(seg: int, kind: int, size: int) -> bytes:
    return struct.pack("<IIQ", seg, kind, size)


def gpu_info_bytes(model) -> bytes:
    """The OP_HELLO reply for a GPU model (ptxc.gpus.devices.GpuModel): the
    GPU_FIELDS values, then the NUL-ended name."""
    values = [getattr(model, f.lower()) for f in GPU_FIELDS]
    return struct.pack(f"<{len(values)}Q", *values) + model.name.encode() + b"\0"
