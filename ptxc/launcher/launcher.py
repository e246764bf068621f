"""Launching a kernel on the CPU: arguments, launch configuration, modes.

``launch(module, kernel, grid, block, args, mode)`` compiles the kernel (the
branch slice in a ``hybrid`` run, every instruction in a ``full`` run) with
ptxc.backends.llvm, runs every CTA with the SIMT model of METRICS.md and
returns a :class:`ptxc.launcher.profile.Profile`. In a full run, numpy arrays passed
as buffers are written back. ``launch_from_options`` is the command-line
entry point (the ``count`` pass); docs/launch.md describes the argument
syntax (``NAME=VALUE``, ``@file.npy``, ``zeros:f32:1024`` ...).
"""
from __future__ import annotations

import os
import re
import struct
import time

import numpy as np

from ptxc.launcher import injection as inject_session
from ptxc.errors import PtxcError
from ptxc.launcher.alias import classes_for_segments, classes_for_values, ensure_launch_slice
from ptxc.launcher.limits import (check_buffer_size, check_dims, check_max_steps, check_shared,
                                read_only_writes)
from ptxc.ir.types import TYPE_SIZES

DEFAULT_MAX_STEPS = 100_000_000     # block executions per warp
MODES = ("hybrid", "full")
GENERATORS = ("zeros", "ones", "arange", "random", "full")


# ------------------------------------------------------------------ API
def launch(module, kernel=None, grid=(1, 1, 1), block=None, args=(), mode: str = "hybrid",
           shared_bytes: int = 0, max_steps: int | None = None, threads: int | None = None,
           memory_counters: bool = False, bank_bytes: int = 4, cta_equivalence: bool = True,
           cooperative: bool = False, check: str | None = None, value_profile: bool = False,
           check_faults: bool = True):
    """Run ``kernel`` of ``module`` and return its Profile (see module doc).
    A hybrid run checks every access it skips, as the full run would, and
    stops at the same out-of-bounds, null or misaligned access
    (docs/slice.md, ``faults``); ``check_faults=False`` skips those checks
    for speed (the slice option ``faults=unchecked``): a hybrid run may then
    finish, with counters, where the full run stops at a bad access.
    ``value_profile=True`` (a full run) also profiles every register write
    (docs/value-profile.md): the Profile's ``value_profile``.
    ``check="memcheck"`` (a full run) records invalid accesses and goes on
    (docs/check.md): the Profile's ``mem_errors`` lists them.
    ``cooperative`` makes every CTA resident at once, as
    cudaLaunchCooperativeKernel does, so that the grid may synchronise
    (``cg::this_grid().sync()``; backends/llvm/ops/coop.py).
    ``memory_counters`` also collects the coalescing / bank-conflict counters
    (docs/metrics.md), with shared-memory banks of ``bank_bytes`` (4 or 8).
    A hybrid run executes one CTA per equivalence class when the slice
    allows it (docs/cta-equivalence.md); ``cta_equivalence=False`` runs every CTA."""
    check_max_steps(max_steps)
    if isinstance(module, (str, os.PathLike)):
        from ptxc import load
        module = load(module)
    fn, grid, block, memory = configure(module, kernel, grid, block, mode, shared_bytes,
                                        memory_counters, bank_bytes)
    check_option(check, mode)
    check_value_profile(value_profile, mode)
    threads = place_slice(module, fn, mode, classes_for_values(fn, normalise_args(fn, args)),
                          memory, threads, None if check_faults else UNCHECKED)
    params, buffers, arrays = bind_args(fn, args, mode)
    return execute(module, fn, grid, block, params, buffers, arrays, mode, shared_bytes,
                   max_steps or DEFAULT_MAX_STEPS, threads, memory,
                   cta_equivalence=cta_equivalence, cooperative=cooperative, check=check,
                   value_profile=value_profile)


CHECKS = ("memcheck", "initcheck", "racecheck", "synccheck")
UNCHECKED = {"faults": "unchecked"}     # launch(check_faults=False): the slice option


def check_tools(check) -> tuple:
    """The tools of a ``check`` argument: None, one name, or several (a
    tuple, or names joined by '+' or ','); ``"all"``: every tool of CHECKS."""
    if not check:
        return ()
    tools = tuple(re.split(r"[+,]", check)) if isinstance(check, str) else tuple(check)
    return CHECKS if "all" in tools else tools


def check_option(check, mode: str) -> None:
    """Refuse an unknown check tool, or a check in a hybrid run (it skips
    accesses the slice does not keep, so it would miss their errors)."""
    for tool in check_tools(check):
        if tool not in CHECKS:
            raise PtxcError(f"unknown check '{tool}' (use {', '.join(CHECKS)} or all)")
        if mode != "full":
            raise PtxcError(f"{tool} needs a full run (mode='full'): a hybrid run skips the "
                            f"accesses its slice does not keep")


def check_value_profile(value_profile: bool, mode: str) -> None:
    """Refuse value profiling in a hybrid run: the slice computes only what
    branches need, so most registers are never written (value_prof.py)."""
    if value_profile and mode != "full":
        raise PtxcError("value profiling needs a full run (mode='full'): a hybrid run computes "
                        "only the branch slice, so the other registers' values are unknown")


def configure(module, kernel, grid, block, mode: str, shared_bytes: int,
              memory_counters: bool, bank_bytes: int):
    """(kernel Function, grid, block, memory-counter setting) of a launch,
    after checking the mode and the configuration."""
    if mode not in MODES:
        raise PtxcError(f"unknown mode '{mode}' (use 'hybrid' or 'full')")
    fn = find_kernel(module, kernel)
    grid = dim3(grid, "grid")
    block = dim3(block if block is not None else default_block(fn), "block")
    check_config(fn, grid, block, shared_bytes)
    return fn, grid, block, memory_setting(memory_counters, bank_bytes)


