"""``ptxc calibrate``: measure the model's parameters on a real GPU (CuPy).

Luo & Suda obtain their constants with micro-benchmarks; these are ptxc's,
in ``microbench/microbench.cu`` (PTX committed next to it, loaded with
cupy.RawModule, which JIT-compiles it for the device):

  a   chase_global: one thread, dependent loads over a 256 MiB random cycle
      (beyond every L2): clock64 cycles / steps
  c   chase_shared: the same in shared memory
  d   fma_chain: 16 dependent FMAs per step: cycles / (16 x steps)
  m   empty: median of 200 launch-to-completion times (CUDA events) x clock
  b   copy: 2 x 256 MiB / time = bandwidth B; b = 32 / (B / SMs / clock)
  cost_fp32 / cost_fp64 / cost_integer / cost_special
      tp_*: time x clock x SMs / warp instructions of the class, the warp
      instructions counted exactly by running one block under ptxc

Without CuPy or a CUDA device, :func:`calibrate` raises one PtxcError.
"""
from __future__ import annotations

import json
import os

import numpy as np

from ..errors import PtxcError

HERE = os.path.join(os.path.dirname(__file__), "microbench")
PTX = os.path.join(HERE, "microbench.sm75.ptx")
THROUGHPUT = {"cost_fp32": ("tp_fp32", np.float32, "fp32"),
              "cost_fp64": ("tp_fp64", np.float64, "fp64"),
              "cost_integer": ("tp_int", np.int32, "integer"),
              "cost_special": ("tp_sfu", np.float32, "special")}
TP_BLOCK, TP_STEPS = 256, 2048


def device():
    """(cupy, device properties) or a PtxcError saying why not."""
    need = "calibrate needs a CUDA GPU and CuPy (pip install 'ptxc[gpu]')"
    try:
        import cupy
    except ImportError:
        raise PtxcError(f"{need}: CuPy is not installed") from None
    except Exception as e:  # noqa: BLE001 - CuPy failing to find CUDA
        raise PtxcError(f"{need}: CuPy failed to load ({e})") from None
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # cupy.cuda.runtime.CUDARuntimeError
        raise PtxcError(f"calibrate needs a CUDA GPU: no CUDA device ({e})") from None
    if n < 1:
        raise PtxcError("calibrate needs a CUDA GPU: no CUDA device")
    return cupy, cupy.cuda.runtime.getDeviceProperties(0)


def calibrate(gpu_key: str) -> dict:
    """Measure every parameter; the parameter file's content."""
    cp, props = device()
    mod = cp.RawModule(path=PTX)
    clock_hz = clock_khz(cp, props) * 1e3
    sms = props["multiProcessorCount"]
    params = {"a": _chase(cp, mod, "chase_global", 64 << 20, 4096),
              "c": _chase(cp, mod, "chase_shared", 1024, 4096),
              "d": _fma_latency(cp, mod),
              "m": _launch_cycles(cp, mod, clock_hz)}
    bw = _bandwidth(cp, mod)
    params["b"] = 32 / (bw / sms / clock_hz)
    for name, (kernel, dtype, cls) in THROUGHPUT.items():
        params[name] = _class_cost(cp, mod, kernel, dtype, cls, sms, clock_hz)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    return {"device": name, "gpu": gpu_key, "sm_count": sms, "clock_hz": clock_hz,
            "bandwidth_bytes_per_s": bw, "params": params}


def clock_khz(cp, props) -> float:
    """The SM clock: cudaDeviceProp.clockRate, or the device attribute
    cudaDevAttrClockRate where the runtime (CUDA 13) dropped the field."""
    if props.get("clockRate"):
        return float(props["clockRate"])
    return float(cp.cuda.Device(0).attributes["ClockRate"])


def _cycles_of(cp, kernel, grid, block, args) -> float:
    out = cp.zeros(1, dtype=cp.int64)
    kernel(grid, block, (*args, out))
    cp.cuda.Device().synchronize()
    return float(out.get()[0])


def _chase(cp, mod, name, n, steps) -> float:
    perm = np.random.default_rng(1).permutation(n).astype(np.uint32)
    nxt = np.empty(n, np.uint32)
    nxt[perm] = np.roll(perm, -1)
    args = [cp.asarray(nxt)] + ([np.int32(n)] if name == "chase_shared" else []) + \
        [np.int32(steps), cp.zeros(1, cp.uint32)]
    k = mod.get_function(name)
    _cycles_of(cp, k, (1,), (1 if name == "chase_global" else 256,), args)   # warm up
    return _cycles_of(cp, k, (1,), (1 if name == "chase_global" else 256,), args) / steps


def _fma_latency(cp, mod, steps=4096) -> float:
    io = cp.asarray(np.array([1.0, 0.999, 0.5], np.float32))
    k = mod.get_function("fma_chain")
    _cycles_of(cp, k, (1,), (1,), [io, np.int32(steps)])
    return _cycles_of(cp, k, (1,), (1,), [io, np.int32(steps)]) / (16 * steps)


def _time_ms(cp, launch, repeat=1) -> float:
    start, end = cp.cuda.Event(), cp.cuda.Event()
    launch()
    start.record()
    for _ in range(repeat):
        launch()
    end.record()
    end.synchronize()
    return cp.cuda.get_elapsed_time(start, end) / repeat


def _launch_cycles(cp, mod, clock_hz) -> float:
    k = mod.get_function("empty")
    times = [_time_ms(cp, lambda: k((1,), (1,), ())) for _ in range(200)]
    return float(np.median(times)) * 1e-3 * clock_hz


def _bandwidth(cp, mod) -> float:
    n = (256 << 20) // 16
    a, b = cp.ones(4 * n, cp.float32), cp.zeros(4 * n, cp.float32)
    k = mod.get_function("copy")
    ms = _time_ms(cp, lambda: k((4096,), (256,), (a, b, np.int64(n))), repeat=10)
    return 2 * 16 * n / (ms * 1e-3)


def _class_cost(cp, mod, kernel, dtype, cls, sms, clock_hz) -> float:
    blocks = sms * 8
    io = cp.ones(blocks * TP_BLOCK, dtype)
    k = mod.get_function(kernel)
    ms = _time_ms(cp, lambda: k((blocks,), (TP_BLOCK,), (io, np.int32(TP_STEPS))), repeat=5)
    per_block = class_count_per_block(kernel, dtype, cls)
    return ms * 1e-3 * clock_hz * sms / (per_block * blocks)


def class_count_per_block(kernel, dtype, cls, steps: int = TP_STEPS) -> int:
    """Warp instructions of class ``cls`` in one block of ``kernel``, counted
    by running that block under ptxc (the compiler folds and unrolls the
    loops, so no formula gives the count)."""
    from ptxc.frontend.parser import load_module
    from ptxc.launcher.api import launch
    from .mix import instruction_mix
    module = load_module(PTX)
    prof = launch(module, kernel, grid=(1, 1, 1), block=(TP_BLOCK, 1, 1),
                       args=[np.ones(TP_BLOCK, dtype), steps])
    return instruction_mix(module, prof.per_block).get(cls, 0)


def write(path: str, data: dict) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2)
            fh.write("\n")
    except OSError as e:
        raise PtxcError(f"cannot write '{path}': {e.strerror or e}") from None
