"""Tensor-core instructions (backends/llvm/ops/mma.py, ldmatrix.py): mma.sync, wmma, ldmatrix.

Kernels: tests/cuda/mma_sync.cu (inline-PTX mma.sync and ldmatrix; fragments
gathered with the PTX ISA's per-lane formulas or loaded with ldmatrix) and
tests/cuda/wmma.cu (the nvcuda::wmma API), both
``nvcc -ptx -arch=sm_90 -O3 X.cu -o X.sm90.ptx`` (tests/cuda/README.md).

Expected values come from numpy (independent of ptxc): D = A @ B + C in f64
(or exact int64). Float results are compared with the error bound of the
documented evaluation (docs/executor.md, "Tensor cores"): K fused
multiply-adds with exact products, each rounding the sum once, so
|D - exact| <= K * u * (|A| @ |B| + |C|) with u the unit roundoff of the
accumulator (2^-24 for f32, 2^-53 for f64), plus half an ulp of an f16
result. Integer results are exact. Every launch also runs in hybrid mode,
whose counters must equal the full run's.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxc

HERE = Path(__file__).parent / "cuda"
U32, U64, U16 = 2.0 ** -24, 2.0 ** -53, 2.0 ** -11


@pytest.fixture(scope="module")
def mma_mod():
    return ptxc.load(HERE / "mma_sync.sm90.ptx")


@pytest.fixture(scope="module")
def wmma_mod():
    return ptxc.load(HERE / "wmma.sm90.ptx")


def launch(module, kernel, args, grid=1, block=32):
    """Full run (outputs in ``args``), then a hybrid run on copies: same counters."""
    full = ptxc.launch(module, kernel, grid, block, args, mode="full")
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    hybrid = ptxc.launch(module, kernel, grid, block, copies, mode="hybrid")
    assert hybrid.counters() == full.counters()
    return full


def excess(d, a, b, c, u, out_ulp=0.0):
    """Largest |d - (a @ b + c)| beyond K u (|a| @ |b| + |c|) (+ out_ulp |exact|)."""
    a, b, c = (np.asarray(x, np.float64) for x in (a, b, c))
    exact = a @ b + c
    bound = a.shape[1] * u * (np.abs(a) @ np.abs(b) + np.abs(c)) + out_ulp * np.abs(exact)
    return (np.abs(np.asarray(d, np.float64) - exact) - bound).max()


def check_float(d, a, b, c, u, out_ulp=0.0):
    assert excess(d, a, b, c, u, out_ulp) <= 0


def bf16(x):
    """bf16 bit patterns of x (round to nearest even) and their values."""
    u = np.asarray(x, np.float32).view(np.uint32)
    bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return bits, (bits.astype(np.uint32) << 16).view(np.float32)


def tf32_rna(x):
    """cvt.rna.tf32.f32: 10 mantissa bits, ties away from zero."""
    u = np.asarray(x, np.float32).view(np.uint32)
    return ((u + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)


def rng(seed):
    return np.random.default_rng(seed)


# ------------------------------------------------------------ mma.sync
def test_mma_f16_f32_with_ldmatrix(mma_mod):
    r = rng(1)
    a = r.standard_normal((16, 16)).astype(np.float16)
    b = r.standard_normal((16, 8)).astype(np.float16)
    c = r.standard_normal((16, 8)).astype(np.float32)
    d = np.zeros((16, 8), np.float32)
    prof = launch(mma_mod, "mma_f16_f32", [a, b, c, d])
    check_float(d, a, b, c, U32)
    assert prof.flop_count_sp == 0 and prof.flop_count_hp == 0   # tensor ops: not FLOPs (nvprof)


def test_mma_f16_f16_with_plain_ldmatrix(mma_mod):
    r = rng(2)
    a = r.standard_normal((16, 16)).astype(np.float16)
    b = r.standard_normal((16, 8)).astype(np.float16)
    c = r.standard_normal((16, 8)).astype(np.float16)
    d = np.zeros((16, 8), np.float16)
    launch(mma_mod, "mma_f16_f16", [a, np.ascontiguousarray(b.T), c, d])
    check_float(d, a, b, c, U32, U16)


def test_mma_bf16(mma_mod):
    r = rng(3)
    abits, a = bf16(r.standard_normal((16, 16)))
    bbits, b = bf16(r.standard_normal((16, 8)))
    c = r.standard_normal((16, 8)).astype(np.float32)
    d = np.zeros((16, 8), np.float32)
    launch(mma_mod, "mma_bf16", [abits, bbits, c, d])
    check_float(d, a, b, c, U32)


def test_mma_tf32(mma_mod):
    r = rng(4)
    a = r.standard_normal((16, 8)).astype(np.float32)
    b = r.standard_normal((8, 8)).astype(np.float32)
    c = r.standard_normal((16, 8)).astype(np.float32)
    d = np.zeros((16, 8), np.float32)
    launch(mma_mod, "mma_tf32", [a, b, c, d])
    check_float(d, tf32_rna(a), tf32_rna(b), c, U32)


def test_mma_s8_exact(mma_mod):
    r = rng(5)
    a = r.integers(-128, 128, (16, 32)).astype(np.int8)
    b = r.integers(-128, 128, (32, 8)).astype(np.int8)
    c = r.integers(-10 ** 6, 10 ** 6, (16, 8)).astype(np.int32)
    d = np.zeros((16, 8), np.int32)
    launch(mma_mod, "mma_s8", [a, b, c, d, 0])
    assert (d == a.astype(np.int64) @ b + c).all()


@pytest.mark.parametrize("sat", [0, 1])
def test_mma_s8_overflow_wraps_or_saturates(mma_mod, sat):
    # A = B = all -128 (products 16384, 32 per dot: 2^19); C near the s32 limits,
    # so every D overflows: upwards for C = 2^31 - 100, not at all for C = -2^31.
    a = np.full((16, 32), -128, np.int8)
    b = np.full((32, 8), -128, np.int8)
    c = np.where(np.arange(128).reshape(16, 8) % 2 == 0, 2 ** 31 - 100, -2 ** 31).astype(np.int32)
    d = np.zeros((16, 8), np.int32)
    launch(mma_mod, "mma_s8", [a, b, c, d, sat])
    exact = c.astype(np.int64) + 32 * 16384
    want = np.clip(exact, -2 ** 31, 2 ** 31 - 1) if sat else (exact + 2 ** 31) % 2 ** 32 - 2 ** 31
    assert (d == want).all()


def test_mma_f64(mma_mod):
    r = rng(6)
    a, b, c = r.standard_normal((8, 4)), r.standard_normal((4, 8)), r.standard_normal((8, 8))
    d = np.zeros((8, 8))
    prof = launch(mma_mod, "mma_f64", [a, b, c, d])
    check_float(d, a, b, c, U64)
    assert prof.flop_count_dp == 0


@pytest.mark.parametrize("kernel,t", [("mma_k8_f16", "f16"), ("mma_k8_bf16", "bf16")])
def test_mma_m16n8k8_16bit(mma_mod, kernel, t):
    r = rng(23)
    if t == "f16":
        av = r.standard_normal((16, 8)).astype(np.float16)
        bv = r.standard_normal((8, 8)).astype(np.float16)
        a, b = av.view(np.uint16), bv.view(np.uint16)
    else:
        (a, av), (b, bv) = bf16(r.standard_normal((16, 8))), bf16(r.standard_normal((8, 8)))
    c = r.standard_normal((16, 8)).astype(np.float32)
    d = np.zeros((16, 8), np.float32)
    launch(mma_mod, kernel, [a, b, c, d])
    check_float(d, av, bv, c, U32)


def test_mma_m16n8k4_tf32(mma_mod):
    r = rng(24)
    a = r.standard_normal((16, 4)).astype(np.float32)
    b = r.standard_normal((4, 8)).astype(np.float32)
    c = r.standard_normal((16, 8)).astype(np.float32)
    d = np.zeros((16, 8), np.float32)
    launch(mma_mod, "mma_k4_tf32", [a, b, c, d])
    check_float(d, tf32_rna(a), tf32_rna(b), c, U32)


def test_mma_m16n8k16_u8_times_s8(mma_mod):
    r = rng(25)
    a = r.integers(0, 256, (16, 16)).astype(np.uint8)
    b = r.integers(-128, 128, (16, 8)).astype(np.int8)
    c = r.integers(-10 ** 6, 10 ** 6, (16, 8)).astype(np.int32)
    d = np.zeros((16, 8), np.int32)
    launch(mma_mod, "mma_k16_u8s8", [a, b, c, d])
    assert (d == a.astype(np.int64) @ b.astype(np.int64) + c).all()


def ldmatrix_model(m, num, trans):
    """PTX ISA ldmatrix: matrix i = rows 8i..8i+7 (row r at lane 8i+r's address);
    lane l receives row l/4, elements 2(l%4) and 2(l%4)+1 (low half first);
    .trans gives the same of the transposed matrix."""
    out = np.zeros((4, 32), np.uint32)
    for i in range(num):
        mat = m[8 * i:8 * i + 8].astype(np.uint32)
        if trans:
            mat = mat.T
        for lane in range(32):
            g, t = lane // 4, lane % 4
            out[i, lane] = mat[g, 2 * t] | (mat[g, 2 * t + 1] << 16)
    return out


@pytest.mark.parametrize("kind", range(6))
def test_ldmatrix_forms(mma_mod, kind):
    m = rng(7).integers(0, 2 ** 16, (32, 8)).astype(np.uint16)
    out = np.zeros((4, 32), np.uint32)
    launch(mma_mod, "ldmatrix_forms", [m, out, kind])
    assert (out == ldmatrix_model(m, (1, 2, 4)[kind % 3], kind >= 3)).all()


def stmatrix_model(regs, num, trans):
    """PTX ISA stmatrix: the fragment layout of ldmatrix, stored: row r of
    matrix i (rows 8i..8i+7 of the output) holds, in columns 2t and 2t+1, the
    low and high halves of register i of lane 4r + t; .trans stores the
    transposed matrix. Rows of matrices not stored stay 0."""
    m = np.zeros((32, 8), np.uint16)
    for i in range(num):
        mat = np.zeros((8, 8), np.uint16)
        for lane in range(32):
            g, t = lane // 4, lane % 4
            mat[g, 2 * t] = regs[i, lane] & 0xFFFF
            mat[g, 2 * t + 1] = regs[i, lane] >> 16
        m[8 * i:8 * i + 8] = mat.T if trans else mat
    return m


@pytest.mark.parametrize("kind", range(6))
def test_stmatrix_forms(mma_mod, kind):
    regs = rng(8).integers(0, 2 ** 32, (4, 32), dtype=np.uint64).astype(np.uint32)
    m = np.zeros((32, 8), np.uint16)
    launch(mma_mod, "stmatrix_forms", [regs, m, kind])
    assert (m == stmatrix_model(regs, (1, 2, 4)[kind % 3], kind >= 3)).all()


def test_unimplemented_form_is_refused(mma_mod):
    with pytest.raises(ptxc.PtxcError) as e:
        ptxc.launch(mma_mod, "mma_m8n8k4_f16", 1, 32,
                    [np.zeros(64, np.uint32), np.zeros(256, np.float32)], mode="full")
    msg = str(e.value)
    assert "not supported yet: mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32" in msg
    assert "\n" not in msg


# ---------------------------------------------------------------- wmma
def test_wmma_f16_f32_and_hand_count(wmma_mod):
    r = rng(10)
    a = r.standard_normal((16, 16)).astype(np.float16)
    b = r.standard_normal((16, 16)).astype(np.float16)
    c = r.standard_normal((16, 16)).astype(np.float32)
    d = np.zeros((16, 16), np.float32)
    prof = launch(wmma_mod, "wmma_f16_f32", [a, b, c, d], block=64)
    check_float(d, a, b, c, U32)
    # One straight block: 4 ld.param, 4 cvta, mov, wmma.load a/b/c, wmma.mma,
    # wmma.store, ret = 15 instructions, each one warp instruction; 2 warps.
    assert prof.inst_executed == 2 * 15
    assert prof.thread_inst_executed == 64 * 15
    assert prof.flop_count_sp == 0 and prof.flop_count_hp == 0


def test_wmma_f16_col_major_b(wmma_mod):
    r = rng(11)
    a = r.standard_normal((16, 16)).astype(np.float16)
    b = r.standard_normal((16, 16)).astype(np.float16)
    c = r.standard_normal((16, 16)).astype(np.float32)
    d = np.zeros((16, 16), np.float32)
    launch(wmma_mod, "wmma_f16_f32_bcol", [a, np.ascontiguousarray(b.T), c, d])
    check_float(d, a, b, c, U32)


def test_wmma_f16_f16(wmma_mod):
    r = rng(12)
    a, b, c = (r.standard_normal((16, 16)).astype(np.float16) for _ in range(3))
    d = np.zeros((16, 16), np.float16)
    launch(wmma_mod, "wmma_f16_f16", [a, b, c, d])
    check_float(d, a, b, c, U32, U16)


def test_wmma_bf16(wmma_mod):
    r = rng(13)
    abits, a = bf16(r.standard_normal((16, 16)))
    bbits, b = bf16(r.standard_normal((16, 16)))
    c = r.standard_normal((16, 16)).astype(np.float32)
    d = np.zeros((16, 16), np.float32)
    launch(wmma_mod, "wmma_bf16_f32", [abits, bbits, c, d])
    check_float(d, a, b, c, U32)


@pytest.mark.parametrize("kernel,dtype,lo,hi", [("wmma_s8_s32", np.int8, -128, 128),
                                                ("wmma_u8_s32", np.uint8, 0, 256)])
def test_wmma_int8_exact(wmma_mod, kernel, dtype, lo, hi):
    r = rng(14)
    a = r.integers(lo, hi, (16, 16)).astype(dtype)
    b = r.integers(lo, hi, (16, 16)).astype(dtype)
    c = r.integers(-10 ** 6, 10 ** 6, (16, 16)).astype(np.int32)
    d = np.zeros((16, 16), np.int32)
    launch(wmma_mod, kernel, [a, b, c, d])
    assert (d == a.astype(np.int64) @ b.astype(np.int64) + c).all()


OTHER_SHAPES = [  # kernel, M, N, input type, accumulator type, B column-major
    ("wmma_f16_m32n8k16", 32, 8, "f16", np.float32, False),
    ("wmma_f16_m8n32k16", 8, 32, "f16", np.float16, True),
    ("wmma_bf16_m32n8k16", 32, 8, "bf16", np.float32, True),
    ("wmma_bf16_m8n32k16", 8, 32, "bf16", np.float32, False),
    ("wmma_s8_m32n8k16", 32, 8, "s8", np.int32, False),
    ("wmma_u8_m8n32k16", 8, 32, "u8", np.int32, True),
]


def inputs(r, shape, t):
    """(array given to the kernel, its values) of type t."""
    if t == "f16":
        x = r.standard_normal(shape).astype(np.float16)
        return x, x
    if t == "bf16":
        return bf16(r.standard_normal(shape))
    lo, hi, dt = (-128, 128, np.int8) if t == "s8" else (0, 256, np.uint8)
    x = r.integers(lo, hi, shape).astype(dt)
    return x, x


@pytest.mark.parametrize("kernel,M,N,t,acc,bcol", OTHER_SHAPES, ids=[c[0] for c in OTHER_SHAPES])
def test_wmma_m32n8k16_m8n32k16(wmma_mod, kernel, M, N, t, acc, bcol):
    r = rng(22)
    a, av = inputs(r, (M, 16), t)
    b, bv = inputs(r, (16, N), t)
    if acc == np.int32:
        c = r.integers(-10 ** 6, 10 ** 6, (M, N)).astype(np.int32)
    else:
        c = r.standard_normal((M, N)).astype(acc)
    d = np.zeros((M, N), acc)
    launch(wmma_mod, kernel, [a, np.ascontiguousarray(b.T) if bcol else b, c, d])
    if acc == np.int32:
        assert (d == av.astype(np.int64) @ bv.astype(np.int64) + c).all()
    else:
        check_float(d, av, bv, c, U32, U16 if acc == np.float16 else 0.0)


def test_wmma_tf32_m16n16k8(wmma_mod):
    # The kernel rounds every fragment element with __float_to_tf32 (cvt.rna)
    # and keeps C and D column-major.
    r = rng(15)
    a = r.standard_normal((16, 8)).astype(np.float32)
    b = r.standard_normal((8, 16)).astype(np.float32)
    c = r.standard_normal((16, 16)).astype(np.float32)
    d = np.zeros((16, 16), np.float32)
    launch(wmma_mod, "wmma_tf32", [a, b, np.ascontiguousarray(c.T), d])
    check_float(d.T, tf32_rna(a), tf32_rna(b), c, U32)


def test_wmma_f64_m8n8k4(wmma_mod):
    r = rng(16)
    a, b, c = r.standard_normal((8, 4)), r.standard_normal((4, 8)), r.standard_normal((8, 8))
    d = np.zeros((8, 8))
    prof = launch(wmma_mod, "wmma_f64", [a, b, c, d])
    check_float(d, a, b, c, U64)
    assert prof.flop_count_dp == 0


def test_wmma_gemm_tiles_and_epilogue(wmma_mod):
    # 64 x 32 x 48: 2 x 1 CTAs of 2 x 2 warps, 3 k-steps (wmma.mma) per warp,
    # then fc.x[i] = alpha * acc.x[i] + beta * fc.x[i] on each fragment element
    # (nvcc: mul.f32 then fma.rn.f32). Error: 48 fused steps, then 2 more
    # roundings: |d - exact| <= (K + 3) u (alpha |A| @ |B| + |beta| |C|) (1%
    # slack for the second-order terms). FLOPs: the 256 threads each run 8 mul
    # (1) and 8 fma (2) = 24; the wmma.mma are not counted: 6144.
    r = rng(17)
    M, N, K = 64, 32, 48
    a = r.standard_normal((M, K)).astype(np.float16)
    b = r.standard_normal((K, N)).astype(np.float16)
    c = r.standard_normal((M, N)).astype(np.float32)
    d = np.zeros((M, N), np.float32)
    prof = launch(wmma_mod, "wmma_gemm",
                  [a, np.ascontiguousarray(b.T), c, d, M, N, K, np.float32(1.5), np.float32(-0.5)],
                  grid=(M // 32, N // 32), block=(64, 2))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    exact = 1.5 * (a64 @ b64) - 0.5 * c
    bound = (K + 3) * U32 * (1.5 * (np.abs(a64) @ np.abs(b64)) + 0.5 * np.abs(c)) * 1.01
    assert (np.abs(d - exact) <= bound).all()
    assert prof.flop_count_sp == 256 * 24


def test_wmma_through_shared_memory(wmma_mod):
    # sa: A row-major (ld 24); sb: B col-major (ld 24); accumulator filled with
    # 1.0; D stored col-major to shared (ld 20) and copied out row-major.
    r = rng(18)
    a = r.standard_normal((16, 16)).astype(np.float16)
    b = r.standard_normal((16, 16)).astype(np.float16)
    d = np.zeros((16, 16), np.float32)
    launch(wmma_mod, "wmma_shared", [a, b, d])
    check_float(d, a, b, np.ones((16, 16)), U32)


# ------------------------------------------------- hybrid slice and tensor ops
def trips(v):
    """Iterations of ``for (float x = v; x > 0; x -= 1) n++`` (x - 1 exact here)."""
    return np.maximum(np.ceil(v), 0).astype(np.int32)


def test_branch_on_mma_result_keeps_it_in_the_slice(mma_mod):
    # Lane l's d0 is D[l/4][2(l%4)] (ISA C/D layout); small integer-valued
    # inputs keep every sum exact and the counts short.
    r = rng(20)
    a = r.integers(-2, 3, (16, 16)).astype(np.float16)
    b = r.integers(-2, 3, (16, 8)).astype(np.float16)
    out = np.zeros(32, np.int32)
    launch(mma_mod, "mma_branch", [a, b, out])
    dm = a.astype(np.float64) @ b.astype(np.float64)
    lanes = np.arange(32)
    assert (out == trips(dm[lanes // 4, 2 * (lanes % 4)])).all()
    assert out.max() > 0


def test_branch_on_wmma_store_keeps_it_in_the_slice(wmma_mod):
    r = rng(21)
    a = r.integers(-2, 3, (16, 16)).astype(np.float16)
    b = r.integers(-2, 3, (16, 16)).astype(np.float16)
    out = np.zeros(32, np.int32)
    launch(wmma_mod, "wmma_branch", [a, b, out])
    dm = a.astype(np.float64) @ b.astype(np.float64)
    assert (out == trips(dm.ravel()[:32])).all()
    assert out.max() > 0


def test_matrix_accesses_have_unknown_extent(mma_mod, wmma_mod):
    # A wmma.load/store touches a strided tile and ldmatrix 8 rows at other
    # lanes' addresses: the slice must not take the element size as the
    # extent (it would miss the writers of the rest of the tile).
    from ptxc.passes.memory.access import accesses
    seen = set()
    for mod in (mma_mod, wmma_mod):
        for fn in mod.functions:
            for ins in fn.instructions():
                if ins.opcode in ("wmma", "ldmatrix") and "mma" not in ins.mods:
                    accs = accesses(ins)
                    assert accs and all(acc.size is None for acc in accs)
                    seen.add((ins.opcode, accs[0].kind))
    assert seen == {("wmma", "r"), ("wmma", "w"), ("ldmatrix", "r")}


def test_wmma_tf32_ignores_low_mantissa_bits(wmma_mod):
    # Raw f32 inputs (B column-major): the product uses them with the 13 low
    # mantissa bits cleared (truncation toward zero, not rounding).
    r = rng(19)
    a = r.standard_normal((16, 8)).astype(np.float32)
    b = r.standard_normal((8, 16)).astype(np.float32)
    d = np.zeros((16, 16), np.float32)
    launch(wmma_mod, "wmma_tf32_raw", [a, np.ascontiguousarray(b.T), d])
    trunc = lambda x: (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)   # noqa: E731
    check_float(d, trunc(a), trunc(b), np.zeros((16, 16)), U32)
    assert excess(d, tf32_rna(a), tf32_rna(b), np.zeros((16, 16)), U32) > 0    # not rounding


# ------------------------------------------- third-party PTX (ZLUDA's tests)
ZLUDA = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "zluda" / "test_spirv_run"


def zluda_mma_reference():
    """What ZLUDA's mma_m16n8k16_f32_{f16,bf16}_..._f32 kernels store, from the
    ISA fragment figures. Lane l has in_j = 8 l + j; ``cvt.rn.f16x2.f32 d, a, b``
    puts a in the upper half, so register a0a1 = {in0, in1} holds a_0 = in1,
    a_1 = in0 (likewise a2a3 ... and b); c_i = in_i. All values are small
    integers: every product and partial sum is exact in f32."""
    A, B, C = np.zeros((16, 16)), np.zeros((16, 8)), np.zeros((16, 8))
    swap = [1, 0, 3, 2, 5, 4, 7, 6]
    for lane in range(32):
        g, t = lane // 4, lane % 4
        val = [8 * lane + j for j in range(8)]
        for i in range(8):
            A[g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)] = val[swap[i]]
        for i in range(4):
            B[2 * t + (i & 1) + 8 * (i >> 1), g] = val[swap[i]]
            C[g + 8 * (i >> 1), 2 * t + (i & 1)] = val[i]
    D = A @ B + C
    return np.array([[D[g + 8 * (i >> 1), 2 * t + (i & 1)] for i in range(4)]
                     for g, t in ((lane // 4, lane % 4) for lane in range(32))], np.float32)


@pytest.mark.parametrize("stem", ["mma_m16n8k16_f32_f16_f16_f32", "mma_m16n8k16_f32_bf16_bf16_f32"])
def test_zluda_mma_kernels(stem):
    path = ZLUDA / f"{stem}.ptx"
    if not path.is_file():
        pytest.skip(f"shared PTX corpus not found at {path}")
    out = np.zeros((32, 4), np.float32)
    launch(ptxc.load(str(path)), stem, [out])
    assert (out == zluda_mma_reference()).all()


# --------------------------------------------------- partial warps (.aligned)
@pytest.fixture(scope="module")
def partial_mod():
    return ptxc.load(HERE / "partial_warp_mma.sm90.ptx")


@pytest.mark.parametrize("mode", ["full", "hybrid"])
@pytest.mark.parametrize("active,block,lanes", [
    (16, 32, 0x0000FFFF),   # `if (threadIdx.x < 16)`: lanes 0-15 reach the wmma.load
    (5, 32, 0x0000001F),    # lanes 0-4
    (64, 16, 0x0000FFFF),   # every thread, but the warp has only 16 threads
    (48, 64, 0x0000FFFF),   # warp 0 complete; warp 1 has lanes 0-15 (threads 32-47)
])
def test_partial_warp_matrix_instruction_stops(partial_mod, mode, active, block, lanes):
    """PTX ISA 9.7.14: wmma/mma/ldmatrix/stmatrix are .aligned, all 32 lanes
    must execute them. The first wmma instruction (wmma.load.a, PTX line 38)
    executed by part of a warp stops the launch, hybrid mode too (the check
    stays where the slice drops the instruction)."""
    a = np.ones((16, 16), np.float16)
    d = np.zeros((16, 16), np.float32)
    with pytest.raises(ptxc.PtxcError) as e:
        ptxc.launch(partial_mod, "tile_if_lane_below", 1, block, [a, a.copy(), d, np.int32(active)], mode=mode)
    msg = str(e.value)
    warp = 1 if block == 64 else 0
    assert f"warp {warp}: whole-warp matrix instruction (.aligned) executed by only part of the warp" in msg
    assert f"lanes executing: 0x{lanes:08x}" in msg and "line 38 (wmma.load.a" in msg


def test_whole_warp_matrix_instruction_runs(partial_mod):
    """All 32 lanes active: D = ones(16x16) @ ones(16x16) = 16 everywhere."""
    a = np.ones((16, 16), np.float16)
    d = np.zeros((16, 16), np.float32)
    launch(partial_mod, "tile_if_lane_below", [a, a.copy(), d, np.int32(32)])
    assert (d == 16).all()
