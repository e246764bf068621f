"""The device printf formatter (backends/llvm/ops/printf_format.py) against the C library.

The oracle is this machine's own ``snprintf`` (glibc), called through ctypes
with the same values: CUDA formats device printf output on the host with the
host C library, so ptxc must print what ``snprintf`` prints. The argument
buffer of each case is packed by the test with ``struct`` the way nvcc lays
it out (every argument aligned to its size; see the PTX of
tests/cuda_apps/device_printf.cu), independently of printf_format.layout.
"""
import ctypes
import ctypes.util
import struct

import pytest

from ptxc.backends.llvm.ops import printf_format as pf

libc = ctypes.CDLL(ctypes.util.find_library("c"))


def c_snprintf(fmt: bytes, *args) -> bytes:
    buf = ctypes.create_string_buffer(4096)
    n = libc.snprintf(buf, 4096, fmt, *args)
    assert n >= 0
    return buf.raw[:n]


def pack(args) -> bytes:
    """nvcc's argument buffer: each value aligned to its size."""
    out = b""
    for a in args:
        if isinstance(a, ctypes.c_double):
            raw = struct.pack("<d", a.value)
        elif isinstance(a, (ctypes.c_longlong, ctypes.c_ulonglong)):
            raw = struct.pack("<Q", a.value & (2**64 - 1))
        elif isinstance(a, ctypes.c_void_p):
            raw = struct.pack("<Q", a.value or 0)
        else:
            raw = struct.pack("<I", a.value & 0xFFFFFFFF)
        out += b"\0" * (-len(out) % len(raw)) + raw
    return out


I, LL, D, P = ctypes.c_int, ctypes.c_longlong, ctypes.c_double, ctypes.c_void_p

INT_CASES = [(f, v) for f in (b"%d", b"%i", b"%5d", b"%-5d|", b"%05d", b"%+d", b"% d", b"%.3d",
                              b"%8.3d", b"%-8.3d|", b"%.0d", b"%+.0d", b"%05.3d")
             for v in (0, 7, -7, 123456, -2147483648, 2147483647)]
UNSIGNED_CASES = [(f, v) for f in (b"%u", b"%x", b"%X", b"%o", b"%#x", b"%#X", b"%#o", b"%#.0o",
                                   b"%08x", b"%#08x", b"%-#8x|", b"%.5x", b"%#10.5o", b"%hx",
                                   b"%hhu", b"%hd", b"%hhd", b"%#.0x")
                  for v in (0, 1, 255, 0xABCDEF, 0xFFFFFFFF, 0x80000000, 40000)]
LONG_CASES = [(f, v) for f in (b"%ld", b"%lld", b"%llu", b"%llx", b"%#llX", b"%lo", b"%20lld",
                               b"%-20lld|", b"%+lld", b"%020lld")
              for v in (0, 1, -1, 2**63 - 1, -2**63, 10**15)]
FLOATS = (0.0, -0.0, 1.0, -1.5, 3.14159265358979, 1e-5, 123456789.125, 1e300, 2.5, 0.5,
          5e-324, 2.2250738585072014e-308, float("inf"), float("-inf"), float("nan"),
          1.0 / 3.0, 1e16, 0.1)
FLOAT_CASES = [(f, v) for f in (b"%f", b"%F", b"%e", b"%E", b"%g", b"%G", b"%a", b"%A",
                                b"%10.3f", b"%-10.2e|", b"%+.4g", b"% f", b"%012.4f", b"%#.0f",
                                b"%#g", b"%.0e", b"%.1a", b"%.3a", b"%.0a", b"%#.0a", b"%20a",
                                b"%010.2f", b"%.10g", b"%.17g", b"%5.1G", b"%.20a")
               for v in FLOATS]


@pytest.mark.parametrize("fmt,v", INT_CASES + UNSIGNED_CASES)
def test_ints(fmt, v):
    assert pf.format_record(fmt, pack([I(v)])) == c_snprintf(fmt, I(v))


@pytest.mark.parametrize("fmt,v", LONG_CASES)
def test_longs(fmt, v):
    assert pf.format_record(fmt, pack([LL(v)])) == c_snprintf(fmt, LL(v))


@pytest.mark.parametrize("fmt,v", FLOAT_CASES)
def test_floats(fmt, v):
    assert pf.format_record(fmt, pack([D(v)])) == c_snprintf(fmt, D(v))


@pytest.mark.parametrize("fmt,v", [(b"%c", 65), (b"%5c|", 97), (b"%-3c|", 122), (b"%c", 0x141)])
def test_chars(fmt, v):
    assert pf.format_record(fmt, pack([I(v)])) == c_snprintf(fmt, I(v))


@pytest.mark.parametrize("fmt", [b"%s", b"%10s|", b"%-10s|", b"%.3s", b"%8.2s|", b"%.0s|"])
def test_strings(fmt):
    text = b"hello world"
    addr = 0x500000040
    got = pf.format_record(fmt, pack([P(addr)]), {addr: text})
    assert got == c_snprintf(fmt, ctypes.c_char_p(text))


@pytest.mark.parametrize("fmt", [b"%s", b"%.3s|", b"%10s|"])
def test_null_string(fmt):
    assert pf.format_record(fmt, pack([P(0)])) == c_snprintf(fmt, ctypes.c_char_p(None))


@pytest.mark.parametrize("fmt,v", [(b"%p", 0x700001000), (b"%p", 0), (b"%20p|", 0x1234),
                                   (b"%-20p|", 0x1234), (b"%20p|", 0)])
def test_pointers(fmt, v):
    assert pf.format_record(fmt, pack([P(v)])) == c_snprintf(fmt, P(v))


def test_mixed_layout_and_star():
    """Alignment padding between a 4-byte and 8-byte argument; '*' width and
    precision take int arguments (a negative width means '-')."""
    fmt = b"a=%d b=%f c=%*d d=%-*.*f e=%lld %% f=%c|%s"
    args = [I(-3), D(2.75), I(6), I(42), I(-9), I(2), D(1.23456), LL(-2**40), I(ord("z")), P(0x600000000)]
    got = pf.format_record(fmt, pack(args), {0x600000000: b"str"})
    want = c_snprintf(fmt, *args[:-1], ctypes.c_char_p(b"str"))
    assert got == want
    assert pf.count_args(pf.parse(fmt)) == 10


def test_return_value_and_limit():
    """printf returns the number of arguments (CUDA); past 32 arguments a
    specifier is printed as written."""
    assert pf.count_args(pf.parse(b"no args %%\n")) == 0
    fmt = b"%d" * 33
    pieces = pf.parse(fmt)
    assert pf.count_args(pieces) == 32
    buf = b"".join(struct.pack("<I", k) for k in range(33))
    assert pf.format_record(fmt, buf) == b"".join(b"%d" % k for k in range(32)) + b"%d"


def test_layout():
    """offsets: int at 0, double at 8 (aligned), int at 16, long long at 24, pointer at 32."""
    assert pf.layout(pf.parse(b"%d %f %c %lld %s")) == [(0, "i4"), (8, "f8"), (16, "i4"), (24, "i8"), (32, "p8")]
    assert pf.buffer_size(pf.parse(b"%d %f %c %lld %s")) == 40
