"""Profile every kernel of a module: one launch per kernel, one row each.

``profile_module(module, launches, args, mode, ..., launch_file=, zero_fill=,
per_cta=)`` decides a launch for every kernel, runs the launchable ones with
``ptxc.launcher.launch`` and returns a :class:`ModuleProfile` (rows and the
module total; rendering in module_render.py; the user's view in
docs/profile.md). A kernel's launch is, in this order:

1. explicit: ``launches[kernel] = (grid, block)`` (``block`` None: .reqntid,
   then .maxntid);
2. file: an entry of the launch file (ptxc/launcher/launch_file.py);
3. inferred: the linear-index bound check of an XLA-style kernel
   (``ptxc.passes.launch_infer``), with the PTX line it came from;
4. one CTA (``per_cta``, on by default): grid 1x1x1 and block .reqntid, else
   .maxntid, else DEFAULT_BLOCK (256 threads, the row says so), the way
   HyPA runs every kernel. The row holds the counters of CTA (0,0,0) of a
   one-CTA grid (which is CTA (0,0,0) of any launch of the kernel with that
   block unless it reads %nctaid or memory other CTAs write); they are not
   scaled to a launch, and the row and the total say so;
5. none (``per_cta=False``): not launched, with the reason. A row that is
   not launched keeps no launch of its own choosing: its grid and block are
   the ones given (explicit or file) or inferred, never a one-CTA fallback.

Arguments: ``args[kernel]`` is a list of ``NAME=VALUE`` strings (the launch
syntax of docs/launch.md) or a dict; they replace the launch file's
arguments parameter by parameter. A kernel whose slice reads a parameter
or memory through a parameter (its *control inputs*, passes/slice_report)
that has no argument is not launched: its counters depend on data the PTX
does not hold. With ``zero_fill`` a pointer parameter whose *memory* is a
control input gets a zero-filled buffer instead (the row lists it); a
parameter whose value is a control input still needs an argument.
Arguments that are not control inputs may be left out: a hybrid run never
reads them (launch() passes zeros / empty buffers); a full run gets zeros
and, for each pointer, a zero-filled buffer of the largest size a segment
can address (2^32 bytes, 2^24 for 32-bit modules): an anonymous mapping
(MAP_NORESERVE where Linux has it), so the OS provides only the pages the
kernel touches; since no control input reads it, the counters do not depend
on its contents.

Hybrid rows run without fault checks (``check_faults=False``, docs/slice.md):
the checks would need the buffers that arguments left out do not have. A
full run (``--mode full``) checks every access.
"""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field

from ptxc.errors import PtxcError
from ptxc.ir.names import kernel_label
from ptxc.launcher.profile import TOTALS

FAULTS = "unchecked"        # hybrid rows: no fault checks (module doc)

EXPLICIT, FILE, INFERRED, ONE_CTA = "explicit", "file", "inferred", "one CTA: grid unknown"
DEFAULT_BLOCK = (256, 1, 1)     # a one-CTA row's block when the kernel names none
DEFAULT_BLOCK_FROM = "default (no .reqntid or .maxntid)"
RAN, SKIPPED, FAILED = "ran", "not launched", "error"
ZERO_FILLED = "zero-filled"


@dataclass
class KernelRow:
    """One kernel: its launch (or why there is none) and its profile."""
    kernel: str
    status: str
    grid: tuple | None = None
    block: tuple | None = None
    source: str = ""
    inferred: object = None           # passes.launch_infer.InferredLaunch
    reason: str = ""
    profile: object = None            # ptxc.launcher.profile.Profile
    seconds: float = 0.0
    args: dict = field(default_factory=dict)
    where: str = ""                   # FILE: the launch file entry ('l.csv:3')
    block_from: str = ""              # '.reqntid' / '.maxntid' when no block was given
    no_launch: str = ""               # ONE_CTA: why the whole launch is unknown
    reads_nctaid: bool = False        # ONE_CTA: the kernel sees %nctaid = 1
    zero_filled: list = field(default_factory=list)   # parameters run on zero-filled memory
    counts: dict | None = None        # set by a split run (split.py): static counts
    profile_json: dict | None = None  # ... and the JSON profile, made where the IR is

    @property
    def per_cta(self) -> bool:
        return self.source == ONE_CTA

    @property
    def inputs(self) -> str:
        return ZERO_FILLED if self.zero_filled else "given"


