"""Schema-driven encoding of Go-JSON-shaped dicts into Kubernetes protobuf messages: the inverse of the decoder.

kube-apiserver answers ``Accept: application/vnd.kubernetes.protobuf`` for
built-in kinds with the object's gogo-generated ``Marshal`` output inside
the ``k8s\\0`` + ``runtime.Unknown`` envelope (k8s.io/apimachinery
pkg/runtime/serializer/protobuf ``Serializer.Encode``). This module writes
the same bytes from the JSON form kapi stores, with the message layouts of
``schema.json`` (:class:`kapi.k8sproto.decoder.Schema`):

- fields are written in field-number order, as the generated marshallers
  do; a JSON key that is absent or ``null`` is not written, a present one is,
  zero values included (``replicas: 0``, ``""``, ``false``). Keys the
  message does not have (``kind``/``apiVersion`` of typed list items, fields
  newer than the schema) are left out, as Go's JSON decoding into the typed
  struct would drop them.
- ``string`` -> UTF-8; ``bytes`` <- standard base64 (Go's ``[]byte`` JSON);
  integers as varints (negative int32/int64 sign-extended to 10 bytes),
  ``bool`` as 0/1; repeated scalars unpacked (the files are proto2).
- maps -> one ``{1: key, 2: value}`` entry message per key, keys sorted (the
  generated code sorts them); list-wrapper messages (``"list": true``) take a
  bare JSON array as their ``items``.
- fields embedded with ``json:",inline"`` (mode ``"i"``) take their keys
  from the enclosing JSON object, and are always written.
- ``meta/v1.Time`` / ``MicroTime`` <- RFC 3339 text -> ``{1: seconds, 2:
  nanos}`` (Time keeps whole seconds, as its JSON form has); ``meta/v1.Duration``
  <- Go duration text -> ``{1: nanoseconds}``; ``resource.Quantity`` <- its
  string (or a JSON number) -> ``{1: string}``; ``intstr.IntOrString`` <- int
  -> ``{1: 0, 2: int}``, str -> ``{1: 1, 3: str}``; ``runtime.RawExtension``
  and ``meta/v1.FieldsV1`` <- any JSON value -> ``{1: its compact JSON}``.

:class:`EncodeError` is raised for values of the wrong JSON type for the
field (a string for an int32, ...) and for a kind the schema does not know.
"""

from __future__ import annotations

import base64
import binascii
import calendar
import datetime
import functools
import struct
from typing import Any

from kapi import duration, jsonutil
from kapi.k8sproto.decoder import (
    DURATION,
    FIELDS_V1,
    INT_OR_STRING,
    META,
    MICRO_TIME,
    QUANTITY,
    RAW_EXTENSION,
    TIME,
    Message,
    Schema,
    schema,
)
from kapi.k8sproto.wire import I32, I64, LEN, VARINT

MAGIC = b"k8s\x00"
STATUS = f"{META}.Status"
PARTIAL_KINDS = ("PartialObjectMetadata", "PartialObjectMetadataList")

_F64 = struct.Struct("<d")
_F32 = struct.Struct("<f")
_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")


