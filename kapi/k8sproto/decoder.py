"""Schema-driven decoding of Kubernetes protobuf messages into Go-JSON-shaped dicts.

The schema table (``schema.json``, made by scripts/gen_k8sproto_schema.py
from the upstream ``generated.proto`` files) gives, per message, each field
number's JSON name, type and mode. This module walks the wire bytes with
:mod:`kapi.k8sproto.wire` and renders each value as k8s.io/api's Go types
marshal to JSON (encoding/json plus the custom marshallers of apimachinery):

- ``string`` -> str (invalid UTF-8 replaced by U+FFFD as encoding/json
  does); ``bytes`` -> standard base64 with padding; int32/int64/bool -> JSON
  numbers and booleans.
- ``meta/v1.Time`` -> RFC 3339 UTC with seconds ("2006-01-02T15:04:05Z";
  its protobuf Unmarshal keeps seconds only); ``meta/v1.MicroTime`` -> RFC
  3339 with 6 fractional digits; an empty (zero) Time is ``null`` in Go and
  is left out here.
- ``meta/v1.Duration`` -> Go ``time.Duration.String()`` ("1h0m0s").
- ``resource.Quantity`` -> its string ("0" when unset, as Go prints a zero
  Quantity); ``intstr.IntOrString`` -> int or str.
- ``runtime.RawExtension`` and ``meta/v1.FieldsV1`` -> the parsed JSON of
  their raw bytes (left out when empty, Go's ``null``).
- list-wrapper messages (``"list": true`` in the table) -> a bare array.
- fields embedded with ``json:",inline"`` (mode ``"i"``) are merged into
  the enclosing object.

Zero values: Go's protobuf marshaller writes every non-pointer field, so an
unset field and its zero look alike on the wire; kube decodes into the Go
struct and serves encoding/json's rendering of it. The Go facts of each field
(``gofields.json`` via :mod:`kapi.k8sproto.gotypes`: pointer, omitempty)
decide the same here for a singular scalar's zero (``""``, ``0``, ``false``):
a non-pointer ``omitempty`` field's zero is left out (``hostNetwork``,
``minReadySeconds``, ``metadata.generation``), a pointer's is kept as sent
(``replicas: 0``, ``storageClassName: ""``) and so is a plain field's
(``token: ""``). A by-value IntOrString (ServicePort ``targetPort``,
HTTPGetAction and TCPSocketAction ``port``) is always on the wire and its
zero means "unset" to kube's defaulting, so it is left out; a pointer
IntOrString's zero is kept (``kubectl create pdb --min-available=0``,
``maxSurge: 0``). A field without Go facts (newer than the table) drops only
``""``. Nested messages present on the wire are kept even when empty: a
pointer to an empty struct is meaningful (``emptyDir: {}``) and Go's JSON
writes non-pointer structs (``"spec": {}``) too. Map values and list
elements are kept as they are (a label value may be "").
"""

from __future__ import annotations

import base64
import datetime
import functools
import json
import os
from collections.abc import Callable
from typing import Any

from kapi.k8sproto import gotypes, wire
from kapi.k8sproto.wire import I32, I64, LEN, VARINT, WireError

SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "schema.json")

META = "k8s.io.apimachinery.pkg.apis.meta.v1"
TIME = f"{META}.Time"
MICRO_TIME = f"{META}.MicroTime"
DURATION = f"{META}.Duration"
FIELDS_V1 = f"{META}.FieldsV1"
QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
RAW_EXTENSION = "k8s.io.apimachinery.pkg.runtime.RawExtension"

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_OMIT = object()  # a value Go renders as null/omitted: the key is left out


class DecodeError(ValueError):
    """Bytes that do not decode as the schema's message (wraps wire errors, bad JSON, bad times)."""


# ---------------------------------------------------------------------------------------------- scalars

def _string(buf: bytes, start: int, end: int) -> str:
    return buf[start:end].decode("utf-8", "replace")


def _bytes(buf: bytes, start: int, end: int) -> str:
    return base64.b64encode(buf[start:end]).decode("ascii")