def place_slice(module, fn, mode: str, classes, memory: int, threads,
                slice_options: dict | None = None) -> int:
    """Put the slice of this launch in place (a hybrid run executes it; a
    full run needs it to know whether CTAs must run in order: ctas_in_order)
    and return the worker threads to use, 1 when the CTAs must run in order."""
    opts = (slice_options or {}) if mode == "hybrid" else {}
    ensure_launch_slice(module, fn, classes, criteria=opts.get("criteria"),
                        memory=opts.get("memory"), addresses=bool(memory) and mode == "hybrid",
                        faults=opts.get("faults"))
    return 1 if ctas_in_order(module, fn) else threads or os.cpu_count() or 1


def compile_timed(module, fn, mode: str, grid, block, memory: int, check: str | None = None,
                  value_profile: bool = False):
    """(compiled kernel, seconds spent) for a launch of ``fn``."""
    from ptxc.backends.llvm import jit
    t0 = time.perf_counter()
    level = jit.choose_level(fn, mode, count(grid) * count(block))
    if inject_session.wants(fn):     # ptxc inject: its own variant (inject_session.py)
        if mode != "full":
            raise PtxcError("error injection needs a full run (mode='full')")
        return jit.compile_kernel(module, fn, mode, level, memory=memory, inject=True), \
            time.perf_counter() - t0
    tools = check_tools(check)
    # memcheck, initcheck, racecheck, synccheck, value profiling: variants (the
    # default code is unchanged)
    if tools or value_profile:
        return jit.compile_kernel(module, fn, mode, level, memory=memory,
                                  value_profile=value_profile,
                                  **{t: True for t in tools}), \
            time.perf_counter() - t0
    return compile_for_launch(module, fn, mode, level, memory), time.perf_counter() - t0


def launch_from_options(module, opts: dict, mode: str):
    """The CLI's launch: ``opts`` as documented in docs/launch.md."""
    fn = find_kernel(module, opts.get("kernel"))
    block = opts.get("block") or default_block(fn)
    grid = opts.get("grid") or (1, 1, 1)
    args = parse_arg_strings(fn, opts.get("args") or [])
    return launch(module, fn, grid, block, args, mode=mode,
                  shared_bytes=int(opts.get("shared") or 0),
                  max_steps=opts.get("max_steps"), threads=opts.get("threads"),
                  memory_counters=bool(opts.get("memory_counters")),
                  bank_bytes=int(opts.get("bank_bytes") or 4),
                  cta_equivalence=opts.get("cta_equivalence", True), check=opts.get("check"),
                  value_profile=bool(opts.get("value_profile")))


# ------------------------------------------------------ configuration
def find_kernel(module, kernel):
    from ptxc.ir import Function
    if isinstance(kernel, Function):
        return kernel
    kernels = module.kernels
    if kernel is None:
        if len(kernels) == 1:
            return kernels[0]
        names = ", ".join(k.name for k in kernels) or "none"
        raise PtxcError(f"{module.filename}: choose a kernel with --kernel (kernels: {names})")
    for k in kernels:
        if k.name == kernel:
            return k
    names = ", ".join(k.name for k in kernels) or "none"
    raise PtxcError(f"{module.filename}: no kernel named '{kernel}' (kernels: {names})")


def default_block(fn):
    d = fn.reqntid or fn.maxntid
    if d is None:
        raise PtxcError(f"kernel {fn.name}: give a block size (--block); the kernel has no "
                        f".reqntid or .maxntid", fn.loc)
    return d


def dim3(v, what: str) -> tuple:
    if isinstance(v, int):
        v = (v,)
    try:
        t = tuple(int(x) for x in v)
    except (TypeError, ValueError):
        raise PtxcError(f"{what} must be up to three positive integers, got {v!r}")
    if not 1 <= len(t) <= 3 or any(x < 1 for x in t):
        raise PtxcError(f"{what} must be up to three positive integers, got {v!r}")
    return t + (1,) * (3 - len(t))


def check_config(fn, grid, block, shared_bytes) -> None:
    n = block[0] * block[1] * block[2]
    if n > 1024:
        raise PtxcError(f"kernel {fn.name}: {n} threads per block (at most 1024)")
    if fn.reqntid and tuple(fn.reqntid) + (1,) * (3 - len(fn.reqntid)) != block:
        raise PtxcError(f"kernel {fn.name}: .reqntid {tuple(fn.reqntid)} requires block {tuple(fn.reqntid)}, "
                        f"got {block}", fn.loc)
    check_dims(grid, block)
    if grid[0] * grid[1] * grid[2] > 2 ** 31:
        raise PtxcError(f"grid {grid} too large: {grid[0] * grid[1] * grid[2]} CTAs, ptxc runs at most "
                        f"2**31 = {2 ** 31} per launch")
    if shared_bytes < 0:
        raise PtxcError("dynamic shared memory size must be >= 0")
    check_shared(shared_bytes)


def memory_setting(memory_counters: bool, bank_bytes: int) -> int:
    """The compiled kernels' memory-counter setting: the shared-memory bank
    width in bytes, or 0 when the memory counters are off."""
    if bank_bytes not in (4, 8):
        raise PtxcError(f"shared-memory bank width must be 4 or 8 bytes, got {bank_bytes}")
    return bank_bytes if memory_counters else 0


def ctas_in_order(module, fn) -> bool:
    """Must the CTAs of ``fn``'s launch run one after another, in linear CTA
    order (the order METRICS.md defines)? Yes when a read that decides
    control flow or guards may see a global write of the same launch
    (passes.slice SliceVariant.ordered, for the slice just put in place):
    run in parallel, a CTA could see another CTA's write or not, and the
    counters would depend on timing. Kernels with global atomics always run
    in order (runtime.Launch)."""
    variant = module.attrs.get("slice_variants", {}).get(module.attrs.get("slice_variant"))
    return True if variant is None else variant.ordered.get(fn.name, True)


