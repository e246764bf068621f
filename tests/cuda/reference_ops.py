"""Inputs and numpy/Python reference results for intops.cu and fpops.cu.

These kernels are straight-line code (a few selp, no data-dependent branches except the
emulated bf16 rounding on sm_75), so they test the executor's arithmetic, not its counting.
Each `case_*()` returns (inputs, outputs, launch) where inputs/outputs map argument names
(parameter order = insertion order of `inputs` followed by the output names in kernel
order, see KERNELS) to numpy arrays, and launch = (grid, block).

References follow the PTX semantics of the instruction nvcc emitted (noted per slot; see
the .sm90.ptx files).  Exactly rounded results are computed with fractions.Fraction and an
explicit round-to-format helper, so there is no double rounding anywhere.  Results of
`.approx` instructions are not exact: TOLERANCES gives (rtol, atol) for those slots.
"""
from fractions import Fraction
import math

import numpy as np

N = 32  # one warp: block (32,1,1), grid (1,1,1) for every kernel here

# ---------------------------------------------------------------------------- helpers

def _round_to(q, mant_bits, emin, emax, mode):
    """Round the exact rational q to a binary format with `mant_bits` significand bits
    (including the hidden bit), minimum normal exponent `emin`, maximum exponent `emax`.
    mode: 'rn' (nearest even), 'rz', 'ru' (toward +inf), 'rd' (toward -inf).
    Returns a Fraction, or +-inf as a float."""
    if q == 0:
        return Fraction(0)
    sign = -1 if q < 0 else 1
    a = abs(q)
    e = math.floor(math.log2(a.numerator) - math.log2(a.denominator))
    # fix e so that 2**e <= a < 2**(e+1)
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    e = max(e, emin)                      # subnormals share the minimum exponent
    ulp = Fraction(2) ** (e - mant_bits + 1)
    k = a / ulp
    lo = math.floor(k)
    rem = k - lo
    if mode == 'rn':
        up = rem > Fraction(1, 2) or (rem == Fraction(1, 2) and lo % 2 == 1)
    elif mode == 'rz':
        up = False
    elif mode == 'ru':
        up = rem != 0 and sign > 0
    elif mode == 'rd':
        up = rem != 0 and sign < 0
    else:
        raise ValueError(mode)
    r = (lo + (1 if up else 0)) * ulp
    maxval = (2 - Fraction(2) ** (1 - mant_bits)) * Fraction(2) ** emax
    if r > maxval:
        if mode == 'rn' or (mode == 'ru' and sign > 0) or (mode == 'rd' and sign < 0):
            return sign * math.inf
        r = maxval
    return sign * r


_FORMATS = {  # significand bits (with hidden bit), min normal exponent, max exponent, numpy type
    'f64': (53, -1022, 1023, np.float64),
    'f32': (24, -126, 127, np.float32),
    'f16': (11, -14, 15, np.float16),
    'bf16': (8, -126, 127, np.float32),   # bf16 values are returned as the equal f32
}


def rnd(q, fmt='f32', mode='rn', zero_neg=False):
    """Round the exact rational q to `fmt`; a zero result is -0.0 when q < 0 (underflow)
    or when q == 0 and zero_neg (the IEEE sign rule, decided by the caller)."""
    bits, emin, emax, typ = _FORMATS[fmt]
    q = Fraction(q)
    r = _round_to(q, bits, emin, emax, mode)
    if r == 0:
        return typ(-0.0) if (q < 0 or (q == 0 and zero_neg)) else typ(0.0)
    return typ(float(r))


def f32(q, mode='rn'):
    return rnd(q, 'f32', mode)


def f16(q, mode='rn'):
    return rnd(q, 'f16', mode)


def bf16_as_f32(q, mode='rn'):
    """A bf16 value, returned as the f32 with the same value."""
    return rnd(q, 'bf16', mode)


def cvt(x, fmt, mode='rn'):
    """Convert the float x to `fmt` (cvt.rn.f16.f32, cvt.rn.bf16.f32, ...), keeping the
    sign of zero."""
    return rnd(F(x), fmt, mode, bool(np.signbit(x)))


def F(x):
    """Exact rational value of a finite numpy/Python float."""
    return Fraction(float(x))


