"""The launch limits a GPU enforces, checked before a launch runs.

CUDA C++ Programming Guide, "Features and Technical Specifications"
(table "Technical Specifications per Compute Capability"), compute
capability 5.0 and later:

- grid: x up to 2**31 - 1, y and z up to 65535 CTAs;
- block: x and y up to 1024, z up to 64 threads (1024 in all, checked by
  config.check_config);
- shared memory per block: at most the opt-in limit of the GPU
  (227 KiB on the H100, the largest of ptxc's models, runtime/gpus.py).

Also: a step budget must be positive, a generated buffer must fit in the
segment it is bound to (and in host memory), a parameter is given once, and
a full run refuses a read-only array it writes into (the writes could not be
returned to the caller).  Each violation is one PtxcError that says the limit.
"""
from __future__ import annotations

from ptxc.errors import PtxcError

GRID_MAX = (2**31 - 1, 65535, 65535)
BLOCK_MAX = (1024, 1024, 64)


def largest_shared_per_block() -> tuple[int, str]:
    """(bytes, GPU name) of the largest per-block shared memory of ptxc's GPU models."""
    from ptxc.gpus.devices import MODELS
    best = max(MODELS.values(), key=lambda m: m.shared_per_block_optin)
    return best.shared_per_block_optin, best.key


def check_dims(grid: tuple, block: tuple) -> None:
    """Refuse a grid or block dimension over CUDA's limits."""
    for what, dims, limits in (("grid", grid, GRID_MAX), ("block", block, BLOCK_MAX)):
        for axis, n, most in zip("xyz", dims, limits):
            if n > most:
                raise PtxcError(f"{what} {tuple(dims)}: {what}Dim.{axis} = {n} is over CUDA's limit "
                                f"of {most}")


def check_shared(shared_bytes: int, static: int = 0, kernel: str | None = None) -> None:
    """Refuse more shared memory (``static`` .shared variables plus
    ``shared_bytes`` dynamic) than any GPU gives one block."""
    most, gpu = largest_shared_per_block()
    if shared_bytes + static > most:
        what = f"{shared_bytes} bytes of dynamic shared memory per CTA" if not static else \
            f"kernel {kernel}: {static} bytes of .shared variables + {shared_bytes} dynamic per CTA"
        raise PtxcError(f"{what}: the largest GPU limit is {most} bytes "
                        f"({most // 1024} KiB, {gpu} opt-in)")


def check_max_steps(max_steps) -> None:
    if max_steps is not None and (not isinstance(max_steps, int) or max_steps < 1):
        raise PtxcError(f"max_steps must be a positive integer (or None for the default), "
                        f"got {max_steps!r}")


MAX_STACK = 512 << 10       # call stack bytes per thread a launch accepts (ops/call_frames.py)


def check_stack_size(stack_size) -> int:
    """A launch's call stack per thread (cudaLimitStackSize): 0 to MAX_STACK bytes."""
    if isinstance(stack_size, bool) or not isinstance(stack_size, int) or \
            not 0 <= stack_size <= MAX_STACK:
        raise PtxcError(f"stack_size must be an integer from 0 to {MAX_STACK} (bytes of call "
                        f"stack per thread), got {stack_size!r}")
    return stack_size


def check_buffer_size(nbytes: int, most: int, what: str) -> None:
    """Refuse a generated buffer over ``most`` bytes before allocating it."""
    if nbytes > most:
        raise PtxcError(f"{what}: {nbytes} bytes is too large (a buffer holds at most {most} bytes)")


def read_only_writes(fn, buffers: list, arrays: list, owners: list) -> None:
    """After a full run: refuse when the kernel changed the copy of a
    read-only array (its writes cannot reach the caller)."""
    import numpy as np
    for k, (buf, (_, orig)) in enumerate(zip(buffers, arrays)):
        if orig.flags.writeable or np.shares_memory(buf, orig):
            continue
        if not np.array_equal(buf, np.ascontiguousarray(orig).reshape(-1).view(np.uint8)):
            name = owners[k] if k < len(owners) else f"buffer {k}"
            from ptxc.ir.names import kernel_label
            raise PtxcError(f"{kernel_label(fn)}: the kernel wrote to parameter '{name}', a read-only "
                            f"numpy array: its writes cannot be returned; pass a writable array "
                            f"(e.g. a.copy())")
