"""Protocol buffers wire format, read side: varints, fixed-width numbers, length-delimited fields.

The encoding is the public "Protocol Buffers Encoding" reference: every field
is a key varint ``(number << 3) | wire_type`` followed by its payload. Wire
types: 0 varint, 1 64-bit little endian, 2 length-delimited (strings, bytes,
nested messages, packed repeated scalars, map entries), 5 32-bit little
endian; 3/4 (groups) do not occur in Kubernetes messages and are refused.

Every function here raises :class:`WireError` on truncated or malformed
input; nothing reads past ``end``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

VARINT, I64, LEN, I32 = 0, 1, 2, 5

_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")
_F64 = struct.Struct("<d")
_F32 = struct.Struct("<f")


class WireError(ValueError):
    """Malformed or truncated protobuf bytes (the message says where)."""


def read_varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """Decode one base-128 varint at ``pos``; returns (value as unsigned 64-bit, next position)."""
    if pos >= end:
        raise WireError(f"truncated varint at offset {pos}")
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    result = b & 0x7F
    shift = 7
    pos += 1
    while True:
        if pos >= end:
            raise WireError(f"truncated varint at offset {pos}")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
        if shift >= 70:
            raise WireError(f"varint longer than 10 bytes at offset {pos}")
    return result & 0xFFFFFFFFFFFFFFFF, pos


def fields(buf: bytes, pos: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """Yield (field number, wire type, value, payload end) for each field in ``buf[pos:end]``.

    For VARINT the value is the unsigned varint; for I64/I32 it is the
    unsigned little-endian integer; for LEN it is the payload's start offset
    (the payload is ``buf[value:payload_end]``). For the others payload end
    is the position after the field.
    """
    while pos < end:
        key, pos = read_varint(buf, pos, end)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise WireError(f"invalid field number 0 at offset {pos}")
        if wire_type == VARINT:
            value, pos = read_varint(buf, pos, end)
            yield number, wire_type, value, pos
        elif wire_type == LEN:
            length, pos = read_varint(buf, pos, end)
            stop = pos + length
            if stop > end:
                raise WireError(f"field {number}: length {length} runs past the end of the message")
            yield number, wire_type, pos, stop
            pos = stop
        elif wire_type == I64:
            if pos + 8 > end:
                raise WireError(f"field {number}: truncated 64-bit value")
            yield number, wire_type, _U64.unpack_from(buf, pos)[0], pos + 8
            pos += 8
        elif wire_type == I32:
            if pos + 4 > end:
                raise WireError(f"field {number}: truncated 32-bit value")
            yield number, wire_type, _U32.unpack_from(buf, pos)[0], pos + 4
            pos += 4
        else:
            raise WireError(f"field {number}: unsupported wire type {wire_type}")


def packed_varints(buf: bytes, pos: int, end: int) -> Iterator[int]:
    """Yield the unsigned varints of a packed repeated field's payload."""
    while pos < end:
        value, pos = read_varint(buf, pos, end)
        yield value


def packed_fixed(buf: bytes, pos: int, end: int, width: int) -> Iterator[int]:
    """Yield the unsigned little-endian integers (4 or 8 bytes each) of a packed payload."""
    if (end - pos) % width:
        raise WireError(f"packed fixed{width * 8} payload of {end - pos} bytes")
    unpack = (_U32 if width == 4 else _U64).unpack_from
    for at in range(pos, end, width):
        yield unpack(buf, at)[0]


def int64(value: int) -> int:
    """Two's-complement reinterpretation of an unsigned 64-bit value."""
    return value - (1 << 64) if value >= 1 << 63 else value


def int32(value: int) -> int:
    """Go's ``int32(uint64)`` truncation of a varint (negative int32s are sign-extended on the wire)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def zigzag(value: int) -> int:
    """sint32/sint64 ZigZag decoding."""
    return (value >> 1) ^ -(value & 1)


def double(value: int) -> float:
    """The float64 whose bits are ``value``."""
    return float(_F64.unpack(_U64.pack(value))[0])


def float32(value: int) -> float:
    """The float32 whose bits are ``value``."""
    return float(_F32.unpack(_U32.pack(value))[0])
