"""``ptxc calibrate``: Luo & Suda's parameters measured on a real GPU, the paper's way.

Luo & Suda 2011 measured their model's inputs on a GTX 260 with
micro-benchmarks; ``ptxc calibrate`` repeats that on the local GPU (CuPy)
and writes the JSON file ``ptxc predict --params`` reads
(:func:`ptxc.predict.params.load_params`). The kernels are generated PTX
(:mod:`.microbench`):

  cost.<row>.<kind>   Table 1, section 3.1: for each row and operand kind, a
                      base and a test kernel that differ by one PTX
                      instruction, its loop repeated ``repeat`` (10000)
                      times by one warp; cost = (test - base) cycles / repeat,
                      the cycles read with %clock64 (GPU clocks), the median
                      of ``samples`` runs of each
  t_mem, cost.ld_st   the same with one dependent global load over a random
                      cycle through 256 MiB (eq. 1: the latency of a memory access)
  a, b, c, d          eqs. (3)-(5): the CPD micro-benchmark (microbench/cpd.py)
                      at every warp count N = 1..m on the same data and a
                      spread of proportions P; per point CPD = N c / T
                      (eq. 6 for type-1 periods: c the busiest warp's
                      computation cost from the measured Table 1 costs, T the
                      busiest SM's cycles from %clock64); fitted with
                      :func:`.cpd_fit.fit`
  gpu_bwt             eq. (2): a 256 MiB copy timed with CUDA events, bytes
                      moved / time / clock
  n_sm, clock_mhz, m  the device's properties (multiProcessorCount, clockRate,
                      maxThreadsPerMultiProcessor / 32)

A cost that comes out zero or negative (noise; an instruction the assembler
removed) is left to the GPU model's default and listed under ``warnings``.
The raw cycles of every kernel are kept under ``measurements``. Without
CuPy or a CUDA device :func:`calibrate` raises one PtxcError; the measuring
code runs unchanged on any object with :class:`CupyDevice`'s methods
(tests/test_calibrate.py drives it with a simulated GPU).
"""
from __future__ import annotations

import json
import math
import os
import tempfile

import numpy as np

from ptxc.errors import PtxcError
from . import cpd_fit
from .microbench import cpd, kernel as kmod, table1
from .params import ModelParams, default_params

FORMAT = "ptxc-calibrate 2 (Luo & Suda 2011)"
SAMPLES = 5
CHASE_BYTES = 256 << 20          # the ld/st chain's footprint, beyond every L2
CHASE_STRIDE = 256               # bytes between its nodes
COPY_BYTES = 256 << 20
ITEMS_PER_SM = 32 * 64 * 16      # CPD benchmark: the same data at every warp count
X0, Y = 12345, 3                 # integer start value and operand (Y != 0: div)
FX0, FY, FK = 1.5, 0.75, 0.25    # float start value, operand, anchor operand


class CupyDevice:
    """The local GPU through CuPy: what the measurements need of it."""

    def __init__(self):
        self.cp, props = device()
        self.props = props
        name = props["name"]
        self.name = name.decode() if isinstance(name, bytes) else name
        self.sm_count = int(props["multiProcessorCount"])
        self.clock_mhz = clock_khz(self.cp, props) / 1000
        self.max_warps_per_sm = int(props["maxThreadsPerMultiProcessor"]) // 32
        self.max_blocks_per_sm = int(props.get("maxBlocksPerMultiProcessor") or 32)
        self._tmp = tempfile.TemporaryDirectory(prefix="ptxc-calibrate-")

    def load(self, ptx: str):
        path = os.path.join(self._tmp.name, f"m{abs(hash(ptx))}.ptx")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(ptx)
        return self.cp.RawModule(path=path)

    def array(self, a: np.ndarray):
        return self.cp.asarray(a)

    def get(self, a) -> np.ndarray:
        return self.cp.asnumpy(a)

    def launch(self, module, name: str, grid: int, block: int, args: list) -> None:
        module.get_function(name)((grid,), (block,), tuple(args))
        self.cp.cuda.Device().synchronize()

    def seconds(self, module, name: str, grid: int, block: int, args: list,
                repeat: int = 10) -> float:
        """The median of ``repeat`` launches timed with CUDA events."""
        f = module.get_function(name)
        f((grid,), (block,), tuple(args))
        times = []
        for _ in range(repeat):
            start, end = self.cp.cuda.Event(), self.cp.cuda.Event()
            start.record()
            f((grid,), (block,), tuple(args))
            end.record()
            end.synchronize()
            times.append(self.cp.cuda.get_elapsed_time(start, end) * 1e-3)
        return float(np.median(times))


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


def clock_khz(cp, props) -> float:
    """The SM clock: cudaDeviceProp.clockRate, or the device attribute
    cudaDevAttrClockRate where the runtime (CUDA 13) dropped the field."""
    if props.get("clockRate"):
        return float(props["clockRate"])
    return float(cp.cuda.Device(0).attributes["ClockRate"])


