"""Native helpers of the warp collectives (warp.py), as LLVM IR text.

Lanes of one converged ``.sync`` collective may pass different member masks
(cooperative groups' ``labeled_partition``: each lane passes its own group's
mask), so every lane reduces over its own members. Both helpers take, per
lane, a 32-bit set of source lanes and loop over the 32 possible sources
(unrolled: 32 vector steps, no scalar work per lane):

* ``ptxc_redux_<op>(a, m)``: lane l gets op over { a[k] : bit k of m[l] }
  (the identity of op when m[l] is empty): ``redux.sync`` (PTX ISA 9.x,
  9.7.15.13 "Parallel Synchronization and Communication Instructions:
  redux.sync").
* ``ptxc_match_eq_<iN>(a, v)``: lane l gets the set { k : a[k] == v[l] }:
  ``match.sync`` (9.7.15.11).

Each helper is added once to the kernel modules that use it (``cg.helpers``)
and inlined by LLVM when a launch is optimised.
"""
from __future__ import annotations

V = "<32 x i32>"

# op -> (LLVM combine, identity as a signed 32-bit literal)
REDUX_OPS = {
    "add": ("add", 0), "and": ("and", -1), "or": ("or", 0), "xor": ("xor", 0),
    "umin": ("llvm.umin", -1), "umax": ("llvm.umax", 0),
    "smin": ("llvm.smin", 0x7FFFFFFF), "smax": ("llvm.smax", -0x80000000),
}


def _splat_lane(src: str, vt: str, k: int) -> str:
    return f"shufflevector {vt} {src}, {vt} poison, <32 x i32> splat (i32 {k})"


def _has_lane(k: int) -> list[str]:
    """%h<k>: lanes whose set %m holds source lane k (bit k moved to the sign)."""
    return [f"  %b{k} = shl {V} %m, splat (i32 {31 - k})",
            f"  %h{k} = icmp slt {V} %b{k}, zeroinitializer"]


def redux_helper(op: str) -> tuple[str, str, set[str]]:
    """(name, IR text, declarations) of the per-lane reduction ``op``."""
    combine, ident = REDUX_OPS[op]
    name = f"ptxc_redux_{op}"
    idv = f"splat (i32 {ident})"
    lines = [f"define internal {V} @{name}({V} %a, {V} %m) {{", "entry:"]
    acc = idv
    for k in range(32):
        lines += [f"  %s{k} = {_splat_lane('%a', V, k)}", *_has_lane(k),
                  f"  %x{k} = select <32 x i1> %h{k}, {V} %s{k}, {V} {idv}"]
        if combine.startswith("llvm."):
            lines.append(f"  %r{k} = call {V} @{combine}.v32i32({V} {acc}, {V} %x{k})")
        else:
            lines.append(f"  %r{k} = {combine} {V} {acc}, %x{k}")
        acc = f"%r{k}"
    lines += [f"  ret {V} {acc}", "}"]
    decls = {f"declare {V} @{combine}.v32i32({V}, {V})"} if combine.startswith("llvm.") else set()
    return name, "\n".join(lines), decls


def match_helper(lt: str) -> tuple[str, str]:
    """(name, IR text) of the equality sets for lane values of LLVM type ``lt``."""
    vt = f"<32 x {lt}>"
    name = f"ptxc_match_eq_{lt}"
    lines = [f"define internal {V} @{name}({vt} %a, {vt} %v) {{", "entry:"]
    acc = "zeroinitializer"
    for k in range(32):
        bit = -0x80000000 if k == 31 else 1 << k
        lines += [f"  %s{k} = {_splat_lane('%a', vt, k)}",
                  f"  %e{k} = icmp eq {vt} %s{k}, %v",
                  f"  %x{k} = select <32 x i1> %e{k}, {V} splat (i32 {bit}), {V} zeroinitializer",
                  f"  %r{k} = or {V} {acc}, %x{k}"]
        acc = f"%r{k}"
    lines += [f"  ret {V} {acc}", "}"]
    return name, "\n".join(lines)
