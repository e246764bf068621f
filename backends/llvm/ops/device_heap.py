"""The device heap: what device-side ``malloc``/``free`` (and C++ ``new``/
``delete``, which nvcc lowers to them) allocate from.

CUDA keeps one heap per context for the life of the application (CUDA C++
Programming Guide, "Dynamic Global Memory Allocation and Operations"): memory
malloc'd by one kernel may be used and freed by a later one, and a full heap
makes malloc return NULL. ptxc's heap is one segment of the launch's flat
address space (layout.py), so heap pointers are ordinary global addresses,
bounds-checked per segment like any buffer; under memcheck each access is
also bounded by its malloc block's requested bytes (``owner`` and ``ends``,
instruments/memcheck_heap.py). The allocator is first fit over
a sorted free list, in 16-byte units (malloc's alignment guarantee), with
adjacent free blocks merged. A heap made for memcheck keeps ``redzone``
free bytes (16) after each block, so that an overrun of a block whose size
is a multiple of 16 does not land in the next block (compute-sanitizer's
``--padding`` does the same for cudaMalloc).

The generated code calls ``ptxc_heap_malloc(sizes, mask, out)`` and
``ptxc_heap_free(addrs, mask) -> bad lanes`` once per warp-level call, for
the executing lanes in ascending lane order (ctypes callbacks into the heap
that ``active`` installed). Kernels that call malloc or free run their CTAs
in linear order on one worker (as kernels with global atomics do), so every
run hands out the same addresses; freeing an address malloc did not return
(or freeing twice) is a run-time error of the freeing thread.
"""
from __future__ import annotations

import bisect
import ctypes
import threading
from contextlib import contextmanager

import numpy as np

from ptxc.backends.llvm import callbacks

ALIGN = 16
DEFAULT_BYTES = 8 << 20          # cudaLimitMallocHeapSize's default: 8 MiB