@dataclass
class ModuleProfile:
    module: object
    mode: str
    rows: list = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    counts_total: dict | None = None   # a split run (split.py): the count pass's total

    @property
    def ran(self) -> list:
        return [r for r in self.rows if r.status == RAN]

    def total(self) -> dict:
        """Sums of the counters of the kernels that ran, METRICS.md's ratios
        recomputed from the sums; how many of those rows hold one CTA's
        counters (``per_cta_rows``) and ran on zero-filled inputs."""
        out = {k: sum(getattr(r.profile, k) for r in self.ran) for k in TOTALS}
        out["threads"] = sum(_count(r.grid) * _count(r.block) for r in self.ran)
        out["kernels_run"] = len(self.ran)
        out["kernels"] = len(self.rows)
        out["per_cta_rows"] = sum(1 for r in self.ran if r.per_cta)
        out["zero_filled_rows"] = sum(1 for r in self.ran if r.zero_filled)
        add_efficiencies(out)
        return out


def add_efficiencies(total: dict) -> None:
    """METRICS.md's two efficiencies of summed counters (``total``: the
    TOTALS sums and ``kernels_run``); None when no kernel was measured."""
    b, n = total["branch"], total["inst_executed"]
    total["branch_efficiency"] = round(100.0 * (b - total["divergent_branch"]) / b, 6) if b else 100.0
    total["warp_execution_efficiency"] = (round(100.0 * total["thread_inst_executed"] / (32 * n), 6)
                                          if n else 0.0)
    if not total["kernels_run"]:
        total["branch_efficiency"] = total["warp_execution_efficiency"] = None


def _count(dims) -> int:
    return dims[0] * dims[1] * dims[2]


# ---------------------------------------------------------------- driver
def profile_module(module, launches: dict | None = None, args: dict | None = None,
                   mode: str = "hybrid", kernels=None, threads: int | None = None,
                   max_steps: int | None = None, *, launch_file=None, zero_fill: bool = False,
                   per_cta: bool = True, value_profile: bool = False,
                   jobs: int | None = None) -> ModuleProfile:
    """Run every kernel of ``module`` (or those named in ``kernels``).
    ``launch_file``: a path (ptxc/launcher/launch_file.py) or ``{kernel: FileLaunch}``;
    ``zero_fill``: run kernels whose control flow reads memory that has no
    argument on zero-filled buffers; ``per_cta``: one-CTA rows for kernels
    with no launch (see the module doc); ``value_profile``: profile every
    register write of each launch (a full run; docs/value-profile.md);
    ``jobs``: processes that share the compiles and launches
    (ptxc/profile/fork.py; default 1; one with ``value_profile``)."""
    from ptxc.launcher.checks import check_value_profile
    from ptxc.launcher.config import MODES
    if mode not in MODES:
        raise PtxcError(f"unknown mode '{mode}' (use 'hybrid' or 'full')")
    check_value_profile(value_profile, mode)
    launches, args, kernels = by_ptx_name(module, launches, args, kernels)
    filed = read_launch_file(module, launch_file)
    chosen = select_kernels(module, kernels, launches, args)
    result = ModuleProfile(module, mode)
    t0 = time.perf_counter()
    if chosen:      # slices every function of the module, as the launches will (distinct buffers)
        from ptxc.launcher.alias import ensure_launch_slice, guessed_classes
        ensure_launch_slice(module, chosen[0], guessed_classes(chosen[0]), faults=FAULTS)
    t1 = time.perf_counter()
    rows = [plan_row(module, fn, launches.get(fn.name), args.get(fn.name), mode,
                     filed.get(fn.name), zero_fill, per_cta) for fn in chosen]
    t2 = time.perf_counter()
    todo = [r for r in rows if r.status == RAN]
    from ptxc.profile.fork import processes
    n = 1 if value_profile else processes(len(todo), jobs)
    if n > 1:
        from ptxc.profile.fork import run_rows
        compile_s = run_rows(module, todo, mode, threads, max_steps, n, precompile, run_row)
        t3 = t2 + sum(compile_s.values())
    else:
        compile_s = {} if value_profile else precompile(module, todo, mode)
        t3 = time.perf_counter()
        for row in todo:
            run_row(module, row, mode, threads, max_steps, value_profile)
    result.rows = rows
    result.timings = {"slice": t1 - t0, "infer": t2 - t1, **compile_s,
                      "launches": time.perf_counter() - t3}
    return result


def by_ptx_name(module, launches, args, kernels) -> tuple:
    """``launches``, ``args`` and ``kernels`` keyed by the PTX names of the
    kernels they name (any form of ptxc/ir/names.py: ``vadd``, the
    signature, the mangled name); an unknown or ambiguous name is an
    error. Two names of one kernel: its arguments add up, the last launch wins."""
    from ptxc.launcher.config import find_kernel
    out_launches, out_args = {}, {}
    for key, value in (launches or {}).items():
        out_launches[find_kernel(module, key).name] = value
    for key, value in (args or {}).items():
        name = find_kernel(module, key).name
        if isinstance(value, dict):
            out_args.setdefault(name, {}).update(value)
        else:
            out_args.setdefault(name, []).extend(value)
    names = None if kernels is None else [find_kernel(module, k).name for k in kernels]
    return out_launches, out_args, names


