"""``ptxc check`` on the ptxc side of a run: host writes and API errors.

Under ``ptxc check`` the shim (native/memory.c, with ``$PTXC_CHECK_HOST``
set to 1) tells ptxc what the application's host calls did to device memory:

* OP_HOST_WRITE: a cudaMemcpy* / cudaMemset* (or a graph's memset node)
  wrote device bytes. initcheck marks them written in the run's Shadow; a
  device-to-device copy copies its source's state instead.
* OP_API_ERROR: a cudaFree / cudaMemcpy* / cudaMemset* failed its argument
  checks (a pointer that is not an allocation's start, a double free, a range
  outside its allocation). compute-sanitizer reports these as "Program hit
  cudaErrorInvalidValue (error 1) due to "invalid argument" on CUDA API call
  to cudaFree." (CUDA Compute Sanitizer documentation, "Memcheck Tool",
  "CUDA API Error Checking"); ptxc also says where the pointer is.

The Shadow tracks cudaMalloc allocations only (docs/check.md): managed and
host allocations may be written by the host without any call, module
variables are initialised at load time.
"""
from __future__ import annotations

import struct
from dataclasses import asdict, dataclass

from . import protocol as P

ERROR_NAMES = {1: ("cudaErrorInvalidValue", "invalid argument"),
               2: ("cudaErrorMemoryAllocation", "out of memory"),
               11: ("cudaErrorInvalidPitchValue", "invalid pitch argument"),
               21: ("cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy")}
SHIFT = 32


@dataclass
class ApiError:
    """One failed CUDA API call."""
    call: str
    code: int
    pointer: int
    size: int
    where: str          # what the pointer is
    after_launch: int   # launches before the call

    def as_dict(self) -> dict:
        return asdict(self)


def handlers(session) -> dict:
    return {P.OP_HOST_WRITE: lambda p: host_write(session, p),
            P.OP_API_ERROR: lambda p: api_error(session, p)}


def launch_check(options, kernel: str | None = None):
    """The ``check`` of a launch of ``kernel`` in this run: memcheck under
    ``--on-error=continue`` (and ptxc check's ``abort``), and ptxc check's
    other tools. A launch that ``ptxc check --kernel-name`` leaves out runs
    without them, but for initcheck, whose shadow must see the kernel's
    writes (drop_unchecked then forgets its reports)."""
    tools = ["memcheck"] if options.on_error in ("continue", "abort") else []
    tools += [t for t in getattr(options, "checks", ()) if t not in tools and t != "memcheck"]
    if not checked(options, kernel):
        tools = [t for t in tools if t == "initcheck"]
    return "+".join(tools) or None


def checked(options, kernel: str | None) -> bool:
    """Does ``ptxc check`` check this kernel's launches (--kernel-name)?"""
    keep = getattr(options, "kernel_filter", None)
    return kernel is None or not keep or keep(kernel)


def fault_policy(options, kernel: str) -> str | None:
    """The ``on_error`` that decides what a device fault of a launch of
    ``kernel`` becomes (faults.as_cuda_error): the run's, but for a kernel
    ``ptxc check --kernel-name`` leaves out, whose bad access (not recorded:
    no memcheck) is the CUDA error a GPU's hardware exception would give."""
    if options.on_error in ("abort", "continue") and not checked(options, kernel):
        return "cuda"
    return options.on_error


def drop_unchecked(options, kernel: str, profile) -> None:
    """Forget the initcheck reports of a launch that is not checked."""
    if not checked(options, kernel) and getattr(profile, "init_errors", None):
        profile.init_errors = []
        profile.init_error_count = 0


def shadow_of(session):
    """The run's initcheck Shadow (None when initcheck is off)."""
    if "initcheck" not in getattr(session.options, "checks", ()):
        return None
    if session.shadow is None:
        from ptxc.backends.llvm.instruments.initcheck import Shadow
        session.shadow = Shadow()
    return session.shadow


def on_malloc(session, a, site: bytes = b"") -> None:
    """A new allocation: cudaMalloc memory starts uninitialised; under
    ``ptxc check`` the shim says where it was made (``site``, native/
    memory.c alloc_site: u32 n, n x u64 offset, the call, n x object)."""
    shadow = shadow_of(session)
    if shadow is not None and a.kind == P.KIND_DEVICE:
        shadow.track(a.seg, a.size)
    if len(site) >= 4:
        a.site = parse_site(site)


def parse_site(data: bytes):
    """(CUDA call, [(object path, '' = the executable; return offset), ...])."""
    n, = struct.unpack_from("<I", data)
    offsets = struct.unpack_from(f"<{n}Q", data, 4)
    names = data[4 + 8 * n:].split(b"\0")
    call = names[0].decode("utf-8", "replace")
    objects = [s.decode("utf-8", "replace") for s in names[1:1 + n]]
    return call, list(zip(objects, offsets))


def on_remap(session, old: int, new: int) -> None:
    shadow = shadow_of(session)
    if shadow is not None and old in shadow.by_seg:
        shadow.by_seg[new] = shadow.by_seg.pop(old)


def on_free(session, seg: int) -> None:
    shadow = shadow_of(session)
    if shadow is not None:
        shadow.forget(seg)


def host_write(session, payload: bytes) -> None:
    dst, src, width, rows, dpitch, spitch = struct.unpack_from("<6Q", payload)
    shadow = shadow_of(session)
    if shadow is not None:
        mask = (1 << SHIFT) - 1
        if src:
            shadow.copy(dst >> SHIFT, dst & mask, src >> SHIFT, src & mask, width,
                        dpitch, spitch, rows)
        else:
            shadow.mark(dst >> SHIFT, dst & mask, width, dpitch, rows)
    session.channel.reply(0)


def api_error(session, payload: bytes) -> None:
    code, _, pointer, size = struct.unpack_from("<IIQQ", payload)
    call = payload[24:].decode("utf-8", "replace")
    session.api_errors.append(ApiError(call, code, pointer, size, pointer_text(session.devmem, call, pointer, size),
                           len(session.launches)))
    session.channel.reply(0)


def pointer_text(devmem, call: str, pointer: int, size: int) -> str:
    """Where a failed call's pointer is, in words a user checks at once."""
    seg, off = pointer >> SHIFT, pointer & ((1 << SHIFT) - 1)
    live, freed = devmem.by_seg.get(seg), devmem.freed.get(seg)
    if pointer == 0:
        return "a null pointer"
    if live is None and freed is not None:
        what = "already freed (a double free)" if call.startswith("cudaFree") else "freed"
        return f"{freed.name} + {off}: {what}"
    if live is None:
        return "not a device allocation (a host or wild pointer)"
    if call.startswith("cudaFree"):
        if live.kind == P.KIND_MODULE:
            return f"{live.name}: not freeable"
        return f"{off} bytes into {live.name}: not its start" if off else \
            f"{live.name}: allocated by another call kind"
    if off + size > live.size:
        return (f"{size} bytes at {live.name} + {off}: {off + size - live.size} bytes past its end "
                f"({live.size} bytes)")
    return f"{live.name} + {off}"


def error_block(e: ApiError) -> list[str]:
    """compute-sanitizer's lines for a failed API call (no prefix)."""
    name, text = ERROR_NAMES.get(e.code, (f"cudaError {e.code}", "error"))
    lines = [f'Program hit {name} (error {e.code}) due to "{text}" on CUDA API call to {e.call}.',
             f"    Pointer 0x{e.pointer:x}: {e.where}"]
    lines.append(f"    after {e.after_launch} kernel launch{'' if e.after_launch == 1 else 'es'}")
    return lines
