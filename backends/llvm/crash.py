"""A crash of the ptxc process in native code, reported instead of lost.

Compiled kernels, LLVM and the C libraries run in the ptxc process; a fault
there (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) used to kill it silently:
``ptxc run``'s application only saw "lost the connection to the ptxc
process" (issue 29: an executor thread's stack overflowed). While a launch
runs (``running``), a native signal handler reports it instead, as
faulthandler and the sanitizers' deadly-signal handlers do: it runs on an
alternate signal stack (``altstack``: per thread, POSIX sigaltstack, so that
a stack overflow can still be reported), writes a line prepared before the
launch

    ptxc: internal error: the ptxc process crashed (SIGSEGV) while running kernel K (...); ...

on stderr, under ``ptxc run`` sends the application the fatal reply its shim
waits for (status EXIT_CRASHED, then waits up to ALARM_S seconds for it to
exit; ``reply_to``), and ends the process with ``_exit(EXIT_STATUS)`` (70,
ptxc's status for an internal error). Only async-signal-safe calls are made
(write, waitpid, nanosleep, _exit, sigaction, raise, pause: POSIX.1-2017
2.4.3);
when several threads crash at once, the first reports and the others wait in
``pause`` for the exit. Outside a launch the handler puts the previous
action back and raises the signal again, so other crashes behave as before
(faulthandler's report, or the default action).

The handler is LLVM IR compiled once per process (no C library to build);
its state (the prepared lines, the reply, the previous actions) lives in one
buffer that Python fills. ``PTXC_TEST_CRASH=SIGSEGV`` (or SIGBUS, SIGILL,
SIGFPE, SIGABRT) makes every executor thread raise that signal before it
runs CTAs: a test-only trigger (tests/test_crash_report.py).
"""
from __future__ import annotations

import ctypes
import os
import signal
import struct
import threading
from contextlib import contextmanager