def _neg(x):
    return bool(np.signbit(x))


def _sum_zero_neg(an, bn, mode):
    # IEEE 754: an exact zero sum is -0 if both addends are -0 (any mode) or, for
    # addends of opposite sign, only when rounding toward -inf.
    return an if an == bn else mode == 'rd'


def add_(x, y, fmt='f32', mode='rn'):
    return rnd(F(x) + F(y), fmt, mode, _sum_zero_neg(_neg(x), _neg(y), mode))


def sub_(x, y, fmt='f32', mode='rn'):
    return rnd(F(x) - F(y), fmt, mode, _sum_zero_neg(_neg(x), not _neg(y), mode))


def mul_(x, y, fmt='f32', mode='rn'):
    return rnd(F(x) * F(y), fmt, mode, _neg(x) != _neg(y))


def div_(x, y, fmt='f32', mode='rn'):
    return rnd(F(x) / F(y), fmt, mode, _neg(x) != _neg(y))


def fma_(x, y, z, fmt='f32', mode='rn'):
    return rnd(F(x) * F(y) + F(z), fmt, mode,
               _sum_zero_neg(_neg(x) != _neg(y), _neg(z), mode))


def _s32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


def _u32(v):
    return v & 0xFFFFFFFF


def _s64(v):
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >> 63 else v


def _trunc_div(x, y):
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


# ---------------------------------------------------------------------------- intops

INT_A = [0, 1, -1, 7, -7, 100, -100, 12345, -12345, 2147483647, -2147483647, 65536,
         -65536, 0x12345678, -0x12345678, 0x7F00FF00, 3, -3, 17, -17, 1000000, -1000000,
         255, 256, -256, 0x0F0F0F0F, 42, -42, 99999, 8, -8, 31]
INT_B = [5, -5, 3, 0, 2, -3, 7, -1, 1000, 2, -2, 65536, 7, 0x0000FFFF, 13, -1,
         -2147483648, 2147483647, 4, -4, 999, 31, 0, 32, -33, 0x12345678, 6, 6, -99999, 1,
         3, 30]


def case_intops():
    """intops.sm90.ptx / intops.sm75.ptx, kernel intops(a, b, out, uout, lout)."""
    a = np.array(INT_A, dtype=np.int32)
    b = np.array(INT_B, dtype=np.int32)
    out = np.zeros(24 * N, np.int32)
    uout = np.zeros(8 * N, np.uint32)
    lout = np.zeros(4 * N, np.int64)
    for i in range(N):
        x, y = int(a[i]), int(b[i])
        ux, uy = _u32(x), _u32(y)
        yd = 1 if y == 0 else y
        uyd = 1 if uy == 0 else uy
        o = [
            _s32(x + y),                              # 0 add.s32
            _s32(x - y),                              # 1 sub.s32
            _s32(x * y),                              # 2 mul.lo.s32
            _s32((x * y) >> 32),                      # 3 mul.hi.s32
            _s32(x * y + 7),                          # 4 mul.lo + add
            _s32(_trunc_div(x, yd)),                  # 5 div.s32 (truncates)
            _s32(x - _trunc_div(x, yd) * yd),         # 6 rem (sign of dividend)
            x >> 3,                                   # 7 shr.s32 (arithmetic)
            _s32(x << (y & 31)),                      # 8 shl.b32
            _s32(x & y),                              # 9
            _s32(x | y),                              # 10
            _s32(x ^ y),                              # 11
            _s32(~x),                                 # 12 not.b32
            _s32(-x),                                 # 13 neg.s32
            min(x, y),                                # 14 min.s32
            max(x, y),                                # 15 setp+selp
            abs(x),                                   # 16 abs.s32 (no INT_MIN in a)
            bin(ux).count('1'),                       # 17 popc.b32
            32 - ux.bit_length(),                     # 18 clz.b32
            (ux & -ux).bit_length(),                  # 19 __ffs: brev+bfind.shiftamt+1
            _s32(abs(x - y) + 5),                     # 20 sad.s32 (|x-y| mod 2^32, + 5)
            (x + y) >> 1,                             # 21 __hadd: floor((x+y)/2)
            int(x < y),                               # 22 setp+selp
            (ux >> 4) & 0xFF,                         # 23 shr.u32 + and
        ]
        out[24 * i:24 * i + 24] = o
        perm = [ux & 0xFF, uy & 0xFF, (ux >> 8) & 0xFF, (uy >> 8) & 0xFF]  # selector 0x5140
        u = [
            ux // uyd,                                # 0 div.u32
            ux % uyd,                                 # 1 rem.u32
            ux >> 5,                                  # 2 shr.u32
            (ux * uy) >> 32,                          # 3 mul.hi.u32
            int(format(ux, '032b')[::-1], 2),         # 4 brev.b32
            perm[0] | perm[1] << 8 | perm[2] << 16 | perm[3] << 24,  # 5 prmt.b32
            _u32((uy << 7) | (ux >> 25)),             # 6 shf.l.wrap.b32 (lo=x, hi=y, 7)
            min(ux, uy),                              # 7 min.u32
        ]
        uout[8 * i:8 * i + 8] = u
        lw = [
            x * y,                                    # 0 mul.wide.s32
            _s64(ux * uy),                            # 1 mul.wide.u32 (bits as s64)
            ((x << 20) * (y << 20)) >> 64,            # 2 mul.hi.s64
            _s64(x * 3000000000 + y),                 # 3 mul.lo.s64 + add.s64
        ]
        lout[4 * i:4 * i + 4] = lw
    return ({'a': a, 'b': b}, {'out': out, 'uout': uout, 'lout': lout}, ((1, 1, 1), (N, 1, 1)))