def ensure_slice(module, fn, **options) -> None:
    """Mark the branch slice for a hybrid run. Without ``options`` the marks
    already on the module are used (a ``slice`` pass earlier in a pipeline
    chose them), else the default slice is computed; with ``options``
    (``mark_slice``'s keywords) that variant of the slice is put in place
    (computed once per module and options: passes.slice.select_slice)."""
    if not options and fn.attrs.get("sliced"):
        return
    try:
        from ptxc.passes.slice.slice_pass import select_slice
    except ImportError:                 # no slice pass: a hybrid run executes everything
        return
    select_slice(module, **options)


# ---------------------------------------------------------- arguments
def is_pointer_param(p, addr_bits: int = 64) -> bool:
    """Can the parameter hold an address (so an array argument is a buffer)?"""
    if p.dims:
        return False
    return p.type in (("u64", "b64", "s64") if addr_bits == 64 else ("u32", "b32"))


def control_params(fn) -> set | None:
    """Names of the parameters the slice depends on (None: unknown)."""
    rep = fn.attrs.get("slice_report")
    if not rep or "control_inputs" not in rep:
        return None
    ci = rep["control_inputs"]
    names = set(ci.get("params", []))
    for m in ci.get("memory", []):
        mo = re.search(r"param (\S+)", m)
        if mo:
            names.add(mo.group(1))
        elif m.split(":", 1)[0] in ("global", "generic") and m.endswith("?"):
            names.update(p.name for p in fn.params if is_pointer_param(p, addr_bits(fn)))
    return names


def param_table(fn) -> str:
    ctl = control_params(fn)
    rows = []
    for i, p in enumerate(fn.params):
        dims = "".join(f"[{d}]" for d in p.dims)
        mark = "" if ctl is None else (" (control input)" if p.name in ctl else "")
        rows.append(f"  {i}: .{p.type}{dims} {p.name}{mark}")
    return "\n".join(rows) if rows else "  (none)"


def control_note(fn, ctl) -> str:
    """Why a hybrid run needs an argument: the control inputs, by name."""
    if ctl is None:
        return " (the slice's control inputs are unknown: pass every argument)"
    names = [f"{i} '{p.name}'" for i, p in enumerate(fn.params) if p.name in ctl]
    checks = (fn.attrs.get("slice_report") or {}).get("faults") == "checked"
    return (" (a control input of the slice; a hybrid run needs every control input: "
            + (", ".join(names) or "none") + "; arguments the slice does not read may be left out"
            + ("; the buffers of the accesses it checks for faults are control inputs: "
               "check_faults=False / slice{faults=unchecked} gives that up)" if checks else ")"))


def arg_error(fn, msg: str) -> PtxcError:
    return PtxcError(f"kernel {fn.name}: {msg}\nparameters:\n{param_table(fn)}", fn.loc)


def bind_args(fn, args, mode: str):
    """(parameter bytes, buffers, [(buffer, original array)])."""
    values = normalise_args(fn, args)
    ctl = control_params(fn) if mode == "hybrid" else None
    from ptxc.backends.llvm.plan import align_up, var_align
    out = bytearray()
    buffers, arrays = [], []
    for i, p in enumerate(fn.params):
        off = align_up(len(out), var_align(p))
        out.extend(bytes(off - len(out)))
        v = values.get(i, _MISSING)
        if v is _MISSING:
            if mode == "full" or ctl is None or p.name in ctl:
                raise arg_error(fn, f"missing argument for parameter {i} '{p.name}'"
                                + ("" if mode == "full" else control_note(fn, ctl)))
            v = np.zeros(0, dtype=np.uint8) if is_pointer_param(p, addr_bits(fn)) else 0
        out.extend(pack_param(fn, p, i, v, buffers, arrays))
    return bytes(out), buffers, arrays


_MISSING = object()


def normalise_args(fn, args) -> dict:
    """Map positional / named arguments to parameter indices."""
    params = fn.params
    if isinstance(args, dict):
        out = {}
        for k, v in args.items():
            i = param_index(fn, k)
            if i in out:
                raise arg_error(fn, f"parameter {i} '{fn.params[i].name}' is given twice")
            out[i] = v
        return out
    args = list(args)
    if len(args) > len(params):
        raise arg_error(fn, f"{len(args)} arguments for {len(params)} parameters")
    return dict(enumerate(args))


def param_index(fn, key) -> int:
    params = fn.params
    if isinstance(key, int) or (isinstance(key, str) and key.isdigit()):
        k = int(key)
        if 0 <= k < len(params):
            return k
        raise arg_error(fn, f"no parameter number {k}")
    for i, p in enumerate(params):
        if p.name == key:
            return i
    hits = [i for i, p in enumerate(params) if p.name.endswith("_" + key) or p.name.endswith(key)]
    if len(hits) == 1:
        return hits[0]
    raise arg_error(fn, f"no parameter named '{key}'" + (" (ambiguous)" if hits else ""))


def addr_bits(fn) -> int:
    from ptxc.backends.llvm.layout import address_bits
    return address_bits(fn.module) if fn.module is not None else 64