# scalar type -> (wire type, converter of the raw unsigned value)
_NUMERIC: dict[str, tuple[int, Callable[[int], Any]]] = {
    "int32": (VARINT, wire.int32),
    "int64": (VARINT, wire.int64),
    "uint32": (VARINT, lambda v: v & 0xFFFFFFFF),
    "uint64": (VARINT, lambda v: v),
    "sint32": (VARINT, wire.zigzag),
    "sint64": (VARINT, wire.zigzag),
    "bool": (VARINT, lambda v: v != 0),
    "fixed32": (I32, lambda v: v),
    "sfixed32": (I32, lambda v: v - (1 << 32) if v >= 1 << 31 else v),
    "float": (I32, wire.float32),
    "fixed64": (I64, lambda v: v),
    "sfixed64": (I64, wire.int64),
    "double": (I64, wire.double),
}

_DEFAULTS: dict[str, Any] = {"string": "", "bytes": "", "bool": False}  # numbers default to 0


# ------------------------------------------------------------------------------------------ compiled schema

class Message:
    """A compiled message: ``fields`` maps number -> (json name, scalar type | Message, mode, map value type)."""

    __slots__ = ("name", "fields", "is_list", "special", "zero_drop", "zero_keep")

    def __init__(self, name: str) -> None:
        self.name = name
        self.fields: dict[int, tuple[str, str | Message, str, str | Message | None]] = {}
        self.is_list = False
        self.special: Callable[[bytes, int, int], Any] | None = None
        # singular fields whose zero ("", 0, false) Go's JSON leaves out (non-pointer omitempty scalars and
        # by-value IntOrStrings) / keeps (pointers, plain value fields); a field in neither (no Go facts) drops "" only
        self.zero_drop: frozenset[str] = frozenset()
        self.zero_keep: frozenset[str] = frozenset()

    def __repr__(self) -> str:
        return f"Message({self.name})"


