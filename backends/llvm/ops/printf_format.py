"""Device ``printf`` formatting: CUDA's ``vprintf(format, args)`` in Python.

CUDA compiles ``printf(fmt, ...)`` in a kernel to ``vprintf(fmt, buf)``
where ``buf`` is a struct holding the arguments after the C default
promotions, each aligned to its own size: ``int`` (and ``char``/``short``,
``%hd``/``%hhd``) 4 bytes, ``long``/``long long`` (``%ld``/``%lld``) 8,
``float`` promoted to ``double`` 8, pointers (``%s``, ``%p``) 8. The CUDA C++
Programming Guide ("Formatted Output") says the final formatting happens on
the host with the host C library's rules, accepts ``%[flags][width]
[.precision][size]type`` with flags ``#' '0+-``, width ``*`` or digits,
precision digits, sizes ``h hh l ll``, types ``cdiouxXpeEfgGaAs`` (and
``%%``), at most 32 arguments (a specifier past the 32nd is printed as it
is), and that ``printf`` returns the number of arguments parsed (0 when there
are none, -1 for a null format string).

This module does the host side with glibc's rules (the C library ptxc runs
under; tests/test_printf_format.py compares it with the C library's
``snprintf``): :func:`parse` splits a format into literal bytes and
:class:`Spec` conversions, :func:`layout` gives each argument's (offset,
size) in the argument buffer, :func:`render` formats a record from the
argument values. Everything is bytes: a device string may hold any byte.
"""
from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass

MAX_ARGS = 32
_SPEC = re.compile(rb"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d*))?(hh|h|ll|l|L|j|z|t)?(.?)", re.S)
INT_CONVS = b"diouxXc"
FLOAT_CONVS = b"fFeEgGaA"
CONVS = INT_CONVS + FLOAT_CONVS + b"sp"


@dataclass
class Spec:
    """One conversion ``%[flags][width][.precision][length]conv``."""
    text: bytes             # as written (printed as is when not converted)
    flags: bytes
    width: int | str | None   # '*' = taken from an int argument
    precision: int | str | None
    length: bytes
    conv: str

    def arg_kinds(self) -> list[str]:
        """What each argument this conversion takes is, in order: 'i4' (an
        int: '*' widths too), 'i8' (long, long long), 'f8' (a double), 'p8'
        (a pointer)."""
        if self.conv == "%" or self.conv not in CONVS.decode():
            return []
        kinds = ["i4" for x in (self.width, self.precision) if x == "*"]
        if self.conv in "sp":
            return kinds + ["p8"]
        if self.conv in FLOAT_CONVS.decode():
            return kinds + ["f8"]
        return kinds + ["i8" if self.length in (b"l", b"ll", b"j", b"z", b"t", b"L") else "i4"]


def parse(fmt: bytes) -> list:
    """Literal ``bytes`` pieces and :class:`Spec` conversions, in order."""
    out, pos = [], 0
    while True:
        k = fmt.find(b"%", pos)
        if k < 0:
            if pos < len(fmt):
                out.append(fmt[pos:])
            return out
        if k > pos:
            out.append(fmt[pos:k])
        m = _SPEC.match(fmt, k)
        flags, width, prec, length, conv = m.groups()
        out.append(Spec(m.group(0), flags, _num(width), _num(prec, True) if prec is not None
                        else None, length or b"", conv.decode("latin-1")))
        pos = m.end()


def _num(text, precision: bool = False):
    if text is None:
        return None
    if text == b"*":
        return "*"
    return int(text) if text else 0


def converted(pieces: list) -> list:
    """The Specs that take arguments and are converted (the first 32 arguments)."""
    out, n = [], 0
    for p in pieces:
        if isinstance(p, Spec) and p.arg_kinds():
            n += len(p.arg_kinds())
            if n > MAX_ARGS:
                break
            out.append(p)
    return out


def layout(pieces: list) -> list[tuple[int, str]]:
    """(offset, kind) of every argument in the buffer, each aligned to its size."""
    out, off = [], 0
    for spec in converted(pieces):
        for kind in spec.arg_kinds():
            size = int(kind[1])
            off = (off + size - 1) // size * size
            out.append((off, kind))
            off += size
    return out


def buffer_size(pieces: list) -> int:
    """Bytes of the argument buffer the conversions read."""
    return max((off + int(kind[1]) for off, kind in layout(pieces)), default=0)


def decode_args(pieces: list, buf: bytes) -> list:
    """The argument values (ints unsigned, doubles as floats) from ``buf``."""
    values = []
    for off, kind in layout(pieces):
        raw = buf[off:off + int(kind[1])].ljust(int(kind[1]), b"\0")
        values.append(struct.unpack("<d", raw)[0] if kind == "f8" else int.from_bytes(raw, "little"))
    return values


def string_args(pieces: list, values: list) -> list[int]:
    """The pointer values of the ``%s`` arguments (their bytes are read at the call)."""
    out, it = [], iter(values)
    for spec in converted(pieces):
        for kind in spec.arg_kinds():
            v = next(it)
            if spec.conv == "s" and kind == "p8" and v:
                out.append(v)
    return out