def pack_param(fn, p, i, v, buffers, arrays) -> bytes:
    """The bytes of one parameter value."""
    from ptxc.backends.llvm.layout import SEG_FIRST_BUFFER, seg_shift
    size = p.size
    bits = addr_bits(fn)
    where = f"parameter {i} '{p.name}' (.{p.type})"
    if isinstance(v, (bytes, bytearray)) or (isinstance(v, np.ndarray) and not is_pointer_param(p, bits)):
        raw = v.tobytes() if isinstance(v, np.ndarray) else bytes(v)
        if isinstance(v, np.ndarray) and v.dtype.kind in "OUSVc":
            raise arg_error(fn, f"{where}: unsupported array dtype {v.dtype}")
        if len(raw) != size:
            raise arg_error(fn, f"{where}: expects {size} bytes, got {len(raw)}"
                            + (" (pass an array only for a pointer parameter)" if p.type != "b8" else ""))
        return raw
    if isinstance(v, np.ndarray):
        if v.dtype.kind in "OUSVc" or v.dtype.kind not in "biuf":
            raise arg_error(fn, f"{where}: unsupported array dtype {v.dtype}")
        buf = np.ascontiguousarray(v).reshape(-1).view(np.uint8)    # no copy when contiguous
        seg = SEG_FIRST_BUFFER + len(buffers)
        shift = seg_shift(fn.module)
        if buf.nbytes > (1 << shift) or (bits == 32 and seg >= 256):
            raise arg_error(fn, f"{where}: buffer too large ({buf.nbytes} bytes) or too many buffers "
                                f"for {bits}-bit addresses")
        buffers.append(buf)
        arrays.append((buf, v))
        return struct.pack("<Q" if bits == 64 else "<I", seg << shift)
    return pack_scalar(fn, p, where, v)


def pack_scalar(fn, p, where: str, v) -> bytes:
    t = p.type
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool):
        v = int(v)
    if hasattr(v, "handle") and type(v).__name__ in ("Texture", "Surface"):
        v = v.handle                    # ptxc.texture / ptxc.surface (textures.py)
    if not isinstance(v, (int, float)):
        raise arg_error(fn, f"{where}: expects a number{' or an array' if is_pointer_param(p, addr_bits(fn)) else ''}, "
                            f"got {type(v).__name__}")
    if t in ("f32", "f64", "f16"):
        fmt = {"f32": "<f", "f64": "<d", "f16": "<e"}[t]
        return struct.pack(fmt, float(v))
    if isinstance(v, float):
        if not v.is_integer():
            raise arg_error(fn, f"{where}: expects an integer, got {v}")
        v = int(v)
    n = TYPE_SIZES.get(t, 4) * 8
    if p.dims:
        raise arg_error(fn, f"{where}: expects {p.size} bytes (bytes or an array)")
    lo = -(1 << (n - 1))          # unsigned too: two's complement, as C++ converts int -1 to .u32
    if not lo <= v < (1 << n):
        raise arg_error(fn, f"{where}: {v} does not fit in .{t}")
    return (v & ((1 << n) - 1)).to_bytes(n // 8, "little")


# ------------------------------------------------------- CLI argument strings
DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8, "i16": np.int16,
          "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32,
          "u64": np.uint64, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
          "b8": np.uint8, "b16": np.uint16, "b32": np.uint32, "b64": np.uint64}


def parse_arg_strings(fn, items) -> dict:
    """['a=zeros:f32:1024', 'n=1024', '0=@x.npy'] -> {index: value}."""
    out = {}
    for item in items:
        if "=" not in item:
            raise arg_error(fn, f"argument '{item}' is not NAME=VALUE")
        name, text = item.split("=", 1)
        idx = param_index(fn, name.strip())
        if idx in out:
            raise arg_error(fn, f"parameter {idx} '{fn.params[idx].name}' is given twice "
                                f"(--arg {item})")
        out[idx] = parse_value(fn, text.strip())
    return out


def parse_value(fn, text: str):
    if text.startswith("@"):
        try:
            return np.load(text[1:], allow_pickle=False)
        except (OSError, ValueError) as e:
            raise arg_error(fn, f"cannot read '{text[1:]}': {e}")
    parts = text.split(":")
    if len(parts) >= 3 and parts[0] in GENERATORS:
        return generate(fn, parts)
    try:
        return int(text, 0)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise arg_error(fn, f"cannot understand argument value '{text}' (see docs/launch.md)")


def generate(fn, parts):
    kind, dt = parts[0], parts[1]
    if dt not in DTYPES:
        raise arg_error(fn, f"unknown element type '{dt}' in '{':'.join(parts)}'")
    try:
        shape = tuple(int(x) for x in parts[2].lower().split("x"))
        extra = parts[3] if len(parts) > 3 else None
        dtype = DTYPES[dt]
        n = int(np.prod(shape, dtype=object))
        from ptxc.backends.llvm.layout import seg_shift
        check_buffer_size(n * np.dtype(dtype).itemsize, 1 << (seg_shift(fn.module) if fn else 32),
                          f"{'kernel ' + fn.name + ': ' if fn else ''}buffer '{':'.join(parts)}'")
        if kind == "zeros":
            return np.zeros(shape, dtype)
        if kind == "ones":
            return np.ones(shape, dtype)
        if kind == "arange":
            return np.arange(n).astype(dtype).reshape(shape)
        if kind == "full":
            return np.full(shape, float(extra) if np.dtype(dtype).kind == "f" else int(extra, 0), dtype)
        rng = np.random.default_rng(int(extra) if extra else 0)
        if np.dtype(dtype).kind == "f":
            return rng.random(n).astype(dtype).reshape(shape)
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True).reshape(shape)
    except (ValueError, TypeError) as e:
        raise arg_error(fn, f"bad generator '{':'.join(parts)}': {e}")
    except MemoryError:
        raise arg_error(fn, f"buffer '{':'.join(parts)}' is too large for this host's memory") from None