class Schema:
    """The loaded schema table: compiled messages and the (group, version, kind) -> message index."""

    def __init__(self, table: dict[str, Any]) -> None:
        self.messages: dict[str, Message] = {name: Message(name) for name in table["messages"]}

        def ref(type_name: str) -> str | Message:
            if type_name in _NUMERIC or type_name in ("string", "bytes"):
                return type_name
            if type_name not in self.messages:
                raise ValueError(f"schema references unknown message {type_name}")
            return self.messages[type_name]

        for name, entry in table["messages"].items():
            msg = self.messages[name]
            msg.is_list = bool(entry.get("list"))
            for number, (json_name, ftype, mode) in entry["fields"].items():
                if mode == "m":
                    msg.fields[int(number)] = (json_name, ref(ftype[0]), mode, ref(ftype[1]))
                else:
                    msg.fields[int(number)] = (json_name, ref(ftype), mode, None)
        specials: dict[str, Callable[[bytes, int, int], Any]] = {
            TIME: self._time, MICRO_TIME: self._micro_time, DURATION: self._duration, QUANTITY: self._quantity,
            INT_OR_STRING: self._int_or_string, RAW_EXTENSION: self._raw_json, FIELDS_V1: self._raw_json,
        }
        for name, fn in specials.items():
            if name in self.messages:
                self.messages[name].special = fn
        go = table.get("gofields", {})
        for name, msg in self.messages.items():
            facts = go.get(name, {})
            drop: set[str] = set()
            keep: set[str] = set()
            for json_name, ftype, mode, _ in msg.fields.values():
                flags = facts.get(json_name, "?")
                if mode != "" or flags == "?" or (isinstance(ftype, Message) and ftype.name != INT_OR_STRING):
                    continue
                (drop if "p" not in flags and ("o" in flags or isinstance(ftype, Message)) else keep).add(json_name)
            msg.zero_drop, msg.zero_keep = frozenset(drop), frozenset(keep)
        self.kinds: dict[tuple[str, str, str], Message] = {
            (g, v, k): self.messages[m] for g, v, k, m in table["kinds"]}
        self.any_version_kinds: dict[str, Message] = {
            k: self.messages[m] for k, m in table.get("anyVersionKinds", {}).items()}

    def lookup(self, group: str, version: str, kind: str) -> Message | None:
        """The message for a kind, or None when the table has no such kind."""
        msg = self.kinds.get((group, version, kind))
        if msg is None and version:
            msg = self.any_version_kinds.get(kind)
        return msg

    # -------------------------------------------------------------------------------------- decoding

    def decode(self, msg: Message, buf: bytes, start: int, end: int) -> Any:
        """Decode ``buf[start:end]`` as ``msg``: a dict, a list (list wrappers), a scalar (specials) or _OMIT."""
        if msg.special is not None:
            return msg.special(buf, start, end)
        out: dict[str, Any] = {}
        fields = msg.fields
        for number, wire_type, value, stop in wire.fields(buf, start, end):
            spec = fields.get(number)
            if spec is None:
                continue  # unknown field: skipped, as Go's generated Unmarshal does
            name, ftype, mode, vtype = spec
            if mode == "r":
                items = out.get(name)
                if items is None:
                    items = out[name] = []
                if isinstance(ftype, Message):
                    if wire_type != LEN:
                        raise WireError(f"{msg.name}.{name}: wire type {wire_type} for a message")
                    item = self.decode(ftype, buf, value, stop)
                    items.append(None if item is _OMIT else item)
                elif ftype == "string":
                    if wire_type != LEN:
                        raise WireError(f"{msg.name}.{name}: wire type {wire_type} for a string")
                    items.append(_string(buf, value, stop))
                elif ftype == "bytes":
                    if wire_type != LEN:
                        raise WireError(f"{msg.name}.{name}: wire type {wire_type} for bytes")
                    items.append(_bytes(buf, value, stop))
                else:
                    want, conv = _NUMERIC[ftype]
                    if wire_type == LEN:  # packed
                        if want == VARINT:
                            items.extend(conv(v) for v in wire.packed_varints(buf, value, stop))
                        else:
                            items.extend(conv(v) for v in wire.packed_fixed(buf, value, stop,
                                                                           4 if want == I32 else 8))
                    elif wire_type == want:
                        items.append(conv(value))
                    else:
                        raise WireError(f"{msg.name}.{name}: wire type {wire_type} for {ftype}")
                continue
            if mode == "m":
                if wire_type != LEN:
                    raise WireError(f"{msg.name}.{name}: wire type {wire_type} for a map entry")
                entries = out.get(name)
                if entries is None:
                    entries = out[name] = {}
                key, item = self._map_entry(msg, name, ftype, vtype, buf, value, stop)  # type: ignore[arg-type]
                entries[str(key)] = item
                continue
            item = self._singular(msg, name, ftype, wire_type, value, buf, stop)
            if mode == "i":
                if isinstance(item, dict):
                    out.update(item)
                continue
            if item is _OMIT or ((item == "" or item == 0) and (
                    name in msg.zero_drop or (item == "" and name not in msg.zero_keep))):
                out.pop(name, None)
            else:
                out[name] = item
        if msg.is_list:
            items = out.get("items")
            return items if items else _OMIT
        return out

    def _singular(self, msg: Message, name: str, ftype: str | Message, wire_type: int, value: int,
                  buf: bytes, stop: int) -> Any:
        if isinstance(ftype, Message):
            if wire_type != LEN:
                raise WireError(f"{msg.name}.{name}: wire type {wire_type} for a message")
            return self.decode(ftype, buf, value, stop)
        if ftype == "string":
            if wire_type != LEN:
                raise WireError(f"{msg.name}.{name}: wire type {wire_type} for a string")
            return _string(buf, value, stop)
        if ftype == "bytes":
            if wire_type != LEN:
                raise WireError(f"{msg.name}.{name}: wire type {wire_type} for bytes")
            return _bytes(buf, value, stop)
        want, conv = _NUMERIC[ftype]
        if wire_type != want:
            raise WireError(f"{msg.name}.{name}: wire type {wire_type} for {ftype}")
        return conv(value)

    def _map_entry(self, msg: Message, name: str, ktype: str | Message, vtype: str | Message,
                   buf: bytes, start: int, end: int) -> tuple[Any, Any]:
        """One ``map<k, v>`` entry: a message with key = 1 and value = 2, either possibly absent."""
        key: Any = None
        item: Any = None
        for number, wire_type, value, stop in wire.fields(buf, start, end):
            if number == 1:
                key = self._singular(msg, name, ktype, wire_type, value, buf, stop)
            elif number == 2:
                item = self._singular(msg, name, vtype, wire_type, value, buf, stop)
        if key is None:
            key = _DEFAULTS.get(ktype, 0) if isinstance(ktype, str) else ""
        if item is None:
            item = (self.decode(vtype, buf, 0, 0) if isinstance(vtype, Message)
                    else _DEFAULTS.get(vtype, 0))
        if item is _OMIT:
            item = None
        return key, item

    # ------------------------------------------------------------------------------ special messages

    @staticmethod
    def _seconds_nanos(buf: bytes, start: int, end: int) -> tuple[int, int]:
        seconds = nanos = 0
        for number, wire_type, value, _stop in wire.fields(buf, start, end):
            if number == 1 and wire_type == VARINT:
                seconds = wire.int64(value)
            elif number == 2 and wire_type == VARINT:
                nanos = wire.int32(value)
            elif number in (1, 2):
                raise WireError(f"timestamp field {number}: wire type {wire_type}")
        return seconds, nanos

    @staticmethod
    def _utc(seconds: int) -> datetime.datetime:
        try:
            return _EPOCH + datetime.timedelta(seconds=seconds)
        except OverflowError:
            raise DecodeError(f"timestamp {seconds} out of range") from None

    def _time(self, buf: bytes, start: int, end: int) -> Any:
        """meta/v1.Time: empty -> zero time (Go null, omitted); else RFC 3339 seconds in UTC."""
        if start == end:
            return _OMIT
        seconds, _nanos = self._seconds_nanos(buf, start, end)
        t = self._utc(seconds)
        return f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}Z"

    def _micro_time(self, buf: bytes, start: int, end: int) -> Any:
        """meta/v1.MicroTime: RFC 3339 with microseconds ("2006-01-02T15:04:05.000000Z")."""
        if start == end:
            return _OMIT
        seconds, nanos = self._seconds_nanos(buf, start, end)
        seconds += nanos // 1_000_000_000
        t = self._utc(seconds)
        micros = (nanos % 1_000_000_000) // 1000
        return (f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}."
                f"{micros:06d}Z")

    @staticmethod
    def _duration(buf: bytes, start: int, end: int) -> str:
        nanos = 0
        for number, wire_type, value, _stop in wire.fields(buf, start, end):
            if number == 1:
                if wire_type != VARINT:
                    raise WireError(f"duration: wire type {wire_type}")
                nanos = wire.int64(value)
        return go_duration(nanos)

    @staticmethod
    def _quantity(buf: bytes, start: int, end: int) -> str:
        text = "0"
        for number, wire_type, value, stop in wire.fields(buf, start, end):
            if number == 1:
                if wire_type != LEN:
                    raise WireError(f"quantity: wire type {wire_type}")
                text = _string(buf, value, stop)
        return text

    @staticmethod
    def _int_or_string(buf: bytes, start: int, end: int) -> Any:
        kind = int_val = 0
        str_val = ""
        for number, wire_type, value, stop in wire.fields(buf, start, end):
            if number == 1 and wire_type == VARINT:
                kind = wire.int64(value)
            elif number == 2 and wire_type == VARINT:
                int_val = wire.int32(value)
            elif number == 3 and wire_type == LEN:
                str_val = _string(buf, value, stop)
            elif number in (1, 2, 3):
                raise WireError(f"IntOrString field {number}: wire type {wire_type}")
        return str_val if kind == 1 else int_val

    @staticmethod
    def _raw_json(buf: bytes, start: int, end: int) -> Any:
        """RawExtension / FieldsV1: field 1 holds JSON bytes; empty -> Go null (omitted)."""
        raw = b""
        for number, wire_type, value, stop in wire.fields(buf, start, end):
            if number == 1:
                if wire_type != LEN:
                    raise WireError(f"raw field: wire type {wire_type}")
                raw = bytes(buf[value:stop])
        if not raw:
            return _OMIT
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise DecodeError(f"embedded raw JSON: {exc}") from None


