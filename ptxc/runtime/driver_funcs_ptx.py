"""Device functions the CUDA driver provides at module load, as PTX.

nvcc compiles ``cudaGraphSetConditional(handle, value)`` (CUDA 13
cuda_device_runtime_api.h: ``extern __device__ __cudart_builtin__``) to a
call of an external function, in whole-program builds too (no ``-rdc``)::

    .extern .func cudaGraphSetConditional (.param .b64 p0, .param .b32 p1);

It is in no library the application links (libcudadevrt holds no such
symbol): ptxas leaves the cubin's reference unresolved and the driver binds
it when the module is loaded. ptxc does the same: :func:`provide` appends
the definition below to a module that declares the function without
defining it (appended, so the lines of the application's PTX keep their
numbers in messages). In ptxc a conditional handle is the device address of
the handle's 32-bit value (runtime/native/graph_cond.c), so setting it is
one store; the graph reads the value when it evaluates the conditional
node, after the kernel has finished.
"""
from __future__ import annotations

import re

FUNCTIONS = {
    "cudaGraphSetConditional": """
.visible .func cudaGraphSetConditional(.param .b64 handle, .param .b32 value)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [handle];
    ld.param.u32 %r1, [value];
    st.u32 [%rd1], %r1;
    ret;
}
""",
}


def _declared(text: str, name: str) -> bool:
    return re.search(r"\.extern\s+\.func\s*(?:\([^)]*\)\s*)?" + re.escape(name) + r"\b", text) is not None


def _defined(text: str, name: str) -> bool:
    return re.search(r"^\s*(?:\.visible\s+|\.weak\s+)?\.func\s*(?:\([^)]*\)\s*)?"
                     + re.escape(name) + r"\b[^;]*?\{", text, re.M | re.S) is not None


def provide(text: str) -> str:
    """``text`` with a definition of each driver function it declares
    ``.extern`` and does not define, appended at the end."""
    missing = [body for name, body in FUNCTIONS.items()
               if name in text and _declared(text, name) and not _defined(text, name)]
    return text + "".join(missing) if missing else text
