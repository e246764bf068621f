"""The ptxc side of `ptxc run` driven by a fake shim in Python, so it is
tested without nvcc or a C compiler: the requests the real shim makes
(protocol.py), device memory received as memfds and mapped here, kernels
from an nvcc-made fat binary (tests/runtime_data/plain.fatbin), results
checked against numpy, and a run-time error that stops the run.
"""
import mmap
import os
import socket
import struct
import threading

import numpy as np
import pytest

from ptxc.gpus import devices as gpus
from ptxc.runtime import protocol as P
from ptxc.runtime.server import Options, Session

DATA = os.path.join(os.path.dirname(__file__), "runtime_data")
SAXPY, STENCIL = "_Z5saxpyfPKfPfi", "_Z7stencilPKfPfi"


class FakeShim:
    """The application's end of the socket, speaking protocol.h."""

    def __init__(self, sock):
        self.sock = sock
        self.maps = {}

    def call(self, op, payload=b""):
        self.sock.sendall(struct.pack("<II", op, len(payload)) + payload)
        head, fds, _, _ = socket.recv_fds(self.sock, 16, 8)
        while len(head) < 16:
            head += self.sock.recv(16 - len(head))
        status, length, _nfds, _ = struct.unpack("<iIII", head)
        body = b""
        while len(body) < length:
            body += self.sock.recv(length - len(body))
        return status, body, fds

    def map(self, body, at, fds):
        """Map the mappings of a reply (as the shim does, but anywhere)."""
        segs = []
        for i, fd in enumerate(fds):
            seg, kind, size = struct.unpack_from("<IIQ", body, at + 16 * i)
            m = mmap.mmap(fd, -(-size // mmap.PAGESIZE) * mmap.PAGESIZE)
            os.close(fd)
            self.maps[seg] = np.frombuffer(m, dtype=np.uint8, count=size)
            segs.append(seg)
        return segs

    def malloc(self, nbytes, kind=P.KIND_DEVICE):
        status, body, fds = self.call(P.OP_MALLOC, struct.pack("<QI", nbytes, kind))
        assert status == 0 and len(fds) == 1
        (seg,) = self.map(body, 0, fds)
        return seg << 32, self.maps[seg]


@pytest.fixture
def session():
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    sess = Session(Options(mode="hybrid", gpu=gpus.model("h100"), threads=1), P.Channel(ours))
    t = threading.Thread(target=sess.serve, daemon=True)
    t.start()
    shim = FakeShim(theirs)
    yield sess, shim
    theirs.close()
    t.join(timeout=30)
    ours.close()
    assert not t.is_alive()


def register(shim):
    status, body, _ = shim.call(P.OP_HELLO, struct.pack("<II", P.PROTOCOL_VERSION, os.getpid()))
    assert status == 0
    values = struct.unpack_from(f"<{len(P.GPU_FIELDS)}Q", body)
    assert dict(zip(P.GPU_FIELDS, values))["MAJOR"] == 9
    blob = open(os.path.join(DATA, "plain.fatbin"), "rb").read()
    status, body, _ = shim.call(P.OP_REGISTER_FATBIN, struct.pack("<QII", 0x1000, 1, 0) + blob)
    (fid,) = struct.unpack("<I", body)
    ids = {}
    for host, name in ((0x2000, SAXPY), (0x3000, STENCIL)):
        status, body, _ = shim.call(P.OP_REGISTER_FUNCTION,
                                    struct.pack("<IQ", fid, host) + name.encode())
        ids[name] = struct.unpack("<I", body)[0]
    return fid, ids


def kernel_layout(shim, kid):
    status, body, _ = shim.call(P.OP_KERNEL_INFO, struct.pack("<I", kid))
    assert status == 0
    n, size, nattr, _ = struct.unpack_from("<4I", body)
    layout = [struct.unpack_from("<II", body, 16 + 8 * i) for i in range(n)]
    attrs = struct.unpack_from(f"<{nattr}q", body, 16 + 8 * n)
    return layout, size, attrs


def pack(layout, size, values):
    out = bytearray(size)
    for (off, sz), v in zip(layout, values):
        out[off:off + sz] = v
    return bytes(out)


def launch(shim, kid, grid, block, params, shared=0, stream=0):
    head = struct.pack("<I3I3IIQQQ", kid, grid, 1, 1, block, 1, 1, 0, shared, stream, 0)
    return shim.call(P.OP_LAUNCH, head + params)


def test_saxpy_in_shared_memory(session):
    sess, shim = session
    _, ids = register(shim)
    n = 1000
    xp, x = shim.malloc(4 * n)
    yp, y = shim.malloc(4 * n)
    rng = np.random.default_rng(1)
    xs, ys = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    x.view(np.float32)[:] = xs
    y.view(np.float32)[:] = ys
    layout, size, attrs = kernel_layout(shim, ids[SAXPY])
    assert [s for _, s in layout] == [4, 8, 8, 4]
    assert attrs[P.KATTR_MAX_THREADS] == 1024 and attrs[P.KATTR_BINARY_VERSION] == 90
    params = pack(layout, size, [struct.pack("<f", 2.5), struct.pack("<Q", xp),
                                 struct.pack("<Q", yp), struct.pack("<i", n)])
    status, _, _ = launch(shim, ids[SAXPY], 8, 128, params, stream=3)
    assert status == 0
    # the kernel computes fma.rn.f32: a*x is exact in float64, one rounding of the sum
    # (a second rounding to float32 can only differ on exact float32 midpoints)
    want = (np.float64(2.5) * xs.astype(np.float64) + ys.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(y.view(np.float32), want)
    (rec,) = sess.launches
    assert (rec.kernel, rec.grid, rec.block, rec.stream, rec.mode) == (SAXPY, (8, 1, 1),
                                                                       (128, 1, 1), 3, "hybrid")
    assert rec.profile.flop_count_sp == 2 * n          # one fma per element with i < n


def test_constant_symbol_and_stencil(session):
    sess, shim = session
    fid, ids = register(shim)
    status, body, fds = shim.call(P.OP_SYMBOL, struct.pack("<I", fid) + b"weights")
    assert status == 0
    address, size, count, _ = struct.unpack_from("<QQII", body)
    assert size == 64 and count == 2 == len(fds)          # .const and .global memory
    segs = shim.map(body, 24, fds)
    seg, off = address >> 32, address & 0xFFFFFFFF
    assert seg == segs[0]
    w = np.arange(1, 17, dtype=np.float32) / 16
    shim.maps[seg][off:off + 64] = w.view(np.uint8)
    status, body, fds = shim.call(P.OP_SYMBOL, struct.pack("<I", fid) + b"weights")
    assert status == 0 and not fds                         # mapped already
    assert shim.call(P.OP_SYMBOL, struct.pack("<I", fid) + b"nope")[0] == P.CUDA_ERROR_INVALID_SYMBOL
    n = 300
    inp, a = shim.malloc(4 * n)
    outp, b = shim.malloc(4 * n)
    a.view(np.float32)[:] = np.arange(n, dtype=np.float32)
    layout, size, _ = kernel_layout(shim, ids[STENCIL])
    params = pack(layout, size, [struct.pack("<Q", inp), struct.pack("<Q", outp),
                                 struct.pack("<i", n)])
    assert launch(shim, ids[STENCIL], 3, 128, params)[0] == 0
    src = np.arange(n, dtype=np.float32)
    want = np.zeros(n, dtype=np.float32)
    for i in range(n - 16):                    # the loop nvcc unrolled into 16 fma.rn.f32
        acc = np.float32(0)
        for k in range(16):
            acc = np.float32(np.float64(w[k]) * np.float64(src[i + k]) + np.float64(acc))
        want[i] = acc
    np.testing.assert_array_equal(b.view(np.float32), want)


@pytest.fixture
def model_session():
    """A session under ``ptxc run --clock model`` (memory counters on)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    sess = Session(Options(mode="hybrid", gpu=gpus.model("h100"), threads=1,
                           memory_counters=True, clock="model"), P.Channel(ours))
    t = threading.Thread(target=sess.serve, daemon=True)
    t.start()
    yield sess, FakeShim(theirs)
    theirs.close()
    t.join(timeout=30)
    ours.close()


def test_launch_reply_carries_the_modelled_time(model_session, session):
    """--clock model: the launch reply's timed flag and seconds (the shim's
    device clock, protocol.h) are the launch's prediction, which is
    ptxc.predict.analyse of its profile; --clock host: no time."""
    from ptxc.gpus.kernel_resources import module_registers
    from ptxc.predict import analyse
    for (sess, shim), timed in ((model_session, 1), (session, 0)):
        _, ids = register(shim)
        xp, _ = shim.malloc(4000)
        yp, _ = shim.malloc(4000)
        layout, size, _ = kernel_layout(shim, ids[SAXPY])
        params = pack(layout, size, [struct.pack("<f", 2.0), struct.pack("<Q", xp),
                                     struct.pack("<Q", yp), struct.pack("<i", 1000)])
        status, body, _ = launch(shim, ids[SAXPY], 8, 128, params)
        assert status == 0
        error, n_out, n_err, flag, seconds = struct.unpack_from("<IIIId", body)
        assert (error, n_out, n_err, flag) == (0, 0, 0, timed)
        assert len(body) == P.LAUNCH_REPLY_BYTES
        (rec,) = sess.launches
        if not timed:
            assert seconds == 0.0 and rec.gpu_s is None
            continue
        m = rec.ptx_module
        regs = module_registers(m, m.to_ptx(), 90)[SAXPY]
        want = analyse(m, rec.profile.to_dict(), "h100", regs, 0)["prediction"].seconds
        assert seconds == rec.gpu_s == want > 0


def test_bad_configuration_is_an_error_code(session):
    sess, shim = session
    _, ids = register(shim)
    layout, size, _ = kernel_layout(shim, ids[SAXPY])
    status, _, _ = launch(shim, ids[SAXPY], 1, 2048, bytes(size))
    assert status == P.CUDA_ERROR_INVALID_CONFIGURATION and not sess.launches


def test_out_of_bounds_stops_the_run(session):
    sess, shim = session
    _, ids = register(shim)
    xp, _ = shim.malloc(400)
    yp, _ = shim.malloc(400)
    layout, size, _ = kernel_layout(shim, ids[SAXPY])
    params = pack(layout, size, [struct.pack("<f", 1.0), struct.pack("<Q", xp),
                                 struct.pack("<Q", yp), struct.pack("<i", 200)])
    status, body, _ = launch(shim, ids[SAXPY], 2, 128, params)
    assert status == P.ST_FATAL and struct.unpack("<I", body)[0] == P.EXIT_STOPPED
    assert "out-of-bounds access" in sess.stopped
    assert "right after the end of allocation #1 (cudaMalloc 400 bytes at 0x600000000)" in sess.stopped


def test_freed_allocation_is_named(session):
    sess, shim = session
    _, ids = register(shim)
    xp, _ = shim.malloc(400)
    yp, _ = shim.malloc(400)
    assert shim.call(P.OP_FREE, struct.pack("<I", xp >> 32))[0] == 0
    assert shim.call(P.OP_FREE, struct.pack("<I", xp >> 32))[0] == P.CUDA_ERROR_INVALID_VALUE
    layout, size, _ = kernel_layout(shim, ids[SAXPY])
    params = pack(layout, size, [struct.pack("<f", 1.0), struct.pack("<Q", xp),
                                 struct.pack("<Q", yp), struct.pack("<i", 10)])
    assert launch(shim, ids[SAXPY], 1, 32, params)[0] == P.ST_FATAL
    assert "freed allocation #1 (cudaMalloc 400 bytes)" in sess.stopped


def test_remap_gives_a_new_segment(session):
    sess, shim = session
    register(shim)
    status, body, fds = shim.call(P.OP_MALLOC, struct.pack("<QI", 64, P.KIND_MANAGED))
    seg, kind, size = struct.unpack_from("<IIQ", body)
    assert kind == P.KIND_MANAGED and size == 64
    os.close(fds[0])
    status, body, fds = shim.call(P.OP_REMAP, struct.pack("<I", seg))   # "that range is taken"
    new, _, _ = struct.unpack_from("<IIQ", body)
    assert status == 0 and len(fds) == 1 and new != seg
    os.close(fds[0])
    assert new in sess.devmem.by_seg and seg not in sess.devmem.by_seg


def test_unsupported_is_recorded(session):
    sess, shim = session
    register(shim)
    assert shim.call(P.OP_UNSUPPORTED, b"cudaGraphCreate")[0] == 0
    assert sess.unsupported == "cudaGraphCreate"


def test_out_of_memory_is_an_error_code(session):
    sess, shim = session
    register(shim)
    status, _, fds = shim.call(P.OP_MALLOC, struct.pack("<QI", 1 << 40, P.KIND_DEVICE))
    assert status == P.CUDA_ERROR_MEMORY_ALLOCATION and not fds
