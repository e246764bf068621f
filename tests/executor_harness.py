"""Small PTX harnesses for the opcode-semantics tests (tests/test_executor_*.py).

``run_op("add.s32 %d, %a, %b;", d="s32", a="s32", b="s32", inputs)`` builds a
kernel in which every thread loads its operands a, b, c from arrays at its
global index, executes the instruction(s), and stores %d (and, if ``q`` is
given, a second result %q) to an output array; it returns the outputs of a
full run (and checks that a hybrid run gives the same counters).

``launch_both(module, kernel, grid, block, args)`` launches a kernel hybrid
and full, each on its own copies of the argument arrays, and checks that
both give the same counters.
"""
from __future__ import annotations

import numpy as np

import ptxc

NP = {"s8": np.int8, "u8": np.uint8, "b8": np.uint8, "s16": np.int16, "u16": np.uint16,
      "b16": np.uint16, "f16": np.uint16, "bf16": np.uint16, "s32": np.int32, "u32": np.uint32,
      "b32": np.uint32, "f32": np.float32, "s64": np.int64, "u64": np.uint64, "b64": np.uint64,
      "f64": np.float64, "pred": np.uint8, "f16x2": np.uint32, "bf16x2": np.uint32}
REG = {"f16": "b16", "bf16": "b16", "f16x2": "b32", "bf16x2": "b32", "s8": "b16", "u8": "b16",
       "b8": "b16"}

HEADER = """.version 8.0
.target sm_90
.address_size 64
"""


def size(t: str) -> int:
    return np.dtype(NP[t]).itemsize


def _load(name: str, t: str, k: int) -> str:
    """Load operand ``name`` (type t) of this thread from parameter k."""
    es = size(t)
    lines = [f"ld.param.u64 %rd{10 + k}, [p{k}];",
             f"mul.wide.u32 %rd{20 + k}, %r0, {es};",
             f"add.s64 %rd{30 + k}, %rd{10 + k}, %rd{20 + k};"]
    if t == "pred":
        lines += [f"ld.global.u8 %hs{k}, [%rd{30 + k}];", f"setp.ne.u16 %{name}, %hs{k}, 0;"]
    else:
        lt = {"f16": "b16", "bf16": "b16", "f16x2": "b32", "bf16x2": "b32"}.get(t, t)
        if lt in ("s8", "u8", "b8"):
            lt = "u8" if lt != "s8" else "s8"
        lines.append(f"ld.global.{lt} %{name}, [%rd{30 + k}];")
    return "\n  ".join(lines)


def _store(name: str, t: str, k: int) -> str:
    es = size(t)
    lines = [f"ld.param.u64 %rd{10 + k}, [p{k}];",
             f"mul.wide.u32 %rd{20 + k}, %r0, {es};",
             f"add.s64 %rd{30 + k}, %rd{10 + k}, %rd{20 + k};"]
    if t == "pred":
        lines += [f"selp.u16 %hs{k}, 1, 0, %{name};", f"st.global.u8 [%rd{30 + k}], %hs{k};"]
    else:
        lt = {"f16": "b16", "bf16": "b16", "f16x2": "b32", "bf16x2": "b32"}.get(t, t)
        if lt in ("s8", "u8", "b8"):
            lt = "u8"
        lines.append(f"st.global.{lt} [%rd{30 + k}], %{name};")
    return "\n  ".join(lines)


def kernel_text(body: str, types: dict, outs: tuple) -> str:
    ins = [n for n in ("a", "b", "c", "e") if n in types]
    params = ", ".join(f".param .u64 p{k}" for k in range(len(ins) + len(outs)))
    decls = "\n  ".join(f".reg .{REG.get(t, t)} %{n};" for n, t in types.items())
    loads = "\n  ".join(_load(n, types[n], k) for k, n in enumerate(ins))
    stores = "\n  ".join(_store(n, types[n], len(ins) + k) for k, n in enumerate(outs))
    return HEADER + f""".visible .entry k({params})
{{
  .reg .b32 %r<8>;
  .reg .b64 %rd<64>;
  .reg .b16 %hs<8>;
  .reg .pred %p<8>;
  {decls}
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r0, %r2, %r3, %r1;
  {loads}
  {body}
  {stores}
  ret;
}}
"""


def run_op(body: str, inputs: dict, modes=("full", "hybrid"), block: int = 32, **types):
    """Run ``body`` once per input element; returns the output array(s)."""
    outs = tuple(n for n in ("d", "q") if n in types)
    text = kernel_text(body, types, outs)
    n = len(next(iter(inputs.values())))
    grid = (n + block - 1) // block
    args, results = [], {}
    prof = {}
    for mode in modes:
        arrays = [np.resize(as_array(inputs[name], types[name]), grid * block)
                  for name in ("a", "b", "c", "e") if name in types]
        o = [np.zeros(grid * block, NP[types[name]]) for name in outs]
        module = ptxc.parse(text, "harness.ptx")
        prof[mode] = ptxc.launch(module, "k", grid, block, arrays + o, mode=mode)
        results[mode] = [x[:n] for x in o]
        args = arrays
    if len(modes) > 1:
        assert prof["hybrid"].counters() == prof["full"].counters()
    del args
    r = results[modes[0]]
    return r[0] if len(r) == 1 else tuple(r)


def as_array(values, t: str) -> np.ndarray:
    """Values (numpy or Python ints, wrapped to the type's width) as an array."""
    dt = np.dtype(NP[t])
    arr = np.asarray(values)
    if arr.dtype == object or (dt.kind in "iu" and arr.dtype.kind in "iu"):
        bits = 8 * dt.itemsize
        vals = [int(x) & ((1 << bits) - 1) for x in np.ravel(arr)]
        return np.array(vals, dtype=f"u{dt.itemsize}").view(dt)
    return np.ascontiguousarray(arr.astype(dt))


def launch_both(module, kernel: str, grid, block, args, **kw) -> dict:
    """{mode: (Profile, its copies of ``args``)} of a hybrid then a full
    launch (keywords go to ptxc.launch); their counters must be equal."""
    out = {}
    for mode in ("hybrid", "full"):
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        out[mode] = (ptxc.launch(module, kernel, grid=grid, block=block, args=copies, mode=mode,
                                 **kw), copies)
    assert out["hybrid"][0].counters() == out["full"][0].counters()
    return out


def run_kernel(text: str, kernel: str, grid, block, args, mode="full", **kw):
    module = ptxc.parse(text, "test.ptx")
    return ptxc.launch(module, kernel, grid, block, args, mode=mode, **kw)


def f32bits(x) -> np.ndarray:
    return np.asarray(x, np.float32).view(np.uint32)


def bits_f32(b) -> np.ndarray:
    return np.asarray(b, np.uint32).view(np.float32)
