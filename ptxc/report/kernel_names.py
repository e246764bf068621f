"""Which kernel a launch of ``ptxc run`` ran: its (kernel name, module) pair.

Two fat binaries (two ``.cu`` files) may hold kernels of the same PTX name:
a ``static __global__ void k(int *)`` in each is ``_Z1kPi`` in both (nvcc
13), yet they are different kernels. Every aggregate of the run report (the summary,
CSV, JSON, SQLite ``kernels``, ``--by source``, ``--topdown``, the value
profile, the HTML page) therefore groups launches by the pair, never by the
name alone (docs/runtime.md, "The summary and the report"). ``module`` is
the launch record's module label (``fatbinN``).

The text shows a kernel by its demangled name (ptxc/ir/names.py), with
``[fatbinN]`` added when another kernel of the run shows the same name.
"""
from __future__ import annotations


def key(record) -> tuple:
    """(kernel, module) of a launch record."""
    return record.kernel, record.module


def group(launches) -> dict:
    """{(kernel, module): [launch records]} in order of first launch."""
    out: dict = {}
    for r in launches:
        out.setdefault(key(r), []).append(r)
    return out


def labels(keys) -> dict:
    """{(kernel, module): readable name}: demangled, and ``NAME [module]``
    where two keys would read the same."""
    keys = list(dict.fromkeys(keys))
    readable = demangle(k for k, _ in keys)
    seen: dict = {}
    for k, m in keys:
        seen.setdefault(readable[k], set()).add(m)
    return {(k, m): readable[k] + (f" [{m}]" if len(seen[readable[k]]) > 1 else "")
            for k, m in keys}


def demangle(names) -> dict:
    """{mangled: readable}: ptxc's demangler, else c++filt when it is
    installed, else as is (ptxc/ir/names.py)."""
    from ptxc.ir.names import demangle_all
    return demangle_all(names)
