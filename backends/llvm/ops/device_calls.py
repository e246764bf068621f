"""Device calls that reach the host: ``vprintf`` and ``__assertfail``.

CUDA compiles ``printf`` in a kernel to ``vprintf(format, args)`` and a
failing ``assert`` to ``__assertfail(message, file, line, function,
charSize)`` (glibc-style code calls ``__assert_fail(assertion, file, line,
function)``); both are external functions of the PTX module (CUDA C++
Programming Guide, "Formatted Output" and "Assertion"). The generated
``run_warp`` (builtin.py) calls the native symbol ``ptxc_device_call``,
which is this module's ctypes callback:

    i32 ptxc_device_call(i32 kind, ptr L, ptr cta, ptr ws, ptr segs,
                         i32 lanes, ptr args, i32 nargs, ptr out)

``args`` holds ``nargs`` vectors of 32 i64 (argument k of lane l at
``args[k * 32 + l]``). For each lane of ``lanes`` in ascending order the
callback reads what the call needs from device memory through the worker's
segment table (``segs``: {base, size, lane stride, 0} per segment, with the
bounds checks of the generated code) and appends a :class:`Record` to the
launch's :class:`DeviceOutput` (found by the launch state ``L``). It returns
0, with each lane's return value in ``out[lane]``; or the bit of the first
lane whose format, argument buffer or string is not readable device memory,
with that address in ``out[lane]`` (the generated code then reports an
out-of-bounds access at the call).

Records are formatted later (printf_format.py). Their order is the one
docs/runtime.md documents: CTAs in linear order, and within a CTA the order
in which the executor issues the calls (a CTA runs on one worker thread),
lanes ascending within one call.
"""
from __future__ import annotations

import ctypes
import itertools
import struct
import threading
from dataclasses import dataclass, field

from ptxc.backends.llvm import callbacks
from ptxc.backends.llvm import layout as Lo

KIND_VPRINTF, KIND_ASSERTFAIL, KIND_ASSERT_FAIL = 0, 1, 2
KINDS = {"vprintf": KIND_VPRINTF, "__assertfail": KIND_ASSERTFAIL,
         "__assert_fail": KIND_ASSERT_FAIL}
STRING_LIMIT = 1 << 20          # longest device string read (bytes)
ARGTYPES = (ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
            ctypes.c_uint32, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p)  # returns i32


@dataclass
class Record:
    """One lane's call: a printf (format, argument bytes, strings) or a failed assertion."""
    cta: int
    seq: int
    lane: int
    kind: int
    ctaid: tuple
    tid: tuple
    fmt: bytes = b""
    buf: bytes = b""
    strings: dict = field(default_factory=dict)
    text: bytes = b""           # an assertion's line

    def render(self) -> bytes:
        if self.kind != KIND_VPRINTF:
            return self.text
        from ptxc.backends.llvm.ops import printf_format as pf
        pieces = pf.parse(self.fmt)
        return pf.render(pieces, pf.decode_args(pieces, self.buf), self.strings)


class DeviceOutput:
    """The printf records and failed assertions of one launch."""

    def __init__(self, shift: int):
        self.shift = shift
        self.records: list[Record] = []
        self._seq = itertools.count()
        self._lock = threading.Lock()

    def add(self, records: list) -> None:
        with self._lock:
            seq = next(self._seq)
            for r in records:
                r.seq = seq
            self.records.extend(records)

    def ordered(self, last_cta: int | None = None) -> list[Record]:
        """Records in the documented order; with ``last_cta`` (the CTA whose
        error ended the launch) only those of CTAs up to it, as if the CTAs
        had run one after the other and the error had stopped the launch."""
        rs = [r for r in self.records if last_cta is None or r.cta <= last_cta]
        return sorted(rs, key=lambda r: (r.cta, r.seq, r.lane))

    def printf(self, last_cta: int | None = None) -> list[str]:
        """The formatted records (bytes that are not UTF-8 as surrogate escapes)."""
        return [r.render().decode("utf-8", "surrogateescape") for r in self.ordered(last_cta)
                if r.kind == KIND_VPRINTF]

    def assertions(self, last_cta: int | None = None) -> list[str]:
        return [r.text.decode("utf-8", "replace") for r in self.ordered(last_cta)
                if r.kind != KIND_VPRINTF]


_sinks: dict[int, DeviceOutput] = {}


class active:
    """``with active(L address, output):`` the launch's calls go to ``output``."""

    def __init__(self, L: int, output: DeviceOutput):
        self.L, self.output = L, output

    def __enter__(self):
        _sinks[self.L] = self.output
        return self.output

    def __exit__(self, *exc):
        _sinks.pop(self.L, None)


class BadAddress(Exception):
    def __init__(self, addr: int):
        super().__init__(addr)
        self.addr = addr


