"""The initcheck variant's hook in ld/st/atom/red/cp.async (initcheck.py).

In a kernel compiled with ``initcheck=True`` every access of a global or
generic address (not a module variable named by its symbol: module variables
are initialised) passes its 32 lane addresses and the lanes that access to
``ptxc_initcheck``, after the address checks (so under memcheck the failing
lanes are already left out). The default code has no such call.
"""
from __future__ import annotations


def track(cg, space: str, static, addr, emi: str, kind: int, nbytes: int) -> None:
    """Call ptxc_initcheck for this access (nothing outside the variant)."""
    if not getattr(cg, "initcheck", False) or static is not None or space not in ("global", "generic"):
        return
    f = cg.f
    if not hasattr(cg, "initcheck_tmp"):
        cg.initcheck_tmp = f.alloca("<32 x i64>", "icaddr", 64)
    f.store("<32 x i64>", addr, cg.initcheck_tmp, 64)
    cg.decls.add("declare void @ptxc_initcheck(ptr, ptr, ptr, i32, ptr, i32, i32, i32)")
    f.call("void", "ptxc_initcheck", [("ptr", "%L"), ("ptr", "%cta"), ("ptr", "%ws"),
                                      ("i32", str(cg.iid())), ("ptr", cg.initcheck_tmp),
                                      ("i32", emi), ("i32", str(kind)), ("i32", str(nbytes))])
