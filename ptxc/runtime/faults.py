"""Device faults as CUDA errors, and the launch reply that carries device output.

On a GPU a failed device ``assert`` makes the launch's next synchronising
call return ``cudaErrorAssert`` (710), a ``trap`` or a stack overflow
(recursion deeper than ``cudaLimitStackSize`` holds) ``cudaErrorLaunchFailure``
(719), an out-of-bounds access ``cudaErrorIllegalAddress`` (700) and a
misaligned one ``cudaErrorMisalignedAddress`` (716); the error is sticky
(CUDA Runtime API, ``cudaError``). ``ptxc run --on-error`` chooses (docs/
runtime.md): by default assertions, traps and stack overflows become CUDA errors and bad
accesses stop the run with ptxc's diagnostic; ``cuda`` makes every one of
these a CUDA error, ``stop`` none. Other run-time errors (step budget,
unsupported instruction) always stop the run: they are ptxc's limits, not
the program's faults.

A launch reply's payload (native/devout.c reads it): u32 error (0, or the
cudaError_t of the device fault), u32 stdout bytes, u32 stderr bytes, u32
timed and f64 seconds (1 and the launch's modelled GPU time under ``ptxc
run --clock model``, which native/stream.c adds to the device clock; else
0 and 0.0), then the launch's device printf output (stdout) and the failed
assertions' lines plus ptxc's diagnostic (stderr).

When ptxc stops the run in a launch, its fatal reply (``fatal_reply``: u32
exit status, then a launch reply with error 0) carries what the launch
printed before it stopped (the CTAs up to the failing one, as for a CUDA
error): a GPU's next synchronising call would print it, and the shim
writes it on the application's stdout before it exits (native/conn.c);
ptxc's diagnostic follows on stderr.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ptxc.backends.llvm import layout as Lo
from ptxc.errors import PtxcError

CUDA_ERROR_ILLEGAL_ADDRESS = 700
CUDA_ERROR_ASSERT = 710
CUDA_ERROR_MISALIGNED_ADDRESS = 716
CUDA_ERROR_LAUNCH_FAILURE = 719
CODES = {Lo.ERR_ASSERT: CUDA_ERROR_ASSERT, Lo.ERR_TRAP: CUDA_ERROR_LAUNCH_FAILURE,
         Lo.ERR_STACK_OVERFLOW: CUDA_ERROR_LAUNCH_FAILURE,
         Lo.ERR_OOB: CUDA_ERROR_ILLEGAL_ADDRESS, Lo.ERR_MISALIGNED: CUDA_ERROR_MISALIGNED_ADDRESS}
NAMES = {CUDA_ERROR_ASSERT: "cudaErrorAssert", CUDA_ERROR_LAUNCH_FAILURE: "cudaErrorLaunchFailure",
         CUDA_ERROR_ILLEGAL_ADDRESS: "cudaErrorIllegalAddress",
         CUDA_ERROR_MISALIGNED_ADDRESS: "cudaErrorMisalignedAddress"}
DEFAULT = (Lo.ERR_ASSERT, Lo.ERR_TRAP, Lo.ERR_STACK_OVERFLOW)   # faults that are CUDA errors by default
ON_ERROR = ("stop", "cuda")


@dataclass
class Fault:
    """A device fault the application gets as a CUDA error."""
    code: int                   # the cudaError_t
    message: str                # ptxc's one-line diagnostic
    assertions: list
    kind: str = "fault"         # 'fault' (assert, trap, bad access) or 'memcheck' (memcheck_abort)
    launch: int = 0             # memcheck: the launch that failed, and its kernel
    kernel: str = ""
    error: int = 0              # the executor's error (layout.ERR_*)
    site: dict | None = None    # where: function, place, opcode, thread, block (launcher/faults.py)

    def summary(self) -> str:
        """One line for the report's meta table."""
        return f"{NAMES[self.code]} ({self.code}): {self.message}"

    def stderr_text(self, err: PtxcError) -> bytes:
        """What the application's stderr gets: the GPU's assertion lines,
        then ptxc's diagnostic (prefixed ``ptxc:``) and the error it returns."""
        from ptxc.errors import render_error
        text = "".join(self.assertions)
        diag = render_error(err)
        if not diag.startswith("ptxc:"):
            diag = "ptxc: " + diag
        text += f"{diag}\nptxc: the next synchronising CUDA call returns {NAMES[self.code]} ({self.code})\n"
        return text.encode("utf-8", "replace")


def as_cuda_error(err: PtxcError, on_error: str | None) -> Fault | None:
    """The Fault for run-time error ``err`` of a launch, or None: stop the run."""
    code = getattr(err, "device_code", None)
    if code not in CODES or on_error == "stop":
        return None
    if on_error != "cuda" and code not in DEFAULT:
        return None
    return Fault(CODES[code], err.message, list(getattr(err, "assertions", [])), error=code,
                 site=getattr(err, "site", None))


def memcheck_abort(record, on_error: str | None) -> Fault | None:
    """``ptxc check``'s default (``on_error='abort'``): a launch in which
    memcheck recorded an invalid access fails as it does on a GPU under
    compute-sanitizer, whose default ``--destroy-on-device-error context``
    terminates the CUDA context: the application's next synchronising call
    and every later one return cudaErrorLaunchFailure ("unspecified launch
    failure"; CUDA Compute Sanitizer documentation, "Error Actions", and
    its reports' "Program hit cudaErrorLaunchFailure (error 719) ..."
    lines). ptxc has run the launch to its end (each bad access skipped),
    so every error of it is reported. None: the launch stands."""
    errors = getattr(record.profile, "mem_errors", None)
    if on_error != "abort" or not errors:
        return None
    n = record.profile.mem_error_count
    return Fault(CUDA_ERROR_LAUNCH_FAILURE,
                 f"launch {record.id} of kernel {record.kernel} aborted after {n} invalid memory "
                 f"access{'' if n == 1 else 'es'} (memcheck)", [], "memcheck", record.id,
                 record.kernel)


def launch_reply(error: int, printf: list, stderr: bytes = b"",
                 gpu_s: float | None = None) -> bytes:
    """The payload of a launch reply (module doc); ``gpu_s``: the launch's
    modelled GPU seconds, None when it has none (host clock, not predicted)."""
    out = "".join(printf).encode("utf-8", "surrogateescape")
    timed = gpu_s is not None
    return (struct.pack("<IIIId", error, len(out), len(stderr), int(timed),
                        float(gpu_s) if timed else 0.0) + out + stderr)


def fatal_reply(status: int, err: PtxcError) -> bytes:
    """The payload of a reply that stops the run: the exit status, then the
    printf output of the launch ``err`` stopped (empty for other errors)."""
    printf = getattr(err, "printf", None) or []
    return struct.pack("<I", status) + (launch_reply(0, printf) if printf else b"")
