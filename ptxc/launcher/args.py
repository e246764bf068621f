"""A launch's arguments (docs/launch.md, "Arguments"): numpy arrays, numbers,
bytes, texture and surface objects bound to the kernel's parameters (one
buffer segment per array, its generic address in the parameter), the
parameters a hybrid run needs (the slice's control inputs), and the CLI's
``NAME=VALUE`` strings with their generators (``zeros:f32:1024`` ...).
"""
from __future__ import annotations

import re
import struct

import numpy as np

from ptxc.errors import PtxcError
from ptxc.ir import names
from ptxc.ir.names import kernel_label, source_names
from ptxc.ir.types import TYPE_SIZES
from ptxc.launcher.limits import check_buffer_size


GENERATORS = ("zeros", "ones", "arange", "random", "full")
DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8, "i16": np.int16,
          "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32,
          "u64": np.uint64, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
          "b8": np.uint8, "b16": np.uint16, "b32": np.uint32, "b64": np.uint64}


def is_pointer_param(p, addr_bits: int = 64) -> bool:
    """Can the parameter hold an address (so an array argument is a buffer)?"""
    if p.dims:
        return False
    return p.type in (("u64", "b64", "s64") if addr_bits == 64 else ("u32", "b32"))


def addr_bits(fn) -> int:
    from ptxc.backends.llvm.layout import address_bits
    return address_bits(fn.module) if fn.module is not None else 64


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
    source = source_names(fn)
    rows = []
    for i, p in enumerate(fn.params):
        dims = "".join(f"[{d}]" for d in p.dims)
        mark = "" if ctl is None else (" (control input)" if p.name in ctl else "")
        name = f" '{source[i]}'" if source[i] else ""
        rows.append(f"  {i}: .{p.type}{dims} {p.name}{name}{mark}")
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


def arg_error(fn, msg: str, loc=None) -> PtxcError:
    """A one-line error about the kernel's arguments, at ``loc`` (default:
    the kernel's name) with its PTX line and a caret, then the parameter
    table."""
    from ptxc.errors import module_line
    loc = loc or fn.loc
    return PtxcError(f"{kernel_label(fn)}: {msg}", loc, module_line(fn.module, loc),
                     notes=f"parameters:\n{param_table(fn)}")


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
                                + ("" if mode == "full" else control_note(fn, ctl)), p.loc)
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
    """The parameter ``key`` names: its index, PTX name or source name
    (the rule of ptxc/ir/names.py)."""
    return names.param_index(fn, key, lambda msg: arg_error(fn, msg))


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
        v = v.handle                    # ptxc.texture / ptxc.surface (backends/llvm/ops/texture_objects.py)
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
        return load_npy(fn, text[1:])
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


def load_npy(fn, path: str):
    """The array in the NumPy .npy file ``path`` (``--arg N=@file.npy``):
    anything else (an empty file, a .npz, text, pickled objects, a file too
    large for this host) is a one-line error at the kernel."""
    def error(why: str) -> PtxcError:
        return PtxcError(f"{'kernel ' + fn.name + ': ' if fn else ''}cannot read '{path}': {why}",
                         fn.loc if fn else None)
    try:
        with open(path, "rb") as fh:
            magic = fh.read(6)
            fh.seek(0)
            if magic != b"\x93NUMPY":
                raise error(("an empty file" if not magic else "not a NumPy .npy file")
                            + " (write it with numpy.save)")
            value = np.load(fh, allow_pickle=False)
    except OSError as e:
        raise error(e.strerror or str(e)) from None
    except (ValueError, EOFError, MemoryError) as e:
        why = "too large for this host's memory" if isinstance(e, MemoryError) else \
            (str(e).splitlines() or ["malformed"])[0][:120]
        raise error(f"not a valid .npy file ({why})") from None
    if not isinstance(value, np.ndarray) or value.dtype.hasobject:
        raise error("not an array of numbers")
    return value


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
                          f"{kernel_label(fn) + ': ' if fn else ''}buffer '{':'.join(parts)}'")
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
