"""numba-cuda's kernel names as a Python programmer reads them.

numba mangles a kernel ``add`` of module ``__main__`` compiled for three
float32 arrays as an Itanium name with ABI tags (numba/core/itanium_mangler.py):
``_ZN8__main__3addB2v1B96cw51...E5ArrayIfLi1E1C7mutable7alignedE...``, which
c++filt prints as ``__main__::add[abi:v1][abi:cw51...](Array<float, 1, C,
mutable, aligned>, ...)``. ``pythonic`` drops the ABI tags (numba's
signature hash) and writes the types as numba does (``array(float32, 1d,
C)``, ``int64``), keeping ``::`` between the module path and the function
so that the naming rule's base name is the Python name (ptxc/ir/names.py):
``__main__::add(array(float32, 1d, C), array(float32, 1d, C), ...)``.
"""
from __future__ import annotations

import re

_ABI = re.compile(r"\[abi:[^\]]*\]")
_ARRAY = re.compile(r"Array<([^<>,]+(?:<[^<>]*>)?), (\d+), (\w+), (mutable|readonly), \w+>")
SCALARS = {"float": "float32", "double": "float64", "int": "int32", "long long": "int64",
           "long": "int64", "unsigned int": "uint32", "unsigned long long": "uint64",
           "unsigned long": "uint64", "short": "int16", "unsigned short": "uint16",
           "signed char": "int8", "unsigned char": "uint8", "char": "int8", "bool": "bool"}


def is_numba(text: str) -> bool:
    """Is ``text`` (a demangled name) a numba-cuda kernel's?"""
    return "[abi:v" in text


def pythonic(text: str) -> str:
    """``text`` without numba's ABI tags and with numba's type names."""
    text = _ABI.sub("", text)

    def array(m):
        ro = ", readonly" if m.group(4) == "readonly" else ""
        return f"array({_scalar(m.group(1))}, {m.group(2)}d, {m.group(3)}{ro})"

    text = _ARRAY.sub(array, text)
    head, paren, params = text.partition("(")
    if not paren or not params.endswith(")"):
        return text
    return f"{head}({', '.join(_scalar(p) for p in _split(params[:-1]))})"


def _split(params: str) -> list:
    """Top-level comma-separated parameters."""
    out, depth, cur = [], 0, ""
    for ch in params:
        depth += ch in "<(" and 1 or ch in ">)" and -1 or 0
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [p.strip() for p in out + [cur] if p.strip()]


def _scalar(name: str) -> str:
    return SCALARS.get(name.strip(), name.strip())
