"""The LZ4 block decoder for fat binary entries compressed by nvcc's
``-compress-mode=speed`` (entry flag 0x2000).

The LZ4 block format (Y. Collet, lz4_Block_format.md): a block is a series
of sequences; each starts with a token byte whose high nibble is the number
of literal bytes and low nibble the match length minus 4 (15 in a nibble
means "add the following bytes, each up to 255, until one is below 255"),
then the literals, then a 2-byte little-endian back offset of the match and
any extra match-length bytes. The last sequence has literals only. A match
may overlap its own output (offset < length), which repeats a pattern.
"""
from __future__ import annotations


class LZ4Error(ValueError):
    pass


def _length(data: bytes, pos: int, nibble: int) -> tuple[int, int]:
    n = nibble
    if nibble == 15:
        while True:
            if pos >= len(data):
                raise LZ4Error("truncated length")
            b = data[pos]
            pos += 1
            n += b
            if b != 255:
                break
    return n, pos


def decompress_block(data: bytes, size: int | None = None) -> bytes:
    """Decode one LZ4 block; ``size`` (if known) bounds and checks the output."""
    out = bytearray()
    pos = 0
    end = len(data)
    while pos < end:
        token = data[pos]
        pos += 1
        nlit, pos = _length(data, pos, token >> 4)
        if pos + nlit > end:
            raise LZ4Error("literals past the end of the block")
        out += data[pos:pos + nlit]
        pos += nlit
        if pos >= end:
            break                      # the last sequence: literals only
        if pos + 2 > end:
            raise LZ4Error("truncated match offset")
        offset = data[pos] | data[pos + 1] << 8
        pos += 2
        mlen, pos = _length(data, pos, token & 15)
        mlen += 4
        if offset == 0 or offset > len(out):
            raise LZ4Error(f"match offset {offset} outside the output")
        start = len(out) - offset
        if offset >= mlen:
            out += out[start:start + mlen]
        else:                          # overlapping: repeat the period
            period = bytes(out[start:])
            reps, rest = divmod(mlen, offset)
            out += period * reps + period[:rest]
        if size is not None and len(out) > size:
            raise LZ4Error("output larger than the recorded size")
    if size is not None and len(out) != size:
        raise LZ4Error(f"decoded {len(out)} bytes, expected {size}")
    return bytes(out)