class EncodeError(ValueError):
    """A JSON value that does not fit the schema's field, or an unknown kind; ``path`` is where
    (``["Deployment", "spec", "replicas"]``), and the text is ``Deployment.spec.replicas: <reason>``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path: list[str] = []

    def __str__(self) -> str:
        where = ".".join(self.path).replace(".[", "[")
        return f"{where}: {self.reason}" if where else self.reason


def _varint(out: bytearray, value: int) -> None:
    value &= 0xFFFFFFFFFFFFFFFF
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _key(number: int, wire_type: int) -> bytes:
    out = bytearray()
    _varint(out, (number << 3) | wire_type)
    return bytes(out)


def _put_len(out: bytearray, key: bytes, payload: bytes | bytearray) -> None:
    out += key
    n = len(payload)
    if n < 0x80:
        out.append(n)
    else:
        _varint(out, n)
    out += payload


# ------------------------------------------------------------------------------------------------ scalars

def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise EncodeError(f"{type(value).__name__} value for an integer field")
    if isinstance(value, float):
        if not value.is_integer():
            raise EncodeError(f"non-integer number {value}")
        value = int(value)
    return value


def _scalar(out: bytearray, key_varint: bytes, key_len: bytes, key_i64: bytes, key_i32: bytes, ftype: str,
            value: Any) -> None:
    """Append one scalar field (its key chosen by wire type)."""
    if ftype == "string":
        if not isinstance(value, str):
            raise EncodeError(f"{type(value).__name__} value for a string field")
        _put_len(out, key_len, value.encode("utf-8", "surrogatepass"))
    elif ftype == "bool":
        if not isinstance(value, bool):
            raise EncodeError(f"{type(value).__name__} value for a bool field")
        out += key_varint
        out.append(1 if value else 0)
    elif ftype in ("int32", "int64", "uint32", "uint64"):
        out += key_varint
        _varint(out, _int(value))
    elif ftype == "bytes":
        if not isinstance(value, str):
            raise EncodeError(f"{type(value).__name__} value for a bytes field")
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise EncodeError("illegal base64 data") from None
        _put_len(out, key_len, raw)
    elif ftype in ("sint32", "sint64"):
        n = _int(value)
        out += key_varint
        _varint(out, (n << 1) ^ (n >> 63))
    elif ftype in ("double", "fixed64", "sfixed64"):
        out += key_i64
        out += _F64.pack(float(value)) if ftype == "double" else _U64.pack(_int(value) & (2**64 - 1))
    elif ftype in ("float", "fixed32", "sfixed32"):
        out += key_i32
        out += _F32.pack(float(value)) if ftype == "float" else _U32.pack(_int(value) & (2**32 - 1))
    else:  # pragma: no cover - the schema loader accepts only the types above
        raise EncodeError(f"unsupported scalar type {ftype}")


# ------------------------------------------------------------------------------------------ special messages

def _parse_time(value: Any) -> tuple[int, int]:
    if not isinstance(value, str):
        raise EncodeError(f"{type(value).__name__} value for a time")
    try:
        t = datetime.datetime.fromisoformat(value)
    except ValueError:
        raise EncodeError(f"time {value!r} is not RFC 3339") from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=datetime.UTC)
    return calendar.timegm(t.utctimetuple()), t.microsecond * 1000


def _time(value: Any) -> bytes:
    seconds, _nanos = _parse_time(value)
    out = bytearray(b"\x08")
    _varint(out, seconds)
    out += b"\x10\x00"
    return bytes(out)


def _micro_time(value: Any) -> bytes:
    seconds, nanos = _parse_time(value)
    out = bytearray(b"\x08")
    _varint(out, seconds)
    out.append(0x10)
    _varint(out, nanos)
    return bytes(out)


def _duration(value: Any) -> bytes:
    if not isinstance(value, str):
        raise EncodeError(f"{type(value).__name__} value for a duration")
    text, sign = (value[1:], -1) if value.startswith("-") else (value.lstrip("+"), 1)
    try:
        nanos = 0 if text == "0" else round(duration.parse_duration(text, strict=True) * 1e9)
    except ValueError:
        raise EncodeError(f"invalid duration {value!r}") from None
    out = bytearray(b"\x08")
    _varint(out, sign * nanos)
    return bytes(out)


def _quantity(value: Any) -> bytes:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise EncodeError(f"{type(value).__name__} value for a quantity")
    text = value if isinstance(value, str) else jsonutil.dumps(value).decode()
    out = bytearray()
    _put_len(out, b"\x0a", text.encode("utf-8"))
    return bytes(out)


def _int_or_string(value: Any) -> bytes:
    out = bytearray()
    if isinstance(value, str):
        out += b"\x08\x01\x10\x00"
        _put_len(out, b"\x1a", value.encode("utf-8"))
    else:
        out += b"\x08\x00\x10"
        _varint(out, _int(value))
        out += b"\x1a\x00"
    return bytes(out)


def _raw_json(value: Any) -> bytes:
    out = bytearray()
    _put_len(out, b"\x0a", jsonutil.dumps(value))
    return bytes(out)


_SPECIALS = {TIME: _time, MICRO_TIME: _micro_time, DURATION: _duration, QUANTITY: _quantity,
             INT_OR_STRING: _int_or_string, RAW_EXTENSION: _raw_json, FIELDS_V1: _raw_json}


# ------------------------------------------------------------------------------------------------ encoder

class Encoder:
    """Encodes JSON-shaped values as messages of one :class:`Schema` (plans compiled per message, once)."""

    def __init__(self, table: Schema) -> None:
        self.schema = table
        # message name -> (JSON name -> field plan, the inline fields' plans in number order)
        self._plans: dict[str, tuple[dict[str, tuple[Any, ...]], list[tuple[Any, ...]]]] = {}

    def _plan(self, msg: Message) -> tuple[dict[str, tuple[Any, ...]], list[tuple[Any, ...]]]:
        plan = self._plans.get(msg.name)
        if plan is None:
            by_name: dict[str, tuple[Any, ...]] = {}
            inline: list[tuple[Any, ...]] = []
            for number in sorted(msg.fields):
                name, ftype, mode, vtype = msg.fields[number]
                spec = (number, name, ftype, mode, vtype, _key(number, VARINT), _key(number, LEN),
                        _key(number, I64), _key(number, I32))
                if mode == "i":
                    inline.append(spec)
                else:
                    by_name[name] = spec
            plan = self._plans[msg.name] = (by_name, inline)
        return plan

    def message_for(self, api_version: str, kind: str) -> Message | None:
        """The message of a kind: the schema's kinds, meta/v1 ``Status`` under every version (kube's
        ``metav1.AddToGroupVersion`` registers it in each) and ``meta.k8s.io/v1`` PartialObjectMetadata(List);
        None when there is none (custom resources, Table, kinds the table leaves out such as autoscaling/v1
        Scale)."""
        group, _, version = api_version.rpartition("/")
        msg = self.schema.lookup(group, version, kind)
        if msg is None and kind == "Status" and version:
            msg = self.schema.messages.get(STATUS)
        if msg is None and api_version == "meta.k8s.io/v1" and kind in PARTIAL_KINDS:
            msg = self.schema.messages.get(f"{META}.{kind}")
        return msg

    def message(self, msg: Message, value: Any) -> bytes:
        """``value`` (a dict; a list for list wrappers; a scalar for the special messages) as ``msg``'s bytes.

        Raises :class:`EncodeError` (its ``path`` names the field) for a value of the wrong JSON type.
        """
        special = _SPECIALS.get(msg.name)
        if special is not None:
            return special(value)
        if msg.is_list:
            value = {"items": value}
        if not isinstance(value, dict):
            raise EncodeError(f"{type(value).__name__} value for a {msg.name.rpartition('.')[2]}")
        by_name, inline = self._plan(msg)
        # (field number, plan, value): numbers are unique, so the tuples sort by number alone
        present = [(spec[0], spec, item) for key, item in value.items()
                   if item is not None and (spec := by_name.get(key)) is not None]
        if inline:
            present += [(spec[0], spec, value) for spec in inline]
        if len(present) > 1:
            present.sort()
        out = bytearray()
        for _, (_, name, ftype, mode, vtype, kv, kl, k64, k32), item in present:
            try:
                if mode == "":
                    if type(item) is str and ftype == "string":  # the common case, inline
                        data = item.encode("utf-8", "surrogatepass")
                        out += kl
                        if len(data) < 0x80:
                            out.append(len(data))
                        else:
                            _varint(out, len(data))
                        out += data
                    elif isinstance(ftype, Message):
                        _put_len(out, kl, self.message(ftype, item))
                    else:
                        _scalar(out, kv, kl, k64, k32, ftype, item)
                elif mode == "r":
                    if not isinstance(item, list):
                        raise EncodeError(f"{type(item).__name__} value for a list")
                    if isinstance(ftype, Message):
                        for element in item:
                            _put_len(out, kl, b"" if element is None else self.message(ftype, element))
                    else:
                        for element in item:
                            _scalar(out, kv, kl, k64, k32, ftype, element)
                elif mode == "m":
                    if not isinstance(item, dict):
                        raise EncodeError(f"{type(item).__name__} value for a map")
                    for k in sorted(item):
                        _put_len(out, kl, self._entry(ftype, vtype, k, item[k]))
                else:  # inline: the enclosing object's keys
                    _put_len(out, kl, self.message(ftype, item))
            except EncodeError as exc:
                if mode != "i":
                    exc.path.insert(0, name)
                raise
        return bytes(out)

    def _entry(self, ktype: str, vtype: str | Message, key: str, value: Any) -> bytes:
        """One map entry message ``{1: key, 2: value}`` (value left out when null, as an unset pointer)."""
        entry = bytearray()
        try:
            _scalar(entry, b"\x08", b"\x0a", b"\x09", b"\x0d", ktype, key)
            if isinstance(vtype, Message):
                _put_len(entry, b"\x12", b"" if value is None else self.message(vtype, value))
            elif value is not None:
                _scalar(entry, b"\x10", b"\x12", b"\x11", b"\x15", vtype, value)
        except EncodeError as exc:
            exc.path.insert(0, f"[{key}]")
            raise
        return bytes(entry)

    def encode(self, obj: dict[str, Any]) -> bytes:
        """``obj`` (with ``apiVersion`` and ``kind``) as a whole protobuf body: magic + ``runtime.Unknown``.

        Raises :class:`EncodeError` when the kind has no message or a value does not fit its field.
        """
        api_version = obj.get("apiVersion")
        kind = obj.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str) or not kind:
            raise EncodeError("the object has no apiVersion/kind")
        msg = self.message_for(api_version, kind)
        if msg is None:
            raise EncodeError(f'no kind "{kind}" is registered for version "{api_version}" in the protobuf schema')
        try:
            raw = self.message(msg, obj)
        except EncodeError as exc:
            exc.path.insert(0, kind)
            raise
        return envelope(api_version, kind, raw)


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    """The ``k8s\\0`` prefix and ``runtime.Unknown{typeMeta, raw, contentEncoding "", contentType ""}``, every field
    written as Go's generated Marshal does (empty strings included)."""
    type_meta = bytearray()
    _put_len(type_meta, b"\x0a", api_version.encode())
    _put_len(type_meta, b"\x12", kind.encode())
    out = bytearray(MAGIC)
    _put_len(out, b"\x0a", type_meta)
    _put_len(out, b"\x12", raw)
    out += b"\x1a\x00\x22\x00"
    return bytes(out)


def watch_event(event_type: str, object_body: bytes) -> bytes:
    """One protobuf watch frame: a 4-byte big-endian length, then ``meta/v1.WatchEvent{type, object:
    RawExtension{raw: object_body}}`` (``object_body``: the event object's whole envelope, as
    :func:`encode` makes it). kube: apimachinery pkg/runtime/serializer/streaming and ``versioning.WatchEvent``."""
    raw_ext = bytearray()
    _put_len(raw_ext, b"\x0a", object_body)
    event = bytearray()
    _put_len(event, b"\x0a", event_type.encode())
    _put_len(event, b"\x12", raw_ext)
    return len(event).to_bytes(4, "big") + bytes(event)


@functools.cache
def default_encoder() -> Encoder:
    """The encoder of the shipped schema (:func:`kapi.k8sproto.decoder.schema`)."""
    return Encoder(schema())


def encodable(api_version: str, kind: str) -> bool:
    """Whether the shipped schema has a message for this kind (kube serves protobuf for it)."""
    return default_encoder().message_for(api_version, kind) is not None


def encode(obj: dict[str, Any]) -> bytes:
    """:meth:`Encoder.encode` with the shipped schema."""
    return default_encoder().encode(obj)