def case_intops_bits():
    """intops.sm90.ptx / intops.sm75.ptx, kernel intops_bits(a, b, bout) (inline-PTX bfe/bfi)."""
    a = np.array([_u32(v) for v in INT_A], dtype=np.uint32)
    b = np.array([_u32(v) for v in INT_B], dtype=np.uint32)
    bout = np.zeros(3 * N, np.uint32)
    for i in range(N):
        x, y = int(a[i]), int(b[i])
        pos, ln = i % 20, 1 + i % 12
        field = (x >> pos) & ((1 << ln) - 1)
        sfield = field - (1 << ln) if field >> (ln - 1) else field
        mask = ((1 << ln) - 1) << pos
        bout[3 * i:3 * i + 3] = [
            field,                                    # bfe.u32
            _u32(sfield),                             # bfe.s32 (sign-extended field)
            (x & ~mask & 0xFFFFFFFF) | ((y << pos) & mask),  # bfi.b32 (insert y into x)
        ]
    return ({'a': a, 'b': b}, {'bout': bout}, ((1, 1, 1), (N, 1, 1)))


# ---------------------------------------------------------------------------- fpops

FP_A = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.25, -3.75, 0.1, -0.1,
        7.0, -7.0, 10.5, -10.5, 33.3, -33.3, 1e-3, -1e-3, 12.75, -12.75, 39.5, -39.5,
        0.3333333, 5.5, -5.5, 2.0 ** -20, 17.0, 25.125]
FP_B = [3.0, 3.0, -2.0, 0.7, 0.25, 4.0, -1.5, 1.5, 9.0, 0.3, -6.5, 2.0, 1e-2, -7.0, 0.5,
        11.0, -0.125, 3.3, 1.7, -2.2, 100.0, 5.0, 1.0, -1.0, 0.9, -0.9, 3.0, -0.001,
        8.0, 1.1, 13.0, -2.5]


def _fp_inputs():
    return np.array(FP_A, dtype=np.float32), np.array(FP_B, dtype=np.float32)


