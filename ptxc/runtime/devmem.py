"""Device memory: the allocation table of a run, one segment per allocation.

Every allocation (cudaMalloc and friends, and each module's .const and
.global variables) is a memfd of its own: mapped here with mmap (its numpy
view is the segment's array that launch_segments runs kernels on) and,
after its descriptor travels to the shim, in the application at address
``segment << 32``. A device pointer is therefore the same number in the
application and in a kernel, and the two processes share the bytes.

Segment numbers start at layout.SEG_FIRST_BUFFER and are not reused while
the address space has room, so a pointer into freed memory names the
allocation it once was ("freed allocation #3 (cudaMalloc 4096 bytes)").
When the application's address range for a segment is already taken, the
shim asks for another number (``remap``).

A graph allocation (CUDA graph memory nodes, runtime/graph_memory.py) has
its address fixed when its node is made, before its memory exists:
``reserve`` sets a segment number aside (never handed out otherwise), and
each run of the node allocates at that number (``allocate(..., seg=s)``);
its frees leave the number reserved.
"""
from __future__ import annotations

import mmap
import os
from dataclasses import dataclass, field

import numpy as np

from ptxc.backends.llvm.layout import SEG_FIRST_BUFFER

from .protocol import KIND_DEVICE, KIND_HOST, KIND_MANAGED, KIND_MODULE

SEG_LIMIT = 1 << 15            # 128 TiB of 4 GiB segments: the x86-64 user address space
MAX_SIZE = 1 << 32             # one segment's offsets
KIND_NAMES = {KIND_DEVICE: "cudaMalloc", KIND_MANAGED: "cudaMallocManaged",
              KIND_HOST: "cudaMallocHost", KIND_MODULE: "module variables"}


@dataclass
class Allocation:
    number: int                # 1, 2, ... in the order of the calls
    seg: int
    kind: int
    size: int
    label: str
    fd: int
    map: mmap.mmap
    array: np.ndarray
    freed: bool = False
    taken: list = field(default_factory=list)   # segments the shim could not map
    site: tuple | None = None  # ptxc check: (CUDA call, [(object, offset), ...]) (checks.py)

    @property
    def name(self) -> str:
        state = "freed allocation" if self.freed else "allocation"
        return f"{state} #{self.number} ({self.label})"


class DeviceMemory:
    """The allocations of one run, by segment."""

    def __init__(self):
        self.by_seg: dict[int, Allocation] = {}
        self.freed: dict[int, Allocation] = {}
        self.next_seg = SEG_FIRST_BUFFER
        self.unusable: set[int] = set()
        self.reserved: set[int] = set()   # graph allocations' fixed segments
        self.count = 0
        self.bytes_live = 0
        self.peak = 0

    def _new_seg(self) -> int:
        while self.next_seg < SEG_LIMIT:
            s = self.next_seg
            self.next_seg += 1
            if s not in self.unusable and s not in self.by_seg and s not in self.reserved:
                return s
        for s in list(self.freed):     # out of numbers: reuse the oldest freed ones
            if s in self.reserved:
                continue
            del self.freed[s]
            if s not in self.unusable:
                return s
        raise MemoryError("no segment number left")

    def reserve(self, bad: int = 0) -> int:
        """A segment number for a graph allocation; ``bad``: one the shim
        could not reserve in the application (never used again)."""
        if bad in self.reserved and bad not in self.by_seg:
            self.reserved.discard(bad)
            self.unusable.add(bad)
        s = self._new_seg()
        self.reserved.add(s)
        return s

    def allocate(self, size: int, kind: int, label: str | None = None,
                 seg: int | None = None) -> Allocation:
        """A new allocation; ``seg``: at this reserved segment (not live)."""
        if seg is not None and (seg not in self.reserved or seg in self.by_seg):
            raise MemoryError(f"segment {seg} is not a free reserved segment")
        if size <= 0 or size > MAX_SIZE:
            raise MemoryError(f"{size} bytes: an allocation must be 1 byte to 4 GiB")
        fd = os.memfd_create("ptxc-device-memory", os.MFD_CLOEXEC)
        try:
            length = -(-size // mmap.PAGESIZE) * mmap.PAGESIZE
            os.ftruncate(fd, length)
            mm = mmap.mmap(fd, length)
        except OSError:
            os.close(fd)
            raise MemoryError(f"cannot allocate {size} bytes")
        self.count += 1
        array = np.frombuffer(mm, dtype=np.uint8, count=size)
        a = Allocation(self.count, self._new_seg() if seg is None else seg, kind, size,
                       label or f"{KIND_NAMES[kind]} {size} bytes", fd, mm, array)
        self.by_seg[a.seg] = a
        self.freed.pop(a.seg, None)
        if kind != KIND_MODULE:
            self.bytes_live += size
            self.peak = max(self.peak, self.bytes_live)
        return a

    def remap(self, seg: int) -> Allocation:
        """The shim could not map segment ``seg`` (the range is taken in the
        application): give the allocation another number."""
        a = self.by_seg.pop(seg)
        self.unusable.add(seg)
        a.seg = self._new_seg()
        self.by_seg[a.seg] = a
        return a

    def free(self, seg: int) -> bool:
        a = self.by_seg.get(seg)
        if a is None or a.kind == KIND_MODULE:
            return False
        del self.by_seg[seg]
        a.freed = True
        self.freed[seg] = a
        self.bytes_live -= a.size
        self.close_fd(a)
        a.array = None               # the mapping goes when no launch holds the array
        a.map = None
        return True

    def segments(self) -> dict:
        """{segment: array} of every live allocation (launch_segments)."""
        return {s: a.array for s, a in self.by_seg.items()}

    def names(self) -> dict:
        """{segment: name} of live and freed allocations (error messages)."""
        out = {s: a.name for s, a in self.freed.items()}
        out.update((s, a.name) for s, a in self.by_seg.items())
        return out

    @staticmethod
    def close_fd(a: Allocation) -> None:
        if a.fd >= 0:
            os.close(a.fd)
            a.fd = -1

    def close(self) -> None:
        for a in self.by_seg.values():
            self.close_fd(a)