class Memory:
    """Reads of one lane's view of device memory through a segment table."""

    def __init__(self, segs: int, nsegs: int, shift: int, lane: int):
        self.segs, self.nsegs, self.shift, self.lane = segs, nsegs, shift, lane

    def _where(self, addr: int) -> tuple[int, int, int]:
        """(host address, bytes readable from there) of a generic address."""
        seg, off = addr >> self.shift, addr & ((1 << self.shift) - 1)
        if seg == Lo.SEG_NULL or seg >= self.nsegs:
            raise BadAddress(addr)
        base, size, stride, _ = struct.unpack("<4q", ctypes.string_at(self.segs + Lo.SEG_ENTRY_BYTES * seg, 32))
        if off >= size:
            raise BadAddress(addr)
        return base + off + self.lane * stride, size - off

    def read(self, addr: int, n: int) -> bytes:
        if n == 0:
            return b""
        host, avail = self._where(addr)
        if n > avail:
            raise BadAddress(addr + avail)
        return ctypes.string_at(host, n)

    def cstring(self, addr: int) -> bytes:
        host, avail = self._where(addr)
        out, pos = b"", 0
        while pos < min(avail, STRING_LIMIT):
            chunk = ctypes.string_at(host + pos, min(4096, avail - pos))
            k = chunk.find(b"\0")
            if k >= 0:
                return out + chunk[:k]
            out, pos = out + chunk, pos + len(chunk)
        if pos >= avail:
            raise BadAddress(addr + avail)
        return out


def _call(kind, L, cta, ws, segs, lanes, args, nargs, out) -> int:
    output = _sinks.get(L)
    nsegs = struct.unpack("<i", ctypes.string_at(L + Lo.L_NSEGS, 4))[0]
    ctaid = struct.unpack("<3i", ctypes.string_at(cta + Lo.CTA_ID, 12))
    linear = callbacks.cta_linear(cta)
    tids = [struct.unpack("<32i", ctypes.string_at(ws + Lo.WS_TID + 128 * k, 128)) for k in range(3)]
    vals = struct.unpack(f"<{32 * nargs}Q", ctypes.string_at(args, 256 * nargs)) if nargs else ()
    shift = output.shift if output is not None else 32
    results, records = [0] * 32, []
    for lane in range(32):
        if not lanes >> lane & 1:
            continue
        mem = Memory(segs, nsegs, shift, lane)
        lane_args = [vals[k * 32 + lane] for k in range(nargs)]
        rec = Record(linear, 0, lane, kind, tuple(ctaid), tuple(t[lane] for t in tids))
        try:
            results[lane] = _one(kind, mem, lane_args, rec)
        except BadAddress as e:
            ctypes.memmove(out + 8 * lane, struct.pack("<Q", e.addr & (2**64 - 1)), 8)
            return 1 << lane
        records.append(rec)
    ctypes.memmove(out, struct.pack("<32q", *results), 256)
    if output is not None:
        output.add(records)
    return 0


def _one(kind: int, mem: Memory, args: list, rec: Record) -> int:
    if kind == KIND_VPRINTF:
        return _printf(mem, args, rec)
    message, file, line, function = args[:4]
    rec.text = assertion_line(mem.cstring(file), line & 0xFFFFFFFF, mem.cstring(function),
                              rec.ctaid, rec.tid, mem.cstring(message))
    return 0


def _printf(mem: Memory, args: list, rec: Record) -> int:
    from ptxc.backends.llvm.ops import printf_format as pf
    fmt_addr, buf_addr = (args + [0, 0])[:2]
    if fmt_addr == 0:
        return -1                           # CUDA: a null format string returns -1
    rec.fmt = mem.cstring(fmt_addr)
    pieces = pf.parse(rec.fmt)
    rec.buf = mem.read(buf_addr, pf.buffer_size(pieces))
    for p in pf.string_args(pieces, pf.decode_args(pieces, rec.buf)):
        if p not in rec.strings:
            rec.strings[p] = mem.cstring(p)
    return pf.count_args(pieces)


def assertion_line(file: bytes, line: int, function: bytes, ctaid, tid, message: bytes) -> bytes:
    """The line a GPU prints for a failed device assertion."""
    return (b"%s:%d: %s: block: [%d,%d,%d], thread: [%d,%d,%d] Assertion `%s` failed.\n"
            % (file, line, function, *ctaid, *tid, message))


_callback = callbacks.c_function(callbacks.guarded(_call, failed=1), ctypes.c_int32, *ARGTYPES)


def register_symbols(binding) -> None:
    """Make ``ptxc_device_call`` resolvable by the JIT (llvmlite.binding)."""
    callbacks.add_symbols(binding, {"ptxc_device_call": _callback})