EXIT_STATUS = 70            # ptxc's exit status for an internal error (docs/user-guide.md)
EXIT_CRASHED = 89           # the application's, told by the reply (protocol.h PTXC_EXIT_CRASHED)
ALARM_S = 10                # at most this long waiting for the application to exit (WNOHANG polls)
TEST_ENV = "PTXC_TEST_CRASH"
SIGNALS = ("SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "SIGABRT")
ALT_STACK = 64 << 10        # bytes of each executor thread's signal stack
SA_SIGINFO, SA_ONSTACK = 4, 0x08000000
SIGACTION_BYTES = 152       # glibc's struct sigaction on 64-bit Linux

# the state buffer
ARMED, FD, PID, STATUS, REPLY_LEN, ONCE = 0, 4, 8, 12, 16, 20
REPLY, SIGTAB, OLD, LINES = 64, 128, 192, 192 + 64 * SIGACTION_BYTES
LINE_BYTES = 1024
STATE_BYTES = LINES + (len(SIGNALS) + 1) * LINE_BYTES

HANDLER_IR = f"""
declare i64 @write(i32, ptr, i64)
declare i32 @sigaction(i32, ptr, ptr)
declare i32 @raise(i32)
declare i32 @waitpid(i32, ptr, i32)
declare i32 @nanosleep(ptr, ptr)
declare void @_exit(i32) noreturn
declare i32 @pause()
@ptxc_crash_state = global ptr null

define void @ptxc_crash_handler(i32 %sig, ptr %info, ptr %ctx) {{
entry:
  %ts = alloca [2 x i64]
  %st = load volatile ptr, ptr @ptxc_crash_state
  %armed = load volatile i32, ptr %st
  %on = icmp sgt i32 %armed, 0
  %known = icmp ult i32 %sig, 64
  %go = and i1 %on, %known
  br i1 %go, label %report, label %chain
chain:
  %s63 = and i32 %sig, 63
  %oldoff = mul i32 %s63, {SIGACTION_BYTES}
  %oldoff64 = zext i32 %oldoff to i64
  %oldbase = getelementptr i8, ptr %st, i64 {OLD}
  %old = getelementptr i8, ptr %oldbase, i64 %oldoff64
  %r0 = call i32 @sigaction(i32 %sig, ptr %old, ptr null)
  %r1 = call i32 @raise(i32 %sig)
  ret void
report:
  %oncep = getelementptr i8, ptr %st, i64 {ONCE}
  %first = atomicrmw xchg ptr %oncep, i32 1 seq_cst
  %mine = icmp eq i32 %first, 0
  br i1 %mine, label %prepared, label %others
others:
  %p = call i32 @pause()
  br label %others
prepared:
  %sig64 = zext i32 %sig to i64
  %tab = getelementptr i8, ptr %st, i64 {SIGTAB}
  %slotp = getelementptr i8, ptr %tab, i64 %sig64
  %slot8 = load volatile i8, ptr %slotp
  %slot = zext i8 %slot8 to i64
  %lineoff = mul i64 %slot, {LINE_BYTES}
  %lines = getelementptr i8, ptr %st, i64 {LINES}
  %line = getelementptr i8, ptr %lines, i64 %lineoff
  %len = load volatile i32, ptr %line
  %len64 = zext i32 %len to i64
  %text = getelementptr i8, ptr %line, i64 4
  %w0 = call i64 @write(i32 2, ptr %text, i64 %len64)
  %fdp = getelementptr i8, ptr %st, i64 {FD}
  %fd = load volatile i32, ptr %fdp
  %hasfd = icmp sge i32 %fd, 0
  br i1 %hasfd, label %send, label %exit
send:
  %rlp = getelementptr i8, ptr %st, i64 {REPLY_LEN}
  %rlen = load volatile i32, ptr %rlp
  %rlen64 = zext i32 %rlen to i64
  %reply = getelementptr i8, ptr %st, i64 {REPLY}
  %n = call i64 @write(i32 %fd, ptr %reply, i64 %rlen64)
  %sent = icmp eq i64 %n, %rlen64
  %pidp = getelementptr i8, ptr %st, i64 {PID}
  %pid = load volatile i32, ptr %pidp
  %haspid = icmp sgt i32 %pid, 0
  %wait = and i1 %sent, %haspid
  br i1 %wait, label %waitapp, label %exit
waitapp:
  %k = phi i32 [ 0, %send ], [ %k1, %sleep ]
  %wp = call i32 @waitpid(i32 %pid, ptr null, i32 1)
  %running = icmp eq i32 %wp, 0
  %k1 = add i32 %k, 1
  %more = icmp slt i32 %k1, {ALARM_S * 20}
  %again = and i1 %running, %more
  br i1 %again, label %sleep, label %exit
sleep:
  store i64 0, ptr %ts
  %nsp = getelementptr i64, ptr %ts, i64 1
  store i64 50000000, ptr %nsp
  %z = call i32 @nanosleep(ptr %ts, ptr null)
  br label %waitapp
exit:
  %stp = getelementptr i8, ptr %st, i64 {STATUS}
  %status = load volatile i32, ptr %stp
  call void @_exit(i32 %status)
  unreachable
}}
"""


class SigAction(ctypes.Structure):
    _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ulong * 16),
                ("flags", ctypes.c_int), ("restorer", ctypes.c_void_p)]


class StackT(ctypes.Structure):
    _fields_ = [("sp", ctypes.c_void_p), ("flags", ctypes.c_int), ("size", ctypes.c_size_t)]


_lock = threading.Lock()
_prefix = ""                # what reply_to adds before the label ("launch 3 of the application: ")
_installed = None           # (engine, state buffer) once installed
_libc = ctypes.CDLL(None, use_errno=True)