# ------------------------------------------------------------- running
def execute(module, fn, grid, block, params, buffers, arrays, mode, shared_bytes, max_steps, threads,
            memory: int = 0, cta_equivalence: bool = True, cooperative: bool = False,
            check: str | None = None, value_profile: bool = False):
    """Run a launch whose buffers came from ``bind_args (one segment each,
    named after the pointer parameter it was bound to); copy results back."""
    from ptxc.backends.llvm.layout import SEG_FIRST_BUFFER
    c, compile_s = compile_timed(module, fn, mode, grid, block, memory, check, value_profile)
    buffers = private_buffers(c, mode, buffers, arrays)
    owners = [p.name for p in fn.params if is_pointer_param(p, addr_bits(fn))]
    segments, names = {}, {}
    for k, buf in enumerate(buffers):
        segments[SEG_FIRST_BUFFER + k] = buf
        names[SEG_FIRST_BUFFER + k] = ("buffer of parameter " + owners[k]) if k < len(owners) else f"buffer {k}"
    prof = run_compiled(c, fn, grid, block, params, segments, shared_bytes, max_steps, threads,
                        segment_names=names, compile_s=compile_s,
                        cta_equivalence=cta_equivalence and mode == "hybrid",
                        cooperative=cooperative, check=check)
    if mode == "full":
        read_only_writes(fn, buffers, arrays, owners)
        for buf, orig in zip(buffers, (o for _, o in arrays)):
            if not np.shares_memory(buf, orig) and orig.flags.writeable:
                np.copyto(orig, buf.view(orig.dtype).reshape(orig.shape), casting="no")
    return prof


def launch_segments(module, kernel, grid, block, params: bytes, segments: dict, mode: str = "hybrid",
                    shared_bytes: int = 0, max_steps: int | None = None, threads: int | None = None,
                    memory=None, segment_names: dict | None = None, slice_options: dict | None = None,
                    memory_counters: bool = False, bank_bytes: int = 4,
                    cta_equivalence: bool = True, heap=None, cooperative: bool = False,
                    check: str | None = None, shadow=None, value_profile: bool = False):
    """Run a launch on device memory the caller manages (the CUDA runtime):
    ``params`` are the kernel parameter bytes as the kernel sees them (pointer
    values are generic addresses ``segment << 32 | offset``), ``segments``
    maps segment numbers (>= layout.SEG_FIRST_BUFFER) to uint8 arrays that are
    used in place, ``memory`` is a runtime.ModuleMemory kept between launches,
    ``segment_names`` ({segment: text}) name segments in error messages
    (also segments not in ``segments``, such as freed ones; the key None
    names any other segment). ``slice_options`` (``memory``, ``criteria``,
    ``faults`` as for mark_slice, e.g. ``{"criteria": "effects"}``) choose the slice of
    a hybrid run instead of the module's requested one, and
    ``memory_counters`` / ``bank_bytes`` are launch()'s. A hybrid run may
    execute one CTA per equivalence class (docs/cta-equivalence.md) unless
    ``cta_equivalence=False`` or the slice keeps writes to global memory
    (``criteria="effects"``: the outputs are needed). ``heap`` (a
    backends.llvm.heap.DeviceHeap) is the device heap that malloc/free use,
    kept by the caller between launches (default: a fresh one per launch);
    ``cooperative``, ``check`` and ``value_profile`` are launch()'s; ``shadow``
    (an initcheck.Shadow kept by the caller) records which bytes were
    written, for ``check="initcheck"``."""
    check_max_steps(max_steps)
    fn, grid, block, mem = configure(module, kernel, grid, block, mode, shared_bytes,
                                     memory_counters, bank_bytes)
    check_option(check, mode)
    check_value_profile(value_profile, mode)
    classes = classes_for_segments(fn, bytes(params), segments, memory)
    threads = place_slice(module, fn, mode, classes, mem, threads, slice_options)
    c, compile_s = compile_timed(module, fn, mode, grid, block, mem, check, value_profile)
    return run_compiled(c, fn, grid, block, bytes(params), segments, shared_bytes,
                        max_steps or DEFAULT_MAX_STEPS, threads,
                        memory=memory, segment_names=segment_names, compile_s=compile_s,
                        cta_equivalence=cta_equivalence and mode == "hybrid", heap=heap,
                        cooperative=cooperative, check=check, shadow=shadow)


def segment_sizes(c, segments: dict) -> dict:
    """{segment: bytes} of the .global variables and the buffers of a launch
    (what the fault checks of CTA classes compare addresses with)."""
    from ptxc.backends.llvm.layout import SEG_GLOBALS
    return {SEG_GLOBALS: c.plan.global_size, **{s: b.nbytes for s, b in segments.items()}}


def count(dims) -> int:
    return dims[0] * dims[1] * dims[2]