def _frac(value: int, prec: int) -> str:
    whole, frac = divmod(value, 10**prec)
    digits = f"{frac:0{prec}d}".rstrip("0")
    return f"{whole}.{digits}" if digits else str(whole)


def go_duration(nanos: int) -> str:
    """Go's ``time.Duration(nanos).String()``: "0s", "1.5s", "1m30s", "1h0m0s", "250ms", "2µs", "7ns"."""
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    u = abs(nanos)
    if u < 1_000_000_000:
        if u < 1_000:
            return f"{sign}{u}ns"
        if u < 1_000_000:
            return f"{sign}{_frac(u, 3)}µs"
        return f"{sign}{_frac(u, 6)}ms"
    seconds = u // 1_000_000_000
    out = f"{seconds % 60}" + _frac(u % 1_000_000_000, 9)[1:] + "s"
    minutes = seconds // 60
    if minutes:
        out = f"{minutes % 60}m{out}"
        hours = minutes // 60
        if hours:
            out = f"{hours}h{out}"
    return sign + out


@functools.cache
def schema() -> Schema:
    """The schema table shipped with the package, loaded and compiled once."""
    with open(SCHEMA_PATH, encoding="utf-8") as fh:
        table = json.load(fh)
    table["gofields"] = gotypes.table()
    return Schema(table)
