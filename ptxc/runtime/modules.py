"""The application's fat binaries as ptxc modules: kernels and variables.

Each ``__cudaRegisterFatBinary`` (one per .cu file) becomes a FatBinary;
its PTX is decoded and parsed when one of its kernels or variables is
first used, so a large library that registers many kernels costs nothing
until it launches one. Every module gets a ModuleMemory whose .const and
.global arrays are device allocations (devmem.py): kernels address them
through the reserved segments 4 and 5, the application through the
allocation's own segment (cudaMemcpyToSymbol, cudaGetSymbolAddress,
``__managed__`` variables); both views are the same bytes.

With ``--ptx FILE`` the given module replaces the PTX of every fat binary
that registers one of its kernels (one module and one ModuleMemory shared
by all of them).
"""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field

from ptxc.errors import PtxcError

from . import driver_funcs_ptx, fatbin
from .protocol import KATTR_COUNT, KIND_MODULE

NUM_REGS = 32      # ptxc allocates no registers: what cudaFuncGetAttributes reports
NAMES_SHOWN = 3    # kernel names a message about a fat binary lists


@dataclass
class Kernel:
    id: int
    fatbin: "FatBinary"
    name: str
    host_address: int
    info: bytes | None = None

    @property
    def function(self):
        return self.fatbin.loaded().function(self.name)


@dataclass
class LoadedModule:
    """A parsed PTX module with its variables' memory."""
    module: object
    label: str
    memory: object = None
    allocations: list = field(default_factory=list)
    mapped: set = field(default_factory=set)     # segments the shim has mapped

    def function(self, name: str):
        for k in self.module.kernels:
            if k.name == name:
                return k
        names = [k.name for k in self.module.kernels]
        listed = ", ".join(names[:NAMES_SHOWN]) + (f" and {len(names) - NAMES_SHOWN} more"
                                                   if len(names) > NAMES_SHOWN else "")
        raise PtxcError(f"{self.label}: the application registered kernel '{name}' but the PTX "
                        f"has no such kernel (kernels: {listed or 'none'})")


@dataclass
class FatBinary:
    id: int
    blob: bytes
    registry: "Registry"
    linked: bool = False           # linked by nvlink (-rdc=true): the objects' PTX is not in it
    origin: str | None = None      # the shared library that registered it (None: the executable)
    objects: list = field(default_factory=list)   # -rdc=true: the objects' fat binaries (rdc.py)
    kernels: dict = field(default_factory=dict)
    module: LoadedModule | None = None

    def loaded(self) -> LoadedModule:
        if self.module is None:
            self.module = self.registry.load(self)
        return self.module


def describe(fb: FatBinary, limit: int = NAMES_SHOWN) -> str:
    """'fat binary #N (kernels: a, b and 40 more)': at most ``limit`` names,
    each shortened, the application's before the 32 that libcudadevrt's
    object registers (rdc.py), so that a message says why before it lists
    much."""
    ordered = sorted(fb.kernels, key=lambda n: "_cuda_device_runtime_cu_" in n)  # libcudadevrt's last
    names = [n if len(n) <= 60 else n[:57] + "..." for n in ordered[:limit]]
    more = len(fb.kernels) - len(names)
    listed = ", ".join(names) + (f" and {more} more" if more else "")
    return f"fat binary #{fb.id} (kernels: {listed or 'none'})"