def case_fpops_f32():
    """fpops.sm90.ptx / fpops.sm75.ptx, kernel fpops_f32(a, b, out, iout)."""
    a, b = _fp_inputs()
    out = np.zeros(20 * N, np.float32)
    iout = np.zeros(8 * N, np.int32)
    with np.errstate(all='ignore'):
        for i in range(N):
            x, y = a[i], b[i]
            X, Y = F(x), F(y)
            ax = np.float32(abs(x))
            o = [
                add_(x, y),                           # 0 add.f32
                sub_(x, y),                           # 1 sub.f32
                mul_(x, y),                           # 2 mul.f32
                fma_(x, y, np.float32(1.5)),          # 3 fma.rn.f32
                div_(x, y),                           # 4 div.rn.f32
                np.sqrt(ax),                          # 5 sqrt.rn.f32 (numpy: IEEE exact)
                np.float32(1 / math.sqrt(float(ax + np.float32(1)))),  # 6 rsqrt.approx (tol)
                np.float32(math.exp(float(x) * 0.25)),                 # 7 ex2.approx (tol)
                np.float32(math.log(float(ax + np.float32(1)))),       # 8 lg2.approx (tol)
                np.float32(math.sin(float(x))),       # 9 sin.approx (tol)
                np.float32(float(X / Y)),             # 10 div.approx (tol)
                np.rint(x),                           # 11 cvt.rni.f32.f32 (ties to even)
                np.trunc(x),                          # 12 cvt.rzi
                np.floor(x),                          # 13 cvt.rmi
                np.ceil(x),                           # 14 cvt.rpi
                np.fmin(x, y),                        # 15 min.f32
                np.fmax(x, y),                        # 16 max.f32
                -ax,                                  # 17 abs + neg
                div_(np.float32(1), y),               # 18 rcp.rn.f32
                np.float32(i * 0.5),                  # 19 cvt.rn.f32.s32 + mul
            ]
            out[20 * i:20 * i + 20] = o
            io = [
                int(np.trunc(x)),                     # 0 cvt.rzi.s32.f32
                int(np.rint(x)),                      # 1 cvt.rni.s32.f32
                int(np.ceil(x)),                      # 2 cvt.rpi.s32.f32
                int(np.floor(x)),                     # 3 cvt.rmi.s32.f32
                int(np.trunc(ax)),                    # 4 cvt.rzi.u32.f32
                int(x < y),                           # 5 setp.lt.f32
                int(np.array(x, np.float32).view(np.int32)),  # 6 mov.b32
                0,                                    # 7 isnan(x/y): no NaN for these inputs
            ]
            iout[8 * i:8 * i + 8] = io
    return ({'a': a, 'b': b}, {'out': out, 'iout': iout}, ((1, 1, 1), (N, 1, 1)))


def case_fpops_f64():
    """fpops.sm90.ptx / fpops.sm75.ptx, kernel fpops_f64(a, b, out); inputs are the f32
    inputs widened to f64."""
    a32, b32 = _fp_inputs()
    a, b = a32.astype(np.float64), b32.astype(np.float64)
    out = np.zeros(8 * N, np.float64)
    for i in range(N):
        x, y = a[i], b[i]
        out[8 * i:8 * i + 8] = [
            add_(x, y, 'f64'),                        # add.f64
            mul_(x, y, 'f64'),                        # mul.f64
            fma_(x, y, -2.0, 'f64'),                  # fma.rn.f64
            div_(x, y, 'f64'),                        # div.rn.f64
            math.sqrt(abs(x)),                        # sqrt.rn.f64 (IEEE exact)
            float(np.float32(x)),                     # cvt.rn.f32.f64 + cvt.f64.f32
            float(int(np.rint(x))),                   # cvt.rni.s32.f64 + cvt.rn.f64.s32 (+0.0)
            min(x, y) - max(x, y),                    # min/max/sub.f64
        ]
    return ({'a': a, 'b': b}, {'out': out}, ((1, 1, 1), (N, 1, 1)))


def case_fpops_half():
    """fpops.sm90.ptx / fpops.sm75.ptx, kernel fpops_half(a, b, out)."""
    a, b = _fp_inputs()
    out = np.zeros(8 * N, np.float32)
    for i in range(N):
        hx, hy = cvt(a[i], 'f16'), cvt(b[i], 'f16')         # cvt.rn.f16.f32
        bx, by = cvt(a[i], 'bf16'), cvt(b[i], 'bf16')       # cvt.rn.bf16.f32
        out[8 * i:8 * i + 8] = [
            np.float32(add_(hx, hy, 'f16')),          # add.f16
            np.float32(mul_(hx, hy, 'f16')),          # mul.f16
            np.float32(fma_(hx, hy, hx, 'f16')),      # fma.rn.f16
            np.float32(mul_(hx, hx, 'f16')),          # mul.f16x2, low half
            np.float32(mul_(hy, hy, 'f16')),          # mul.f16x2, high half
            add_(bx, by, 'bf16'),                     # add.bf16 (sm_90) / emulated (sm_75)
            mul_(bx, by, 'bf16'),                     # mul.bf16
            np.float32(hx),                           # cvt.f32.f16
        ]
    return ({'a': a, 'b': b}, {'out': out}, ((1, 1, 1), (N, 1, 1)))


