"""The value profile of a launch (SASSI section 6; docs/value-profile.md):
per register-writing instruction and destination, the bits that held one
value in every executing lane (constant bits) and the warp-level writes of
one value (scalar writes), with SASSI's Table 2 summary. The entries come
from results_value.py; ptxc/valueprof/ merges, prints and stores them.
"""
from __future__ import annotations




SUMMARY_KEYS = ("static_const_bits_pct", "dynamic_const_bits_pct",
                "static_scalar_pct", "dynamic_scalar_pct",
                "registers", "register_bits", "writes", "scalar_writes")


def bit_string(e: dict) -> str:
    """The bits from the most significant down as SASSI's valueprof prints
    them: ``1`` / ``0`` constant one / zero, ``T`` both seen (not constant),
    ``X`` never written (an instruction that never executed)."""
    out = []
    for b in range(e["bits"] - 1, -1, -1):
        one, zero = e["ones"] >> b & 1, e["zeros"] >> b & 1
        out.append("T" if one and zero else "1" if one else "0" if zero else "X")
    return "".join(out)


def constant_bits(e: dict) -> int:
    """Bits of the register that held one value in every executing lane."""
    if not e["writes"]:
        return 0
    return e["bits"] - bin(e["ones"] & e["zeros"]).count("1")


def summarize(entries) -> dict:
    """SASSI's Table 2 over the executed entries (docs/value-profile.md):
    static = every (instruction, destination) counts once; dynamic =
    weighted by thread-level writes (constant bits) or counted per
    warp-level write (scalar)."""
    run = [e for e in entries if e["writes"]]
    bits = sum(e["bits"] for e in run)
    lane_bits = sum(e["bits"] * e["lanes"] for e in run)
    writes = sum(e["writes"] for e in run)
    scalar = sum(e["scalar_writes"] for e in run)
    return {
        "static_const_bits_pct": pct(sum(constant_bits(e) for e in run), bits),
        "dynamic_const_bits_pct": pct(sum(constant_bits(e) * e["lanes"] for e in run), lane_bits),
        "static_scalar_pct": pct(sum(1 for e in run if e["scalar_writes"] == e["writes"]), len(run)),
        "dynamic_scalar_pct": pct(scalar, writes),
        "registers": len(run), "register_bits": bits, "writes": writes, "scalar_writes": scalar}


def pct(a: int, b: int):
    return round(100.0 * a / b, 4) if b else None


def make(entries: dict) -> dict:
    """A Profile's ``value_profile`` from results_value.value_entries."""
    return {"instructions": entries, "summary": summarize(entries.values())}


def rows(vp: dict) -> list[dict]:
    """One flat row per entry (order of the text), masks as bit strings."""
    out = []
    for e in sorted(vp["instructions"].values(), key=lambda e: (e["function"], e["index"], e["dst"])):
        out.append({"function": e["function"], "index": e["index"], "line": e["line"],
                    "opcode": e["opcode"], "register": e["register"], "bits": e["bits"],
                    "mask": bit_string(e), "constant_bits": constant_bits(e),
                    "scalar_writes": e["scalar_writes"], "writes": e["writes"], "lanes": e["lanes"],
                    "source": e.get("source") or ""})
    return out


def summary_lines(s: dict, indent: str = "  ") -> list[str]:
    def f(v):
        return "-" if v is None else f"{v:.2f}%"
    return [f"{indent}{'constant register bits':28s} static {f(s['static_const_bits_pct']):>8}  "
            f"dynamic {f(s['dynamic_const_bits_pct']):>8}",
            f"{indent}{'scalar writes':28s} static {f(s['static_scalar_pct']):>8}  "
            f"dynamic {f(s['dynamic_scalar_pct']):>8}",
            f"{indent}{'registers written':28s} {s['registers']} ({s['register_bits']} bits), "
            f"{s['writes']} warp-level writes, {s['scalar_writes']} scalar"]
