"""A generated micro-benchmark kernel and the PTX module that holds kernels."""
from __future__ import annotations

from dataclasses import dataclass, field

HEADER = ".version 7.0\n.target sm_70\n.address_size 64\n"


@dataclass(frozen=True)
class Kernel:
    name: str
    text: str                   # the .entry, complete
    params: tuple               # (name, PTX type) of each parameter, in order
    meta: dict = field(default_factory=dict, compare=False, hash=False)


def module(kernels) -> str:
    """One PTX module with every kernel of ``kernels``."""
    return HEADER + "".join("\n" + k.text for k in kernels)


def entry(name: str, params, regs: str, body: list) -> str:
    """The text of ``.visible .entry name(params) { regs body }``."""
    plist = ",\n".join(f"    .param {t} {n}" for n, t in params)
    lines = "\n".join(ln if ln.endswith(":") else "    " + ln for ln in body)
    return f".visible .entry {name}(\n{plist}\n)\n{{\n{regs}\n{lines}\n}}\n"