def run_compiled(c, fn, grid, block, params, segments, shared_bytes, max_steps, threads,
                 memory=None, segment_names=None, compile_s: float = 0.0,
                 cta_equivalence: bool = False, heap=None, cooperative: bool = False,
                 check: str | None = None, shadow=None):
    """Run compiled kernel ``c`` on ``segments``; the Profile (raises PtxcError).
    With ``check="memcheck"`` invalid accesses are recorded, not raised:
    ``prof.mem_errors`` (memcheck_report.MemcheckError list, first
    occurrence order) and ``prof.mem_error_count``.
    A kernel that calls malloc/free uses ``heap`` (a backends.llvm.heap
    DeviceHeap kept by the caller, or a function making it on first use, as
    the CUDA runtime does), or a fresh one
    for this launch; it runs every CTA (no CTA equivalence: each CTA's calls
    change the heap)."""
    from ptxc.backends.llvm.ops import device_heap
    from ptxc.backends.llvm.layout import spare_segment
    from ptxc.launcher.results import build_profile
    from ptxc.backends.llvm.runtime import Launch, RunError
    from ptxc.launcher.cta_classes import cta_classes
    check_shared(shared_bytes, c.plan.shared_static, fn.name)
    t1 = time.perf_counter()
    if c.uses_heap:
        heap = heap() if callable(heap) else heap      # the CUDA runtime makes it on demand
        heap = heap or device_heap.fresh(segments, c.plan.shift)
        segments = {**segments, heap.seg: heap.array}
        segment_names = {**(segment_names or {}), heap.seg: "the device heap (malloc)"}
    grid_ws = None
    if cooperative:      # the grid-sync workspace (%envreg1:2), zeroed, in a segment of its own
        seg = spare_segment(segments)
        segments = {**segments, seg: np.zeros(64, np.uint8)}
        segment_names = {**(segment_names or {}), seg: "the grid-sync workspace"}
        grid_ws = seg << c.plan.shift
    if not cta_equivalence:
        classes, note = None, "off"
    elif cooperative:
        classes, note = None, "off: a cooperative launch (its CTAs wait for each other)"
    else:
        classes, note = cta_classes(c, fn, grid, block, params, segment_sizes(c, segments))
    t_classes = time.perf_counter() - t1
    from ptxc.launcher.checkers import activate, make_checkers
    log = None
    if "memcheck" in check_tools(check):
        from ptxc.backends.llvm.instruments.memcheck import MemcheckLog
        log = MemcheckLog()
        log.shadow_offsets = tuple(sorted(set(getattr(c.plan, "provenance_shadow", {}).values())))
    init = initcheck_setup(check, shadow)
    if init is not None:
        threads = 1          # CTAs in linear order: one answer for racing CTAs (docs/check.md)
    checkers = make_checkers(c, check_tools(check), cooperative)   # racecheck, synccheck
    run = Launch(c, grid, block, params, segments, shared_bytes, max_steps, threads, memory=memory,
                 grid_ws=grid_ws, memcheck=log, heap=heap if c.uses_heap else None)
    try:
        with initcheck_active(run, init), inject_session.launch(c, fn, grid, block), \
                activate(run, checkers):
            counts = run.run(classes)
    except RunError as e:
        sizes = space_sizes(run, segment_names or {})
        sizes["shift"], sizes["params"] = c.plan.shift, bytes(params)
        err = run_error(c, fn, grid, block, e, max_steps, sizes, run.output.assertions(e.cta))
        device_fault(err, e.code, run.output.printf(e.cta), run.output.assertions(e.cta))
        raise err from None
    t2 = time.perf_counter()
    prof = build_profile(c, counts, run.per_cta, fn, c.mode, grid, block)
    prof.printf = run.output.printf()
    prof.timings = {"compile": compile_s, "run": t2 - t1, "cta_classes": t_classes, **c.timings}
    prof.ctas_launched, prof.ctas_run, prof.cta_equivalence = run.nctas, run.ctas_run, note
    if log is not None:
        from ptxc.check.memcheck import describe_errors
        sizes = space_sizes(run, segment_names or {})
        sizes["shift"], sizes["params"] = c.plan.shift, bytes(params)
        prof.mem_errors = describe_errors(c, fn, log, sizes)
        prof.mem_error_count = log.total()
    if init is not None:
        from ptxc.check.initcheck import describe_uninit
        sizes = space_sizes(run, segment_names or {})
        sizes["shift"] = c.plan.shift
        prof.init_errors = describe_uninit(c, fn, init[1], sizes)
        prof.init_error_count = init[1].total()
    if c.value_profile:
        from ptxc.launcher.results_value import value_entries
        from ptxc.valueprof.value_profile import make
        prof.value_profile = make(value_entries(c, counts))
    if checkers:
        from ptxc.launcher.checkers import attach
        attach(prof, c, fn, block, checkers)
    return prof


def initcheck_setup(check, shadow):
    """(Shadow, its log) of an initcheck launch (a fresh Shadow tracks
    nothing: launch()'s arrays come from the host, so they are initialised),
    else None."""
    if "initcheck" not in check_tools(check):
        return None
    from ptxc.backends.llvm.instruments.initcheck import Shadow
    from ptxc.backends.llvm.instruments.memcheck import MemcheckLog
    return (shadow if shadow is not None else Shadow()), MemcheckLog()


def initcheck_active(run, init):
    """The context of an initcheck launch: its shadow in the segment table,
    its log active for the callback."""
    from contextlib import nullcontext
    if init is None:
        return nullcontext()
    from ptxc.backends.llvm.instruments.initcheck import active, install
    from ptxc.backends.llvm.runtime import ptr
    install(run.seg_template, init[0])
    return active(ptr(run.L), init[0], init[1])


def private_buffers(c, mode: str, buffers: list, arrays: list) -> list:
    """The byte buffers the kernel runs on. A full run works in place on
    contiguous writeable arrays (what a GPU does); a hybrid run never changes
    the caller's arrays: it copies a buffer only when the slice may store to
    global memory. Buffers whose memory overlaps (one array bound to two
    parameters, overlapping views) are copied together, so that the copies
    overlap as the originals do."""
    need = []
    for buf, (_, orig) in zip(buffers, arrays):
        shared = np.shares_memory(buf, orig) and not isinstance(orig, Scratch)
        need.append(shared and ((mode == "hybrid" and c.writes_global) or
                                (mode == "full" and not orig.flags.writeable)))
    out = list(buffers)
    for group in overlap_groups(buffers):
        if any(need[k] for k in group):
            for k, copy in zip(group, copy_together([buffers[k] for k in group])):
                out[k] = copy
    return out


class Scratch(np.ndarray):
    """A buffer ptxc made for a launch itself (module_profile.lazy_zeros: the
    zero-filled placeholders of a full run or --zero-fill): no caller sees
    it, so a run works on it in place and never copies it (4 GiB)."""


