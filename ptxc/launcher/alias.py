"""Which allocation each pointer argument of a launch points into.

The slice's ``memory=launch`` mode (passes/slice/alias_rules.py, docs/slice.md)
takes, per kernel, the *class* of every pointer-wide parameter: the
allocation its value points into. Two parameters get the same class when
their values lie in the same segment, or in segments whose host memory
overlaps (``launch(args=[a, a])`` binds one array twice: two segments, one
memory). A value in the module's ``.global`` segment, or in a segment whose
memory overlaps the module's variables, has class ``globals``. A null
pointer, an address in a state-space window (shared, local, param, const),
an address in no segment of the launch, or a value we cannot see gets no
class (the slice treats accesses through it conservatively).

Class names are given in parameter order (``b0``, ``b1`` ...), so two
launches with the same aliasing pattern share one slice variant.
"""
from __future__ import annotations

import struct

import numpy as np

GLOBALS = "globals"


def _layout():
    from ptxc.backends.llvm import layout
    return layout


def pointer_params(fn) -> list[tuple[int, object]]:
    """(index, parameter) of the parameters wide enough to hold an address."""
    from ptxc.launcher.args import addr_bits, is_pointer_param
    bits = addr_bits(fn)
    return [(i, p) for i, p in enumerate(fn.params) if is_pointer_param(p, bits)]


def guessed_classes(fn) -> tuple:
    """One allocation per pointer parameter: what launch() gives for distinct
    arrays (the slice variant that compiling a whole module assumes)."""
    got = fn.attrs.get("guessed_alias")
    if got is None:
        got = fn.attrs["guessed_alias"] = tuple(
            (p.name, f"b{k}") for k, (_, p) in enumerate(pointer_params(fn)))
    return got


class _Namer:
    """Class names by first appearance; overlapping memory joins a group."""

    def __init__(self, globals_memory=None):
        self.groups: list[tuple[list, str]] = []     # (host arrays, class)
        self.globals_memory = globals_memory
        self.next = 0

    def of_memory(self, arrays: list) -> str:
        if self.globals_memory is not None and any(
                np.may_share_memory(a, self.globals_memory) for a in arrays if a.size):
            return GLOBALS
        for members, cls in self.groups:
            if any(np.may_share_memory(a, b) for a in arrays for b in members if a.size and b.size):
                members.extend(arrays)
                return cls
        cls = f"b{self.next}"
        self.next += 1
        self.groups.append((list(arrays), cls))
        return cls


def classes_for_values(fn, values: dict) -> tuple:
    """Classes for ``launch()``: ``values`` maps parameter index -> argument
    (a numpy array is its own segment; a missing argument of a hybrid run
    becomes an empty buffer; an integer is a raw address)."""
    lay = _layout()
    shift = lay.seg_shift(fn.module) if fn.module is not None else 32
    namer = _Namer()
    out = []
    for i, p in pointer_params(fn):
        v = values.get(i)
        if v is None:
            cls = namer.of_memory([])
        elif isinstance(v, np.ndarray):
            cls = namer.of_memory([v])
        elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            cls = GLOBALS if int(v) >> shift == lay.SEG_GLOBALS else None
        else:
            cls = None
        if cls is not None:
            out.append((p.name, cls))
    return tuple(out)


def param_offsets(fn) -> list[int]:
    """Byte offset of each parameter in the parameter buffer (args.bind_args)."""
    from ptxc.backends.llvm.plan import align_up, var_align
    offs, end = [], 0
    for p in fn.params:
        off = align_up(end, var_align(p))
        offs.append(off)
        end = off + p.size
    return offs