def read_launch_file(module, launch_file) -> dict:
    if launch_file is None:
        return {}
    if isinstance(launch_file, (str, os.PathLike)):
        from ptxc.launcher.launch_file import load_launches
        return load_launches(os.fspath(launch_file), module)
    from ptxc.launcher.config import find_kernel
    return {find_kernel(module, name).name: entry for name, entry in launch_file.items()}


def select_kernels(module, names, launches: dict, args: dict) -> list:
    """The kernels to profile (every name is a PTX name: by_ptx_name)."""
    if names:
        wanted = set(names)
        return [k for k in module.kernels if k.name in wanted]
    return list(module.kernels)


def plan_row(module, fn, explicit, arg_items, mode: str, filed=None, zero_fill: bool = False,
             per_cta: bool = True) -> KernelRow:
    """The kernel's launch and arguments, or why it cannot be launched."""
    from ptxc.launcher.config import check_config
    row = KernelRow(fn.name, RAN)
    try:
        check_names(fn, arg_items)
        choose_launch(row, fn, explicit, filed, per_cta)
        check_config(fn, row.grid, row.block, 0)
        row.args = bind_values(fn, arg_items, mode, zero_fill, filed.args if filed else None,
                               row.zero_filled)
    except NotLaunchable as e:
        row.status, row.reason = SKIPPED, e.reason
    except PtxcError as e:
        row.status, row.reason = FAILED, e.message.splitlines()[0]
    if row.status != RAN and row.per_cta:      # the one-CTA launch was ours: nothing ran
        row.grid = row.block = None
        row.source = row.no_launch = row.block_from = ""
        row.reads_nctaid = False
    return row


def check_names(fn, items) -> None:
    """Refuse an argument that names no parameter, also for a kernel that
    will not be launched (the message lists the parameters)."""
    from ptxc.launcher.args import param_index
    if isinstance(items, dict):
        keys = list(items)
    else:
        keys = [item.split("=", 1)[0].strip() for item in items or [] if "=" in item]
    for key in keys:
        param_index(fn, key)


def choose_launch(row: KernelRow, fn, explicit, filed, per_cta: bool) -> None:
    """Sets the row's grid, block and source: explicit, file, inferred, one CTA."""
    from ptxc.launcher.config import default_block, dim3
    if explicit is None and filed is None:
        try:
            inferred = infer(fn)
        except NotLaunchable as e:
            if not per_cta:
                raise
            return one_cta(row, fn, e.reason)
        row.grid, row.block, row.source, row.inferred = (inferred.grid, inferred.block,
                                                         INFERRED, inferred)
        return
    if explicit is not None:
        (grid, block), row.source = explicit, EXPLICIT
    else:
        grid, block, row.source, row.where = filed.grid, filed.block, FILE, filed.where
    row.grid = dim3(grid, "grid")
    if block is None:
        block = default_block(fn)
        row.block_from = ".reqntid" if fn.reqntid else ".maxntid"
    row.block = dim3(block, "block")


def one_cta(row: KernelRow, fn, why: str) -> None:
    """Grid 1x1x1, block .reqntid (else .maxntid, else DEFAULT_BLOCK): the per-CTA row."""
    from ptxc.launcher.config import dim3
    block = fn.reqntid or fn.maxntid or DEFAULT_BLOCK
    row.grid, row.block, row.source, row.no_launch = (1, 1, 1), dim3(block, "block"), ONE_CTA, why
    row.block_from = (".reqntid" if fn.reqntid else ".maxntid" if fn.maxntid
                      else DEFAULT_BLOCK_FROM)
    row.reads_nctaid = reads_nctaid(fn)


def reads_nctaid(fn) -> bool:
    from ptxc.passes.launch_infer import LaunchRefused, reads_grid_size
    try:
        reads_grid_size(fn)
    except LaunchRefused:
        return True
    return False