def render(pieces: list, values: list, strings: dict | None = None) -> bytes:
    """The formatted record. ``values`` from decode_args; ``strings`` maps
    the pointer value of each ``%s`` argument to its bytes (None: not
    readable, printed as glibc prints a null pointer)."""
    strings = strings or {}
    out, it, live = [], iter(values), {id(s) for s in converted(pieces)}
    for p in pieces:
        if isinstance(p, bytes):
            out.append(p)
        elif p.conv == "%" and not p.flags and p.width is None and p.precision is None:
            out.append(b"%")
        elif id(p) not in live:
            out.append(p.text)
        else:
            width = _signed32(next(it)) if p.width == "*" else p.width
            prec = _signed32(next(it)) if p.precision == "*" else p.precision
            flags = p.flags
            if width is not None and width < 0:          # C: a negative '*' width is '-' flag
                flags, width = flags + b"-", -width
            if prec is not None and prec < 0:
                prec = None
            out.append(convert(p.conv, p.length, flags, width, prec, next(it), strings))
    return b"".join(out)


def _signed32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


def convert(conv: str, length: bytes, flags: bytes, width, prec, value, strings) -> bytes:
    if conv in "fFeEgGaA":
        body, sign = float_body(conv, flags, prec, value)
        return pad(sign, b"", body, flags, width, numeric=math.isfinite(value))
    if conv == "s":
        s = strings.get(value) if value else None
        if s is None:
            s = b"(null)" if prec is None or prec >= 6 else b""
        return pad(b"", b"", s[:prec] if prec is not None else s, flags, width, numeric=False)
    if conv == "p":
        if value == 0:
            return pad(b"", b"", b"(nil)", flags, width, numeric=False)
        return int_conv("x", b"#" + flags, width, prec, value)
    if conv == "c":
        return pad(b"", b"", bytes([value & 0xFF]), flags, width, numeric=False)
    return int_conv(conv, flags, width, prec, cast_int(conv, length, value))


def cast_int(conv: str, length: bytes, value: int) -> int:
    bits = {b"hh": 8, b"h": 16, b"l": 64, b"ll": 64, b"j": 64, b"z": 64, b"t": 64, b"L": 64}.get(length, 32)
    value &= (1 << bits) - 1
    if conv in "di" and value >> (bits - 1):
        value -= 1 << bits
    return value


def int_conv(conv: str, flags: bytes, width, prec, value: int) -> bytes:
    sign = b"-" if value < 0 else b"+" if b"+" in flags and conv in "di" else \
        b" " if b" " in flags and conv in "di" else b""
    mag = abs(value)
    digits = {"o": "%o", "x": "%x", "X": "%X"}.get(conv, "%d") % mag
    digits = digits.encode()
    if prec is not None:
        digits = b"" if prec == 0 and mag == 0 else digits.rjust(prec, b"0")
    prefix = b""
    if b"#" in flags:
        if conv == "o" and not digits.startswith(b"0"):
            digits = b"0" + digits
        elif conv in "xX" and mag != 0:
            prefix = b"0x" if conv == "x" else b"0X"
    return pad(sign, prefix, digits, flags, width, numeric=prec is None)


def float_body(conv: str, flags: bytes, prec, value: float) -> tuple[bytes, bytes]:
    """(digits without sign, sign) of a floating-point conversion."""
    neg = math.copysign(1.0, value) < 0
    sign = b"-" if neg else b"+" if b"+" in flags else b" " if b" " in flags else b""
    mag = abs(value)
    upper = conv.isupper()
    if math.isnan(value) or math.isinf(value):
        body = b"nan" if math.isnan(value) else b"inf"
        return (body.upper() if upper else body), sign
    if conv in "aA":
        body = hex_float(mag, prec, b"#" in flags)
        return (body.upper() if upper else body), sign
    spec = "%" + ("#" if b"#" in flags else "") + ("" if prec is None else f".{prec}") + conv
    return (spec % mag).encode(), sign


def hex_float(x: float, prec, alt: bool) -> bytes:
    """glibc's %a of a non-negative finite double: 0x1.hhhp+e (subnormals 0x0.hhhp-1022)."""
    if x == 0:
        mant, exp, lead = 0, 0, 0
    else:
        bits = struct.unpack("<Q", struct.pack("<d", x))[0]
        e, mant = bits >> 52, bits & ((1 << 52) - 1)
        lead, exp = (1, e - 1023) if e else (0, -1022)
    digits = 13
    if prec is not None and prec < digits:
        drop = 4 * (digits - prec)
        full = (lead << 52) | mant
        q, r = divmod(full, 1 << drop)
        half = 1 << (drop - 1)
        if r > half or (r == half and q & 1):
            q += 1
        lead, mant, digits = q >> (4 * prec), q & ((1 << (4 * prec)) - 1), prec
    hexd = f"{mant:0{digits}x}" if digits else ""
    if prec is None:
        hexd = hexd.rstrip("0")
    elif prec > digits:
        hexd = hexd.ljust(prec, "0")
    point = "." if hexd or alt else ""
    return f"0x{lead}{point}{hexd}p{exp:+d}".encode()


def pad(sign: bytes, prefix: bytes, body: bytes, flags: bytes, width, numeric: bool) -> bytes:
    """Apply the width: left-justify ('-'), zero-pad ('0' on numbers), or spaces."""
    text = sign + prefix + body
    if width is None or len(text) >= width:
        return text
    fill = width - len(text)
    if b"-" in flags:
        return text + b" " * fill
    if b"0" in flags and numeric:
        return sign + prefix + b"0" * fill + body
    return b" " * fill + text


def count_args(pieces: list) -> int:
    """printf's return value: the number of arguments parsed (at most 32)."""
    return sum(len(s.arg_kinds()) for s in converted(pieces))


def format_record(fmt: bytes, buf: bytes, strings: dict | None = None) -> bytes:
    """Format one vprintf call: the format bytes and its argument buffer."""
    pieces = parse(fmt)
    return render(pieces, decode_args(pieces, buf), strings)
