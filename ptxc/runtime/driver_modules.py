"""The ptxc side of the driver API (native/drv_*.c): modules the application
loads at run time, their kernels, and the driver calls ptxc lacks.

A driver module (cuModuleLoadData, cuLibraryLoadData, cuLinkComplete's
image) becomes an entry of the run's Registry, like a fat binary that the
runtime registers, so launches, kernel attributes, module globals and the
report treat both alike; its PTX (driver_images.py, linked by ptx_link.py
when there are several) is parsed when it is loaded, so that a bad image is
the load's error, as on a GPU. The module is labelled ``moduleN`` in the
report (runtime fat binaries are ``fatbinN``); ``--keep-ptx DIR`` writes
its PTX to ``DIR/moduleN.ptx``.

An unsupported driver call returns CUDA_ERROR_NOT_SUPPORTED to the
application, which goes on; ptxc lists the calls after the run and in the
report's ``meta`` (``unsupported_driver_calls``).
"""
from __future__ import annotations

import os
import struct

from ptxc.errors import PtxcError, render_error

from . import driver_funcs_ptx, driver_images, ptx_link
from . import protocol as P

CUDA_ERROR_NOT_FOUND = 500


class DriverModules:
    def __init__(self, session):
        self.session = session
        self.unsupported: list[str] = []       # driver calls the application made, in order
        self.functions: dict = {}              # (module id, name) -> kernel id
        self.ptx_store: str | None = None      # the run's PTX of cubins (cubin_ptx.py)

    @property
    def registry(self):
        return self.session.registry

    # ---------------------------------------------------------- requests
    def note_unsupported(self, payload: bytes) -> None:
        name = payload.decode("utf-8", "replace")
        if name not in self.unsupported:
            self.unsupported.append(name)
        self.session.channel.reply(0)

    def load(self, payload: bytes) -> None:
        library, _ = struct.unpack_from("<II", payload)
        call = "cuLibraryLoadData" if library else "cuModuleLoadData"
        fid = self.registry.register_fatbin(b"")
        label = f"module{fid}"
        try:
            kernels = self._load(fid, label, payload[8:], f"the image of {call} ({label})")
        except driver_images.ImageError as e:
            self.session.channel.reply(e.code, e.message.encode() + b"\0")
            return
        except PtxcError as e:
            text = render_error(e).splitlines()[0]
            self.session.channel.reply(driver_images.CUDA_ERROR_INVALID_PTX, text.encode() + b"\0")
            return
        names = b"".join(k.encode() + b"\0" for k in kernels)
        self.session.channel.reply(0, struct.pack("<II", fid, len(kernels)) + names)

    def function(self, payload: bytes) -> None:
        fid, = struct.unpack_from("<I", payload)
        name = payload[4:].decode("utf-8", "replace")
        fb = self.registry.fatbin(fid)
        if fb.module is None or all(k.name != name for k in fb.module.module.kernels):
            self.session.channel.reply(CUDA_ERROR_NOT_FOUND)
            return
        kid = self.functions.get((fid, name))
        if kid is None:
            kid = self.functions[(fid, name)] = self.registry.register_function(fid, 0, name)
        self.session.channel.reply(0, struct.pack("<I", kid))

    # ------------------------------------------------------------ loading
    def _load(self, fid: int, label: str, image: bytes, what: str) -> list[str]:
        from ptxc.frontend.parser import parse_module
        reg = self.registry
        text = ptx_link.link(driver_images.ptx_of(image, reg.sm, what, self.ptx_store))
        text = driver_funcs_ptx.provide(text)     # cudaGraphSetConditional ...
        name = f"{label}.ptx"
        if reg.keep_ptx:
            os.makedirs(reg.keep_ptx, exist_ok=True)
            name = os.path.join(reg.keep_ptx, name)
            with open(name, "w") as f:
                f.write(text)
        reg.texts[name] = text
        module = parse_module(text, name)
        if not reg.keep_ptx:          # no such file: messages say "line N of the PTX of moduleN"
            module.attrs["ptx_of"] = label
        reg.fatbin(fid).module = reg._with_memory(module, label)
        return [k.name for k in module.kernels]


def handlers(session) -> dict:
    """The requests of the driver half, answered for ``session``
    (server.Session keeps the DriverModules as ``session.driver``)."""
    dm = DriverModules(session)
    session.driver = dm
    return {P.OP_DRIVER_UNSUPPORTED: dm.note_unsupported, P.OP_MODULE_LOAD: dm.load,
            P.OP_MODULE_FUNCTION: dm.function}