class NotLaunchable(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def infer(fn):
    from ptxc.passes.domtree import DomTree
    from ptxc.passes.launch_infer import LaunchRefused, infer_launch
    from ptxc.ir.passmanager import AnalysisManager
    try:
        return infer_launch(fn, DomTree.compute(fn, AnalysisManager(fn.module)))
    except LaunchRefused as e:
        raise NotLaunchable(f"no launch given and none inferred: {e.reason}") from None


def bind_values(fn, items, mode: str, zero_fill: bool = False, base: dict | None = None,
                zero_filled: list | None = None) -> dict:
    """{parameter index: value}: ``base`` (the launch file's) updated with
    the given arguments; with ``zero_fill``, zero-filled buffers for pointer
    parameters whose memory is a control input (their names are appended to
    ``zero_filled``); plus (full mode) zeros and conservative buffers for the
    parameters that are not control inputs."""
    from ptxc.launcher.args import control_params, normalise_args, parse_arg_strings
    given = dict(base or {})
    given.update(normalise_args(fn, items) if isinstance(items, dict)
                 else parse_arg_strings(fn, items or []))
    ctl = control_params(fn)
    missing = [p.name for i, p in enumerate(fn.params)
               if i not in given and (ctl is None or p.name in ctl)]
    fill = [n for n in missing if n in memory_params(fn)]
    still = [n for n in missing if not (zero_fill and n in fill)]
    if still:
        raise NotLaunchable(missing_text(fn, still, fill if not zero_fill else []))
    for i, p in enumerate(fn.params):
        if zero_fill and p.name in fill:
            given[i] = zero_buffer(fn)
            if zero_filled is not None:
                zero_filled.append(p.name)
    if mode == "full":
        for i, p in enumerate(fn.params):
            given.setdefault(i, placeholder(fn, p))
    return given


def missing_text(fn, names: list, fillable: list) -> str:
    text = ("its control flow reads data the PTX does not hold: give "
            + ", ".join(f"--arg {fn.name}:{_short(fn, n)}=..." for n in names))
    if fillable:
        text += f" (or --zero-fill for {', '.join(_short(fn, n) for n in fillable)})"
    return text


def memory_params(fn) -> set:
    """Pointer parameters whose memory the slice reads (its control inputs
    ``SPACE:param P``; an unknown global/generic region: every pointer)."""
    from ptxc.launcher.args import addr_bits, is_pointer_param
    rep = fn.attrs.get("slice_report") or {}
    names = set()
    pointers = {p.name for p in fn.params if is_pointer_param(p, addr_bits(fn))}
    for m in rep.get("control_inputs", {}).get("memory", []):
        mo = re.search(r"param (\S+)", m)
        if mo:
            names.add(mo.group(1))
        elif m.split(":", 1)[0] in ("global", "generic") and m.endswith("?"):
            names |= pointers
    return names & pointers


def zero_buffer(fn):
    from ptxc.backends.llvm.layout import seg_shift
    return lazy_zeros(fn, 1 << seg_shift(fn.module))


def _short(fn, name: str) -> str:
    prefix = fn.name + "_"
    return name[len(prefix):] if name.startswith(prefix) else name


def placeholder(fn, p):
    """A value for a parameter no control input reads (full mode)."""
    from ptxc.launcher.args import addr_bits, is_pointer_param
    if is_pointer_param(p, addr_bits(fn)):
        return zero_buffer(fn)
    if p.dims:
        return bytes(p.size)
    return 0


# MAP_NORESERVE of Linux on x86-64 and arm64 (Python's mmap module does not
# export it): the mapping is not charged against the overcommit limit.
MAP_NORESERVE = 0x4000


def lazy_zeros(fn, nbytes: int):
    """A zero-filled uint8 array of ``nbytes`` whose pages the OS maps only
    when the kernel touches them (an anonymous private mapping)."""
    import mmap
    import platform

    import numpy as np

    from ptxc.launcher.buffers import Scratch
    noreserve = MAP_NORESERVE if (platform.system() == "Linux" and
                                  platform.machine() in ("x86_64", "aarch64")) else 0
    try:
        mm = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | noreserve)
        return np.frombuffer(mm, np.uint8).view(Scratch)
    except (OSError, ValueError, AttributeError):
        pass
    try:
        return np.zeros(nbytes, np.uint8).view(Scratch)
    except MemoryError:
        raise PtxcError(f"{kernel_label(fn)}: cannot reserve {nbytes} bytes of address space for "
                        "a pointer argument (full run or --zero-fill); give the pointer "
                        "arguments with --arg")


def precompile(module, rows: list, mode: str) -> dict:
    """Compile the kernels to run in one batch per optimisation level."""
    from ptxc.launcher.compile import compile_launches
    from ptxc.launcher.config import find_kernel
    return compile_launches(module, [(find_kernel(module, r.kernel), r.grid, r.block)
                                     for r in rows], mode, faults=FAULTS)


def run_row(module, row: KernelRow, mode: str, threads, max_steps,
            value_profile: bool = False) -> None:
    from ptxc.launcher.api import launch
    t0 = time.perf_counter()
    try:
        row.profile = launch(module, row.kernel, row.grid, row.block, row.args, mode=mode,
                             threads=threads, max_steps=max_steps, value_profile=value_profile,
                             check_faults=False)
    except PtxcError as e:
        row.status, row.reason = FAILED, e.render().splitlines()[0]
    row.seconds = time.perf_counter() - t0