def byte_span(buf: np.ndarray) -> tuple[int, int]:
    lo = buf.__array_interface__["data"][0]
    return lo, lo + buf.nbytes


def overlap_groups(buffers: list) -> list[list[int]]:
    """Indices of contiguous uint8 buffers grouped by overlapping memory
    (merging of sorted intervals); empty buffers are alone."""
    order = sorted((byte_span(b), k) for k, b in enumerate(buffers))
    groups: list[list[int]] = []
    hi = None
    for (lo, end), k in order:
        if buffers[k].nbytes and groups and hi is not None and lo < hi:
            groups[-1].append(k)
            hi = max(hi, end)
        else:
            groups.append([k])
            hi = end if buffers[k].nbytes else None
    return groups


def copy_together(bufs: list) -> list:
    """Copies of overlapping contiguous buffers that overlap in one new array
    (the union of overlapping intervals has no gap, so only their bytes are read)."""
    if len(bufs) == 1:
        return [bufs[0].copy()]
    import ctypes
    from ptxc.backends.llvm.runtime import aligned
    spans = [byte_span(b) for b in bufs]
    lo, hi = min(s[0] for s in spans), max(s[1] for s in spans)
    whole = aligned(hi - lo)
    whole[:] = np.ctypeslib.as_array((ctypes.c_uint8 * (hi - lo)).from_address(lo))
    return [whole[s[0] - lo:s[1] - lo] for s in spans]


def compile_for_launch(module, fn, mode: str, level: int, memory: int = 0):
    """Compile ``fn``; on the second kernel of one module analysed in hybrid
    mode, compile every remaining kernel of the module in one batch (one LLVM
    module: its fixed cost dominates small kernels). ``memory``: the memory
    counters' bank width (0 = off; such launches are compiled one by one)."""
    from ptxc.backends.llvm import jit
    if memory:
        return jit.compile_kernel(module, fn, mode, level, memory=memory)
    if mode == "hybrid" and not jit.is_compiled(module, fn, mode, level) and len(module.kernels) > 2:
        seen = module.attrs.setdefault("hybrid_launched", set())
        seen.add(fn.name)
        if len(seen) >= 2:
            rest = [k for k in module.kernels if not jit.is_compiled(module, k, mode, level)]
            if fn not in rest:
                rest.append(fn)
            for k in rest:
                ensure_slice(module, k)
            jit.compile_many(module, rest, mode, level, skip_errors=True)
    return jit.compile_kernel(module, fn, mode, level)


def compile_launches(module, launches, mode: str, faults: str | None = None) -> dict:
    """Compile the kernels of several launches ``[(fn, grid, block)]`` ahead of
    running them, in one LLVM module per optimisation level (the launches then
    find them compiled). Kernels that cannot be compiled are left for their
    launch to report. Returns the seconds spent: {"codegen", "llvm"}. A
    hybrid kernel is compiled with the slice its launch will select for
    distinct buffers (launch_alias.guessed_classes), so the launch finds it;
    ``faults`` is the slice option those launches will use (default: checked)."""
    from ptxc.backends.llvm import jit
    from ptxc.launcher.alias import guessed_classes
    by_level: dict[int, list] = {}
    for fn, grid, block in launches:
        if mode == "hybrid":
            ensure_launch_slice(module, fn, guessed_classes(fn), faults=faults)
        by_level.setdefault(jit.choose_level(fn, mode, count(grid) * count(block)), []).append(fn)
    if not by_level:
        return {"codegen": 0.0, "llvm": 0.0}
    t0 = time.perf_counter()
    jit.runtime()                       # LLVM's start-up and the CTA loop (once per process)
    spent = {"codegen": 0.0, "llvm": time.perf_counter() - t0}
    for level, fns in by_level.items():
        for c in jit.compile_many(module, fns, mode, level, skip_errors=True):
            for key in spent:
                spent[key] += c.timings.get(key, 0.0) if c is not None else 0.0
    return spent


def device_fault(err: PtxcError, code: int, printf: list, assertions: list) -> None:
    """Attach to a run-time error what a CUDA runtime needs to turn it into
    the GPU's error (ptxc/runtime): the executor's error code
    (``err.device_code``, layout.ERR_*), the printf records of the launch up
    to the failing CTA (``err.printf``) and the failed assertions' lines
    (``err.assertions``)."""
    err.device_code, err.printf, err.assertions = code, printf, assertions


ERR_TEXT = {1: "out-of-bounds access", 2: "misaligned access", 5: "trap",
            6: "not supported yet", 4: "reconvergence stack overflow",
            12: "free() of an address malloc did not return",
            13: "stopped: another CTA of the cooperative launch failed, or no CTA made progress "
                "(a grid-wide wait that never ends)",
            14: "device assertion failed",
            20: "whole-warp matrix instruction (.aligned) executed by only part of the warp "
                "(the PTX ISA requires all 32 lanes)"}


