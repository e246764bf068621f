"""numba-cuda's kernel ABI as ``ptxc opt --arg`` strings (docs/python-gpu.md).

numba passes every array argument as 5 + 2 x ndim parameters, in the order
of numba's array struct (numba/core/datamodel/models.py, ArrayModel):
``meminfo``, ``parent`` (0 on a device), ``nitems``, ``itemsize``,
``data`` (the buffer), ``shape[ndim]``, ``strides[ndim]`` (bytes); a scalar
is one parameter. ``args(values, folder)`` writes each array to an .npy
file and returns the ``--arg INDEX=VALUE`` list of the same launch.
"""
from __future__ import annotations

import os

import numpy as np


def args(values, folder: str) -> list[str]:
    out, index = [], 0
    for n, v in enumerate(values):
        if isinstance(v, np.ndarray):
            path = os.path.join(folder, f"arg{n}.npy")
            np.save(path, v)
            fields = [0, 0, v.size, v.itemsize, "@" + path, *v.shape, *v.strides]
        else:
            fields = [v]
        for f in fields:
            out += ["--arg", f"{index}={f}"]
            index += 1
    return out