def case_fpops_round():
    """fpops.sm90.ptx / fpops.sm75.ptx, kernel fpops_round(a, b, out)."""
    a, b = _fp_inputs()
    out = np.zeros(8 * N, np.float32)
    c01 = np.float32(0.1)                             # the f32 constant 0f3DCCCCCD
    for i in range(N):
        x, y, X = a[i], b[i], F(a[i])
        v = i * 16777217 - 5
        out[8 * i:8 * i + 8] = [
            add_(x, y, 'f32', 'rz'),                  # add.rz.f32
            add_(x, y, 'f32', 'ru'),                  # add.rp.f32
            mul_(x, y, 'f32', 'rd'),                  # mul.rm.f32
            fma_(x, y, c01, 'f32', 'rz'),             # fma.rz.f32
            div_(x, y, 'f32', 'ru'),                  # div.rp.f32
            _sqrt_rd_f32(abs(F(y))),                  # sqrt.rm.f32
            np.float32(0.0 if X <= 0 else float(min(X, 1))),  # cvt.sat.f32.f32 (compare by value: the
                                                      # sign of a zero result is not checked)
            f32(_s32(v), 'rz'),                       # cvt.rz.f32.s32 of i*16777217-5 (wraps)
        ]
    return ({'a': a, 'b': b}, {'out': out}, ((1, 1, 1), (N, 1, 1)))


def _sqrt_rd_f32(q):
    """The largest f32 s with s*s <= q (sqrt rounded toward -inf), q >= 0 rational."""
    s = np.float32(math.sqrt(float(q)))
    while F(s) * F(s) > q:
        s = np.nextafter(s, np.float32(0))
    while True:
        n = np.nextafter(s, np.float32(np.inf))
        if F(n) * F(n) <= q:
            s = n
        else:
            return s


# slots of .approx instructions: (kernel, output, slot, per-thread stride) -> (rtol, atol)
TOLERANCES = {
    ('fpops_f32', 'out', 6, 20): (2e-6, 0.0),    # rsqrt.approx.f32: rel err 2^-22.9
    ('fpops_f32', 'out', 7, 20): (2e-5, 0.0),    # __expf: ex2.approx after mul by log2(e)
    ('fpops_f32', 'out', 8, 20): (2e-6, 2e-6),   # __logf: lg2.approx then mul by ln 2
    ('fpops_f32', 'out', 9, 20): (0.0, 2e-6),    # sin.approx: abs err 2^-20.5 (|x| <= 100 pi)
    ('fpops_f32', 'out', 10, 20): (1e-6, 0.0),   # div.approx.f32: 2 ulp
}

# kernel -> (case function, parameter names in order)
KERNELS = {
    'intops': (case_intops, ['a', 'b', 'out', 'uout', 'lout']),
    'intops_bits': (case_intops_bits, ['a', 'b', 'bout']),
    'fpops_f32': (case_fpops_f32, ['a', 'b', 'out', 'iout']),
    'fpops_f64': (case_fpops_f64, ['a', 'b', 'out']),
    'fpops_half': (case_fpops_half, ['a', 'b', 'out']),
    'fpops_round': (case_fpops_round, ['a', 'b', 'out']),
}
PTX_FILES = {
    'intops': ['intops.sm90.ptx', 'intops.sm75.ptx'],
    'intops_bits': ['intops.sm90.ptx', 'intops.sm75.ptx'],
    'fpops_f32': ['fpops.sm90.ptx', 'fpops.sm75.ptx'],
    'fpops_f64': ['fpops.sm90.ptx', 'fpops.sm75.ptx'],
    'fpops_half': ['fpops.sm90.ptx', 'fpops.sm75.ptx'],
    'fpops_round': ['fpops.sm90.ptx', 'fpops.sm75.ptx'],
}