# --- Table 1 (section 3.1) ---------------------------------------------------

def table1_args(kind: str, out, repeat: int) -> list:
    if kind is not None and kind.startswith("float"):
        return [out, np.uint32(repeat), np.float32(FX0), np.float32(FY), np.float32(FK)]
    return [out, np.uint32(repeat), np.int32(X0), np.int32(Y)]


def chase_chain(nbytes: int = CHASE_BYTES, stride: int = CHASE_STRIDE, seed: int = 1):
    """A u64 buffer whose node at byte offset o holds the offset of the next
    node of one random cycle through all nodes (``stride`` bytes apart)."""
    nodes = nbytes // stride
    order = np.random.default_rng(seed).permutation(nodes).astype(np.uint64)
    chain = np.zeros(nbytes // 8, np.uint64)
    step = stride // 8
    chain[order * step] = np.roll(order, -1) * np.uint64(stride)
    return chain, int(order[0]) * stride


def _cycles(dev, module, k, args, samples) -> float:
    runs = []
    for _ in range(samples):
        dev.launch(module, k.name, 1, 32, args)
        runs.append(int(dev.get(args[0])[0]))
    return float(np.median(runs))


def measure_table1(dev, repeat: int, samples: int, chase_bytes: int = CHASE_BYTES) -> dict:
    """name -> {base, test, cost, instruction} for every Table 1 row x kind and ld/st."""
    pairs = table1.all_pairs()
    module = dev.load(kmod.module([k for p in pairs for k in p]))
    out = dev.array(np.zeros(2 * 32, np.uint64))
    chain = x0 = None
    result = {}
    for base, test in pairs:
        meta = test.meta
        if meta["row"] == "ld_st":
            if chain is None:
                host, start = chase_chain(chase_bytes)
                chain, x0 = dev.array(host), start
            args = [out, np.uint32(repeat), chain, np.uint64(x0)]
            name = "cost.ld_st"
        else:
            args = table1_args(meta["kind"], out, repeat)
            name = f"cost.{meta['row']}.{meta['kind']}"
        b = _cycles(dev, module, base, args, samples)
        t = _cycles(dev, module, test, args, samples)
        result[name] = {"base": b, "test": t, "cost": (t - b) / repeat,
                        "instruction": meta["instruction"]}
    return result


# --- CPD (section 3.4) -------------------------------------------------------

def blocks_for(n_warps: int, max_blocks: int) -> int | None:
    """Blocks per SM that hold ``n_warps`` warps in equal blocks of at most
    32 warps (1024 threads), or None."""
    for d in range(1, n_warps + 1):
        if n_warps % d == 0 and n_warps // d <= 32 and d <= max_blocks:
            return d
    return None


def measure_cpd(dev, p: ModelParams, samples: int, items_per_sm: int = ITEMS_PER_SM,
                warps=None) -> list:
    """One record per (kernel, N): P, the busiest SM's cycles T and CPD = N c / T."""
    picks = cpd.choose(p)
    kernels = [cpd.kernel(loads, k) for loads, k in picks]
    module = dev.load(kmod.module(kernels))
    n_sm = dev.sm_count
    items = n_sm * items_per_sm
    src = dev.array(np.full(cpd.WINDOW + cpd.LOAD_STRIDE * max(cpd.LOAD_COUNTS), 0.5,
                            np.float32))
    records = []
    for kern in kernels:
        instrs = kern.meta["body"]
        comp, _ = cpd.costs(instrs, p)
        prop = cpd.proportion(instrs, p)
        for n in (warps or range(1, dev.max_warps_per_sm + 1)):
            bps = blocks_for(n, dev.max_blocks_per_sm)
            if bps is None:
                continue
            grid, block = bps * n_sm, 32 * n // bps
            out = dev.array(np.zeros(grid * block, np.float32))
            times = dev.array(np.zeros(3 * grid, np.uint64))
            args = [out, times, src, np.uint32(items), np.uint32(cpd.WINDOW - 1),
                    np.float32(0.5)]
            runs, spread = [], 0
            for _ in range(samples):
                dev.launch(module, kern.name, grid, block, args)
                t = dev.get(times).reshape(-1, 3)
                per_sm = {}
                for sm, start, end in t:
                    lo, hi, cnt = per_sm.get(int(sm), (start, end, 0))
                    per_sm[int(sm)] = (min(lo, start), max(hi, end), cnt + 1)
                runs.append(max(float(hi - lo) for lo, hi, _ in per_sm.values()))
                spread = max(spread, max(c for _, _, c in per_sm.values()))
            cycles = float(np.median(runs))
            iters = math.ceil(items / (grid * block))
            c_warp = iters * comp
            records.append({"kernel": kern.name, "loads": kern.meta["loads"],
                            "k": kern.meta["k"], "P": prop, "N": n, "blocks_per_sm": bps,
                            "most_blocks_on_one_sm": spread, "cycles": cycles,
                            "c_warp": c_warp, "cpd": n * c_warp / cycles,
                            "even": spread == bps})
    return records


def measure_bandwidth(dev, nbytes: int = COPY_BYTES) -> float:
    """Bytes per second of a grid-stride copy (read + write)."""
    module = dev.load(kmod.module([cpd.copy_kernel()]))
    n16 = nbytes // 16
    src = dev.array(np.ones(nbytes // 4, np.uint32))
    dst = dev.array(np.zeros(nbytes // 4, np.uint32))
    s = dev.seconds(module, "copy_v4", dev.sm_count * 8, 256, [dst, src, np.uint64(n16)])
    return 2 * nbytes / s


# --- the file --------------------------------------------------------------

METHODS = {
    "cost": "Luo & Suda 3.1: two kernels differing by one PTX instruction, repeated "
            "{repeat} times (one warp, %clock64); (test - base) / {repeat}",
    "cost.ld_st": "3.1's method with one dependent global load over a random 256 MiB cycle",
    "t_mem": "= cost.ld_st (eq. 1)",
    "fit": "eqs. (3)-(5) fitted to {points} CPD measurements (N = 1..{m}, P {pmin:.2f}-"
           "{pmax:.2f}; rms {rms:.3g}; ptxc/predict/cpd_fit.py)",
    "gpu_bwt": "eq. (2): a {mib} MiB copy timed with CUDA events: {gbs:.1f} GB/s / clock",
    "n_sm": "cudaDeviceProp.multiProcessorCount",
    "clock_mhz": "cudaDeviceProp.clockRate",
    "m": "cudaDeviceProp.maxThreadsPerMultiProcessor / 32",
}


def calibrate(gpu_key: str, dev=None, repeat: int = table1.REPEAT,
              samples: int = SAMPLES) -> dict:
    """Measure every parameter; the parameter file's content."""
    if repeat < 1 or samples < 1:
        raise PtxcError("calibrate: --repeat and --samples must be at least 1")
    dev = dev if dev is not None else CupyDevice()
    defaults = default_params(gpu_key)
    params, methods, warnings = {}, {}, []
    t1 = measure_table1(dev, repeat, samples)
    for name, r in t1.items():
        if r["cost"] > 0:
            params[name] = r["cost"]
            methods[name] = (METHODS["cost.ld_st"] if name == "cost.ld_st" else
                             METHODS["cost"].format(repeat=repeat))
        else:
            warnings.append(f"{name}: {r['test']:.0f} - {r['base']:.0f} cycles = {r['cost']:.4g} "
                            "per instruction, not positive: the GPU model's default is kept")
    if "cost.ld_st" in params:
        params["t_mem"] = params["cost.ld_st"]
        methods["t_mem"] = METHODS["t_mem"]
    measured = ModelParams(defaults.gpu, {**defaults.values, **params}, defaults.sources)
    points = measure_cpd(dev, measured, samples)
    used = [r for r in points if r["even"]]
    if len(used) < len(points):
        warnings.append(f"{len(points) - len(used)} CPD measurements left out: the blocks "
                        "were not spread evenly over the SMs")
    m = dev.max_warps_per_sm
    f = cpd_fit.fit([r["N"] for r in used], [r["P"] for r in used], [r["cpd"] for r in used], m)
    desc = METHODS["fit"].format(points=f.points, m=m, rms=f.rms,
                                 pmin=min(r["P"] for r in used), pmax=max(r["P"] for r in used))
    for k, v in f.params().items():
        params[k] = v
        methods[k] = desc
    bw = measure_bandwidth(dev)
    params["gpu_bwt"] = bw / (dev.clock_mhz * 1e6)
    methods["gpu_bwt"] = METHODS["gpu_bwt"].format(mib=COPY_BYTES >> 20, gbs=bw / 1e9)
    params.update(n_sm=dev.sm_count, clock_mhz=dev.clock_mhz, m=m)
    methods.update({k: METHODS[k] for k in ("n_sm", "clock_mhz", "m")})
    return {"format": FORMAT, "device": dev.name, "gpu": defaults.gpu, "repeat": repeat,
            "samples": samples, "params": params, "methods": methods, "warnings": warnings,
            "measurements": {"table1": t1, "cpd": points,
                             "fit": {"a": f.a, "b": f.b, "c": f.c, "d": f.d, "rms": f.rms,
                                     "points": f.points, "on_cpd1": f.on_cpd1},
                             "bandwidth_bytes_per_s": bw}}


def write(path: str, data: dict) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2)
            fh.write("\n")
    except OSError as e:
        raise PtxcError(f"cannot write '{path}': {e.strerror or e}") from None