def heap_size_for(requested: int) -> int:
    """The heap a cudaLimitMallocHeapSize request gets: at least ``requested``
    bytes ("the granted heap size will be at least size bytes", CUDA C++
    Programming Guide, "Heap Memory Allocation"), rounded up to malloc's
    16-byte unit, and at least one unit."""
    return max(ALIGN, -(-requested // ALIGN) * ALIGN)

_lock = threading.RLock()
_active: "DeviceHeap | None" = None


class DeviceHeap:
    """A heap of ``array.nbytes`` bytes living in segment ``seg``."""

    def __init__(self, seg: int, array: np.ndarray, shift: int = 32, redzone: int = 0):
        self.seg, self.array, self.shift = seg, array, shift
        self.redzone = -(-redzone // ALIGN) * ALIGN     # free bytes kept after each block (memcheck)
        size = array.nbytes // ALIGN * ALIGN
        self.free_starts, self.free_sizes = [0], [size]     # sorted by start
        self.used: dict[int, int] = {}                       # start -> size
        self.requested: dict[int, int] = {}                  # start -> bytes malloc was asked for
        # the block map memcheck bounds heap accesses by (instruments/memcheck_heap.py):
        # per 16-byte granule 1 + its block's first granule (0: free), and per
        # block's first granule the offset its requested bytes end at (zeroed
        # memory: pages are touched only where blocks are)
        self.owner = np.zeros(size // ALIGN + 1, np.int32)
        self.ends = np.zeros(size // ALIGN + 1, np.int64)

    @property
    def base(self) -> int:
        return self.seg << self.shift

    def malloc(self, nbytes: int) -> int:
        """The address of ``nbytes`` fresh bytes, or 0 (NULL) if none fit."""
        need = max(ALIGN, -(-nbytes // ALIGN) * ALIGN) + self.redzone
        for i, size in enumerate(self.free_sizes):
            if size >= need:
                start = self.free_starts[i]
                if size == need:
                    del self.free_starts[i], self.free_sizes[i]
                else:
                    self.free_starts[i], self.free_sizes[i] = start + need, size - need
                self.used[start] = need
                self.requested[start] = nbytes
                g = start // ALIGN
                self.owner[g:g + (need - self.redzone) // ALIGN] = g + 1
                self.ends[g] = start + nbytes
                return self.base + start
        return 0

    def free(self, addr: int) -> bool:
        """Release what malloc returned at ``addr`` (0: nothing); False for
        any other address."""
        if addr == 0:
            return True
        start = addr - self.base
        size = self.used.pop(start, None)
        if size is None:
            return False
        self.requested.pop(start, None)
        self.owner[start // ALIGN:(start + size) // ALIGN] = 0
        i = bisect.bisect(self.free_starts, start)
        self.free_starts.insert(i, start)
        self.free_sizes.insert(i, size)
        self._merge(i)
        if i > 0:
            self._merge(i - 1)
        return True

    def _merge(self, i: int) -> None:
        """Join free block i with block i + 1 when they touch."""
        if i + 1 < len(self.free_starts) and \
                self.free_starts[i] + self.free_sizes[i] == self.free_starts[i + 1]:
            self.free_sizes[i] += self.free_sizes[i + 1]
            del self.free_starts[i + 1], self.free_sizes[i + 1]

    def bytes_in_use(self) -> int:
        return sum(self.used.values())

    def describe(self, off: int, nbytes: int = 1) -> str:
        """Where heap offset ``off`` lies relative to the malloc blocks, as
        memcheck names a cudaMalloc allocation: 'right after the end of a
        device malloc block (20 bytes at 0x...)', '4 bytes before ...', or
        'in free device-heap memory'."""
        def block(start):
            return f"a device malloc block ({self.requested.get(start, self.used[start])} bytes " \
                   f"at 0x{self.base + start:x})"
        best = None
        for start in self.used:
            end = start + self.requested.get(start, self.used[start])
            if start <= off < end:
                return f"inside {block(start)} at byte {off - start}, running past its end"
            d = start - off if off < start else off - end
            if best is None or d < best[0]:
                best = (d, start, off < start)
        if best is None or best[0] >= ALIGN and self.owner[min(off // ALIGN, len(self.owner) - 1)] == 0:
            return "in free device-heap memory (no malloc block)"
        d, start, before = best
        if before:
            return f"{d} bytes before {block(start)}"
        return f"right after the end of {block(start)}" if d == 0 else f"{d} bytes after the end of {block(start)}"


def fresh(segments: dict, shift: int, nbytes: int = DEFAULT_BYTES, redzone: int = 0) -> DeviceHeap:
    """A new heap in the first segment after ``segments``' (a standalone
    launch: its heap lives as long as the launch)."""
    from ptxc.backends.llvm.layout import spare_segment
    return DeviceHeap(spare_segment(segments), np.zeros(nbytes, np.uint8), shift, redzone)


@contextmanager
def active(heap: DeviceHeap):
    """Route the generated code's malloc/free calls to ``heap`` while a
    launch runs (one heap-using launch at a time)."""
    global _active
    with _lock:
        _active = heap
        try:
            yield heap
        finally:
            _active = None


def _malloc(sizes_p, mask, out_p) -> None:
    sizes = (ctypes.c_uint64 * 32).from_address(sizes_p)
    out = (ctypes.c_uint64 * 32).from_address(out_p)
    for lane in range(32):
        if mask >> lane & 1:
            out[lane] = _active.malloc(sizes[lane]) if _active is not None else 0


def _free(addrs_p, mask) -> int:
    addrs = (ctypes.c_uint64 * 32).from_address(addrs_p)
    bad = 0
    for lane in range(32):
        if mask >> lane & 1 and (_active is None or not _active.free(addrs[lane])):
            bad |= 1 << lane
    return bad


_SYMBOLS = {
    "ptxc_heap_malloc": callbacks.c_function(_malloc, None, ctypes.c_void_p, ctypes.c_uint32,
                                             ctypes.c_void_p),
    "ptxc_heap_free": callbacks.c_function(_free, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_uint32),
}


def register_symbols(binding) -> None:
    """Make the callbacks known to LLVM's symbol resolution (once)."""
    callbacks.add_symbols(binding, _SYMBOLS)