def install() -> None:
    """Compile the handler and install it for SIGNALS (once per process)."""
    global _installed
    with _lock:
        if _installed is not None:
            return
        import llvmlite.binding as b            # not jit.py: it imports the executor (layers)
        b.initialize_native_target()
        b.initialize_native_asmprinter()
        tm = b.Target.from_default_triple().create_target_machine(opt=0, jit=True)
        engine = b.create_mcjit_compiler(b.parse_assembly(HANDLER_IR), tm)
        engine.finalize_object()
        state = (ctypes.c_char * STATE_BYTES)()
        ctypes.c_void_p.from_address(engine.get_global_value_address("ptxc_crash_state")).value = \
            ctypes.addressof(state)
        base = ctypes.addressof(state)
        struct.pack_into("<iiii", state, ARMED, 0, -1, 0, EXIT_STATUS)
        act = SigAction(handler=engine.get_function_address("ptxc_crash_handler"),
                        flags=SA_SIGINFO | SA_ONSTACK)
        for slot, name in enumerate(SIGNALS):
            sig = int(getattr(signal, name))
            state[SIGTAB + sig] = slot
            old = ctypes.c_void_p(base + OLD + sig * SIGACTION_BYTES)
            _libc.sigaction(sig, ctypes.byref(act), old)
        _installed = (engine, state)


def _prepare(label: str) -> None:
    state = _installed[1]
    for slot, name in enumerate(SIGNALS):
        text = (f"ptxc: internal error: the ptxc process crashed ({name}) while running "
                f"{_prefix}{label}; ptxc exits with status {EXIT_STATUS} (please report this bug)\n")
        raw = text.encode(errors="replace")[:LINE_BYTES - 8]
        if not raw.endswith(b"\n"):
            raw = raw[:-1] + b"\n"
        struct.pack_into(f"<I{len(raw)}s", state, LINES + slot * LINE_BYTES, len(raw), raw)


@contextmanager
def running(label: str):
    """While the block runs, a crash is reported as running ``label`` (e.g.
    ``kernel K (grid (4, 1, 1), block (128, 1, 1))``)."""
    install()
    state = _installed[1]
    with _lock:
        _prepare(label)
        struct.pack_into("<i", state, ARMED, struct.unpack_from("<i", state, ARMED)[0] + 1)
    try:
        yield
    finally:
        with _lock:
            struct.pack_into("<i", state, ARMED, struct.unpack_from("<i", state, ARMED)[0] - 1)


@contextmanager
def reply_to(fd: int, pid: int | None, status: int, prefix: str = ""):
    """``ptxc run``: while the block runs (a launch the application waits
    for), a crash also sends the fatal reply (protocol.h: PTXC_ST_FATAL,
    then ``status``) on ``fd`` and waits for process ``pid`` to exit;
    ``prefix`` goes before the label of the launches that run."""
    global _prefix
    install()
    state = _installed[1]
    frame = struct.pack("<iIIII", -1, 4, 0, 0, status)
    with _lock:
        state[REPLY:REPLY + len(frame)] = frame
        struct.pack_into("<iii", state, FD, fd, pid or 0, EXIT_STATUS)
        struct.pack_into("<i", state, REPLY_LEN, len(frame))
        _prefix = prefix
    try:
        yield
    finally:
        with _lock:
            struct.pack_into("<ii", state, FD, -1, 0)
            _prefix = ""


_alt_pool: list = []        # signal stacks of finished threads, for the next ones


@contextmanager
def altstack():
    """An alternate signal stack for the calling thread (sigaltstack is per
    thread), so that the handler runs even after a stack overflow. The
    buffers are recycled (a launch makes threads; zeroing a new buffer each
    time costs more than the launch of a small kernel)."""
    with _lock:
        buf = _alt_pool.pop() if _alt_pool else None
    if buf is None:
        buf = ctypes.create_string_buffer(ALT_STACK)
    _libc.sigaltstack(ctypes.byref(StackT(ctypes.addressof(buf), 0, ALT_STACK)), None)
    try:
        yield
    finally:
        _libc.sigaltstack(ctypes.byref(StackT(None, 2, 0)), None)     # SS_DISABLE
        with _lock:
            _alt_pool.append(buf)


def test_trigger() -> None:
    """The test-only trigger (module doc): raise $PTXC_TEST_CRASH in this thread."""
    name = os.environ.get(TEST_ENV)
    if not name:
        return
    if name == "SIGSEGV":
        ctypes.string_at(16, 1)                 # a real fault: a read of address 16
    elif name in SIGNALS:
        getattr(_libc, "raise")(int(getattr(signal, name)))
