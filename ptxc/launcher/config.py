"""A launch's configuration: the kernel, the grid and block, the mode and the
memory-counter setting, each checked before anything is compiled or run
(docs/launch.md).
"""
from __future__ import annotations

from ptxc.errors import PtxcError
from ptxc.ir.names import kernel_label
from ptxc.launcher.limits import check_dims, check_shared


MODES = ("hybrid", "full")


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


def find_kernel(module, kernel):
    """The kernel ``kernel`` names (a Function passes through; None: the
    module's only kernel), by the naming rule of ptxc/ir/names.py."""
    from ptxc.ir import Function
    if isinstance(kernel, Function):
        return kernel
    from ptxc.ir.names import find_kernel as find
    return find(module, kernel)


def default_block(fn):
    d = fn.reqntid or fn.maxntid
    if d is None:
        raise PtxcError(f"{kernel_label(fn)}: give a block size (--block); the kernel has no "
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
        raise PtxcError(f"{kernel_label(fn)}: {n} threads per block (at most 1024)")
    if fn.reqntid and tuple(fn.reqntid) + (1,) * (3 - len(fn.reqntid)) != block:
        raise PtxcError(f"{kernel_label(fn)}: .reqntid {tuple(fn.reqntid)} requires block {tuple(fn.reqntid)}, "
                        f"got {block}", fn.loc)
    check_dims(grid, block)         # every grid CUDA accepts: x < 2**31, y and z <= 65535
    if shared_bytes < 0:
        raise PtxcError("dynamic shared memory size must be >= 0")
    check_shared(shared_bytes)


def memory_setting(memory_counters: bool, bank_bytes: int) -> int:
    """The compiled kernels' memory-counter setting: the shared-memory bank
    width in bytes, or 0 when the memory counters are off."""
    if bank_bytes not in (4, 8):
        raise PtxcError(f"shared-memory bank width must be 4 or 8 bytes, got {bank_bytes}")
    return bank_bytes if memory_counters else 0