class Registry:
    """Fat binaries and kernels of one run, by the ids the shim uses."""

    def __init__(self, devmem, sm: int, ptx_override: str | None = None,
                 keep_ptx: str | None = None, program: str | None = None):
        self.devmem = devmem
        self.program = program                   # the executable (names rdc objects: rdc.py)
        self.sm = sm
        self.fatbins: list[FatBinary] = []
        self.kernels: list[Kernel] = []
        self.override_path = ptx_override
        self._override: LoadedModule | None = None
        self.keep_ptx = keep_ptx
        self.texts: dict[str, str] = {}          # module file name -> PTX text (messages)

    # ------------------------------------------------------ registration
    def register_fatbin(self, blob: bytes, linked: bool = False, origin: str | None = None,
                        objects: list | None = None) -> int:
        fb = FatBinary(len(self.fatbins) + 1, blob, self, linked, origin, objects or [])
        self.fatbins.append(fb)
        return fb.id

    def register_function(self, fatbin_id: int, host_address: int, name: str) -> int:
        fb = self.fatbin(fatbin_id)
        k = Kernel(len(self.kernels) + 1, fb, name, host_address)
        self.kernels.append(k)
        fb.kernels[name] = k
        return k.id

    def fatbin(self, fatbin_id: int) -> FatBinary:
        if not 1 <= fatbin_id <= len(self.fatbins):
            raise PtxcError(f"internal error: unknown fat binary {fatbin_id}")
        return self.fatbins[fatbin_id - 1]

    def kernel(self, kernel_id: int) -> Kernel:
        if not 1 <= kernel_id <= len(self.kernels):
            raise PtxcError(f"internal error: unknown kernel {kernel_id}")
        return self.kernels[kernel_id - 1]

    # ----------------------------------------------------------- loading
    def load(self, fb: FatBinary) -> LoadedModule:
        override = self.override()
        if override is not None and (not fb.kernels or any(
                k.name == n for k in override.module.kernels for n in fb.kernels)):
            return override
        from ptxc.frontend.parser import parse_module
        label = f"fatbin{fb.id}"
        what = describe(fb)
        entries = fatbin.parse(fb.blob, what)
        if fb.linked and not fatbin.ptx_entries(entries):
            name, text = f"{label}.linked.ptx", self._linked_ptx(fb, what)
        else:
            if fb.origin and not fatbin.ptx_entries(entries):
                raise PtxcError(f"{os.path.basename(fb.origin)} ships its kernels as SASS only, "
                                f"and ptxc runs PTX, so this library cannot run under ptxc "
                                f"({what}, from {fb.origin}); cuBLAS, cuFFT, cuRAND, cuDNN and "
                                f"CUTLASS binaries are such libraries (docs/python-gpu.md)")
            entry = fatbin.choose_ptx(entries, self.sm, what)
            name, text = f"{label}.compute_{entry.arch}.ptx", entry.text()
        text = driver_funcs_ptx.provide(text)     # cudaGraphSetConditional ...
        if self.keep_ptx:
            os.makedirs(self.keep_ptx, exist_ok=True)
            with open(os.path.join(self.keep_ptx, name), "w") as f:
                f.write(text)
            name = os.path.join(self.keep_ptx, name)
        self.texts[name] = text
        module = parse_module(text, name)
        if not self.keep_ptx:           # no such file: messages say "line N of the PTX of fatbinN"
            module.attrs["ptx_of"] = label
        return self._with_memory(module, label)

    def _linked_ptx(self, fb: FatBinary, what: str) -> str:
        """The PTX of a fat binary that nvlink linked (-rdc=true: rdc.py)."""
        from . import rdc
        if not fb.objects:
            raise PtxcError(f"no PTX to run: nvlink linked this fat binary from relocatable "
                            f"device code (nvcc -rdc=true) and the application registered it "
                            f"without its objects' fat binaries, which hold their PTX; pass one "
                            f"PTX module holding every kernel and device function with --ptx "
                            f"({what})")
        path = fb.origin or self.program
        return rdc.linked_ptx(fb.objects, rdc.object_names(path, fb.objects), self.sm, what)

    def override(self) -> LoadedModule | None:
        if self.override_path and self._override is None:
            from ptxc.frontend.parser import decode, parse_module
            try:
                with open(self.override_path, "rb") as f:
                    data = f.read()
            except OSError as e:
                raise PtxcError(f"cannot read '{self.override_path}': {e.strerror or e}") from None
            text = driver_funcs_ptx.provide(decode(data, self.override_path))
            self._override = self._with_memory(parse_module(text, self.override_path),
                                               os.path.basename(self.override_path))
        return self._override

    def _with_memory(self, module, label: str) -> LoadedModule:
        from ptxc.backends.llvm.runtime import ModuleMemory
        lm = LoadedModule(module, label)
        names = iter((f".const variables of {label}", f".global variables of {label}"))

        def alloc(nbytes: int):
            a = self.devmem.allocate(nbytes, KIND_MODULE, next(names, f"variables of {label}"))
            lm.allocations.append(a)
            return a.array

        lm.memory = ModuleMemory.for_module(module, alloc)
        return lm

    def read_only_segments(self) -> set:
        """The allocations of the loaded modules' .const variables (the first
        each module makes, _with_memory): kernels may read them through
        cudaGetSymbolAddress's pointer, not write them."""
        loaded = [fb.module for fb in self.fatbins if fb.module is not None] + \
            ([self._override] if self._override is not None else [])
        return {lm.allocations[0].seg for lm in loaded if lm.allocations}

    def with_source_line(self, err: PtxcError) -> PtxcError:
        """``err`` with the PTX line it points at (the module has no file)."""
        if err.loc is None or err.source_line is not None or err.loc.file not in self.texts:
            return err
        lines = self.texts[err.loc.file].splitlines()
        if not 1 <= err.loc.line <= len(lines):
            return err
        return PtxcError(err.message, err.loc, lines[err.loc.line - 1], err.notes)

    # ------------------------------------------------------------ queries
    def kernel_info(self, k: Kernel) -> bytes:
        """Parameter layout and attributes (the OP_KERNEL_INFO reply)."""
        if k.info is None:
            from ptxc.backends.llvm.plan import align_up, var_align
            fn = k.function
            layout, off = [], 0
            for p in fn.params:
                off = align_up(off, var_align(p))
                layout.append((off, p.size))
                off += max(p.size, 1)
            attrs = self._attributes(k.fatbin.loaded(), fn)
            k.info = (struct.pack("<4I", len(layout), off, KATTR_COUNT, 0)
                      + b"".join(struct.pack("<II", o, s) for o, s in layout)
                      + struct.pack(f"<{KATTR_COUNT}q", *attrs))
        return k.info

    def _attributes(self, lm: LoadedModule, fn) -> list:
        from ptxc.backends.llvm.plan import Plan
        try:
            plan = Plan(lm.module, fn)
            shared, local = plan.shared_static, plan.local_size
        except PtxcError:
            shared = local = 0
        limit = fn.maxntid or fn.reqntid
        threads = 1024
        if limit:
            threads = 1
            for d in limit:
                threads *= d
        major, _, minor = (lm.module.version or "0.0").partition(".")
        target = next((t for t in lm.module.target if t.startswith("sm_")), f"sm_{self.sm}")
        sm = int("".join(c for c in target[3:] if c.isdigit()) or self.sm)
        const = lm.memory.layout.const_size if lm.memory is not None else 0
        return [shared, const, local, threads, NUM_REGS, int(major or 0) * 10 + int(minor or 0), sm]

    def symbol(self, fatbin_id: int, name: str):
        """(address, size, LoadedModule) of a module variable; raises KeyError."""
        lm = self.fatbin(fatbin_id).loaded()
        layout = lm.memory.layout
        var = next((v for v in lm.module.globals if v.name == name), None)
        if var is None:
            raise KeyError(name)
        if name in layout.const_layout:
            a, off = lm.allocations[0], layout.const_layout[name]
        elif name in layout.global_layout:
            a, off = lm.allocations[1], layout.global_layout[name]
        else:
            raise KeyError(name)
        return (a.seg << 32) | off, var.size, lm