def run_error(c, fn, grid, block, e, max_steps, run_sizes=None, assertions=()) -> PtxcError:
    from ptxc.backends.llvm import layout as Lo
    from ptxc.errors import SrcLoc
    plan = c.plan
    cx = e.cta % grid[0]
    cy = (e.cta // grid[0]) % grid[1]
    cz = e.cta // (grid[0] * grid[1])
    t = e.warp * 32 + e.lane
    tx, ty, tz = t % block[0], (t // block[0]) % block[1], t // (block[0] * block[1])
    where = f"kernel {fn.name}, CTA ({cx},{cy},{cz}), "
    if e.code == Lo.ERR_STEPS:
        node = plan.nodes[e.instr_id] if 0 <= e.instr_id < len(plan.nodes) else None
        label = node.block.label or node.block.name if node else "?"
        body = node.block.body if node else []
        loc = body[0].loc if body else None
        line = f", line {loc.line}" if loc else ""
        return PtxcError(f"{where}warp {e.warp}: no termination within {max_steps} block executions "
                         f"per warp; still looping in block {label} of {node.inst.fn.name if node else '?'}"
                         f"{line} (raise max_steps if the kernel needs more)", loc)
    if e.code == Lo.ERR_STACK:
        return PtxcError(f"{where}warp {e.warp}: internal error: reconvergence stack overflow")
    inst, ins = plan.instr_table[e.instr_id]
    loc = ins.loc
    what = ERR_TEXT.get(e.code, f"error {e.code}")
    if e.code == Lo.ERR_TEX:
        from ptxc.backends.llvm.ops.texture import error_text
        what = error_text(e.cta)
    text = f"{where}thread ({tx},{ty},{tz}): {what}"
    if e.code == Lo.ERR_PARTIAL_WARP:
        text = f"{where}warp {e.warp}: {what} (lanes executing: 0x{e.addr:08x})"
    if e.code == Lo.ERR_UNSUPPORTED:
        text += f": {c.unsupported.get(e.instr_id, ins.full_opcode)} at line {loc.line}"
    else:
        text += f" at line {loc.line} ({ins.full_opcode})"
    if e.code in (Lo.ERR_OOB, Lo.ERR_MISALIGNED, Lo.ERR_BAD_FREE):
        text += f", address 0x{e.addr:x}{describe_address(e.addr, ins, run_sizes)}"
    if e.code == Lo.ERR_OOB:
        from ptxc.launcher.provenance_message import started_from
        text += started_from(c.plan, inst, ins, e.addr, run_sizes or {}, getattr(e, "ws", None), e.lane)
    if e.code == Lo.ERR_ASSERT and assertions:
        text += f": {assertions[0].strip()}"
    if inst.parent is not None:
        text += f" in {inst.fn.name} called from line {inst.call.loc.line}"
    return PtxcError(text, SrcLoc(loc.file, loc.line, loc.col) if loc else None)


def space_sizes(run, segment_names: dict) -> dict:
    """Sizes of the state spaces and the name and size of each device segment (messages)."""
    return {"shared": run.shared_total, "local": run.local_size, "const": run.c.plan.const_size,
            "param": run.c.plan.param_size,
            "buffers": {seg: (segment_names.get(seg, f"segment {seg}"), b.nbytes)
                        for seg, b in run.segments.items()},
            "names": segment_names}


def describe_address(addr: int, ins=None, sizes=None, space: str | None = None) -> str:
    """' (what the address points into)' for an error message; ``space``
    (default: the instruction's) is the state space ``addr`` is in."""
    from ptxc.backends.llvm import layout as Lo
    from ptxc.backends.llvm.ops.access import space_of
    sizes = sizes or {}
    space = space or (space_of(ins) if ins is not None else "generic")
    if space in ("shared", "local", "const", "param"):
        return f" (offset {addr} in .{space} memory of {sizes.get(space, '?')} bytes)"
    shift = sizes.get("shift", 32)
    seg, off = addr >> shift, addr & ((1 << shift) - 1)
    names = {Lo.SEG_NULL: "no buffer: a null or wild pointer", Lo.SEG_SHARED: "the shared window",
             Lo.SEG_LOCAL: "the local window", Lo.SEG_PARAM: "the parameter space",
             Lo.SEG_CONST: "the .const variables", Lo.SEG_GLOBALS: "the .global variables"}
    buffers = sizes.get("buffers", {})
    if seg in buffers and off < buffers[seg][1]:
        name, n = buffers[seg]
        return f" ({name} + {off}; its size is {n} bytes)"
    others = sizes.get("names", {})
    if seg in others and seg not in buffers:            # a freed allocation
        return f" ({others[seg]} + {off})"
    near = nearest_buffer(addr, buffers, shift)
    if near and (seg in buffers or seg + 1 in buffers or seg >= Lo.SEG_GLOBALS):
        return f" ({near})"
    if seg >= Lo.SEG_FIRST_BUFFER and (seg in others or None in others):
        return f" ({others[seg] if seg in others else others[None]}{' + %d' % off if seg in others else ''})"
    if seg >= Lo.SEG_FIRST_BUFFER:
        return f" (buffer {seg - Lo.SEG_FIRST_BUFFER} + {off})"
    return f" ({names.get(seg, 'segment %d' % seg)}{' + %d' % off if seg else ''})"


def nearest_buffer(addr: int, buffers: dict, shift: int) -> str:
    """Where ``addr`` lies relative to the nearest buffer, as a signed
    distance a user checks at once: '8 bytes before allocation #5
    (cudaMalloc 16384 bytes at 0x600000000)', 'right after the end of ...',
    '24 bytes after the end of ...' ('' without buffers)."""
    best = None
    for seg, (name, n) in buffers.items():
        base = seg << shift
        if addr < base:
            d, text = base - addr, f"{base - addr} bytes before {{}}"
        else:
            d = addr - (base + n)
            text = "right after the end of {}" if d == 0 else f"{d} bytes after the end of {{}}"
        if best is None or d < best[0]:
            best = (d, text.format(with_base(name, base, n)))
    return best[1] if best else ""


def with_base(name: str, base: int, n: int) -> str:
    """'allocation #5 (cudaMalloc 16384 bytes)' -> '... 16384 bytes at 0x600000000)';
    a name without its size gets it: 'buffer of parameter out (128 bytes at 0x...)'."""
    if name.endswith(")") and "bytes" in name:
        return f"{name[:-1]} at 0x{base:x})"
    if name.endswith(")"):
        return f"{name[:-1]}, {n} bytes at 0x{base:x})"
    return f"{name} ({n} bytes at 0x{base:x})"