def classes_for_segments(fn, params: bytes, segments: dict, memory=None) -> tuple:
    """Classes for ``launch_segments()``: pointer values read from the
    parameter bytes, segments as the caller manages them (``memory``: the
    ModuleMemory whose .global variables the launch uses, if any)."""
    lay = _layout()
    shift = lay.seg_shift(fn.module) if fn.module is not None else 32
    namer = _Namer(memory.globals if memory is not None else None)
    offs = param_offsets(fn)
    by_segment: dict[int, str] = {}
    out = []
    for i, p in pointer_params(fn):
        fmt = "<Q" if p.size == 8 else "<I"
        if offs[i] + p.size > len(params):
            continue
        value, = struct.unpack_from(fmt, params, offs[i])
        seg = value >> shift
        if seg == lay.SEG_GLOBALS:
            cls = GLOBALS
        elif seg >= lay.SEG_FIRST_BUFFER and seg in segments:
            if seg not in by_segment:
                by_segment[seg] = namer.of_memory([segments[seg]])
            cls = by_segment[seg]
        else:
            cls = None
        if cls is not None:
            out.append((p.name, cls))
    return tuple(out)


def classes_for_arg_strings(fn, items) -> tuple:
    """Classes for the CLI's ``--arg NAME=VALUE`` strings, without generating
    the arrays: every generated or loaded array is a buffer of its own, a
    number is a raw address (as launch_from_options will bind them)."""
    from ptxc.launcher.args import GENERATORS, param_index, parse_value
    values = {}
    for item in items:
        name, _, text = item.partition("=")
        text = text.strip()
        if text.startswith("@") or text.split(":")[0] in GENERATORS:
            values[param_index(fn, name.strip())] = np.zeros(1, np.uint8)   # a placeholder
        else:
            values[param_index(fn, name.strip())] = parse_value(fn, text)
    return classes_for_values(fn, values)


def all_guesses(module, skip: str) -> dict:
    return {k.name: guessed_classes(k) for k in module.kernels if k.name != skip}


def ensure_launch_slice(module, fn, classes, criteria: str | None = None,
                        memory: str | None = None, addresses: bool = False,
                        faults: str | None = None) -> None:
    """Put the slice a hybrid launch of ``fn`` runs in place: the module's
    requested slice (``mark_slice`` / the ``slice`` pass), by default
    ``memory=launch`` specialised to ``classes``; ``criteria`` / ``memory``
    / ``faults`` given by the caller (launch_segments' slice options,
    ``launch(check_faults=False)``) override the request, and ``addresses``
    (memory counters) adds the address slice."""
    try:
        from ptxc.passes.slice.slice_pass import select_launch_slice, select_slice
    except ImportError:                 # no slice pass: a hybrid run executes everything
        return
    request = module.attrs.get("slice_request") or {}
    memory = memory or request.get("memory", "launch")
    criteria = criteria or request.get("criteria", "counters")
    addresses = addresses or request.get("addresses", False)
    faults = faults or request.get("faults") or "checked"
    if memory != "launch":
        current = module.attrs.get("slice") or {}
        if fn.attrs.get("sliced") and current.get("memory") == memory \
                and current.get("criteria") == criteria \
                and current.get("addresses", False) == addresses \
                and current.get("faults", "unchecked") == faults:
            return                      # the pipeline's marks (possibly emit=sliced)
        select_slice(module, memory=memory, criteria=criteria, addresses=addresses,
                     faults=faults)
        return
    select_launch_slice(module, fn.name, classes, criteria, all_guesses(module, fn.name),
                        addresses=addresses, faults=faults)


def launch_slice_for_options(module, opts: dict, criteria: str, addresses: bool = False,
                             faults: str = "unchecked") -> dict:
    """The slice pass with a launch configured: the reports of the slice that
    ``launch_from_options(module, opts)`` will run."""
    from ptxc.errors import PtxcError
    from ptxc.launcher.config import find_kernel
    from ptxc.passes.slice.slice_pass import select_launch_slice
    try:
        fn = find_kernel(module, opts.get("kernel"))
        classes = classes_for_arg_strings(fn, opts.get("args") or [])
    except PtxcError:                   # the count pass reports the bad launch
        variants = module.attrs["slice_variants"]
        return variants[module.attrs["slice_variant"]].reports
    return select_launch_slice(module, fn.name, classes, criteria, all_guesses(module, fn.name),
                               addresses=addresses, faults=faults)
