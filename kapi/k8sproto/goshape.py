"""An object as the Go struct of its kind holds it: what kube's field manager compares.

kube's field manager turns the decoded Go object (and, on create, a new zero
one of the kind) into structured-merge-diff values by reflection, and those
carry what the struct always has: a non-pointer struct field is there even
when empty (``spec``, ``strategy``, a container's ``resources``), a slice or
map without ``omitempty`` is there as ``null`` (``containers``), a scalar
without ``omitempty`` is there as its zero. Comparing two such values, only
nodes that appear (a pointer struct such as ``rollingUpdate``, an
``omitempty`` map such as ``labels`` or list such as ``ports``, anything in a
new list item) are added and become members of the writer's set, shown with
``"."`` in FieldsV1; nodes present in both (``f:spec``, ``f:template``,
``f:containers``) are not.

:func:`shaped` gives that form of a built-in object, from the protobuf
schema (which messages and fields a kind has) and the Go facts of
:mod:`kapi.k8sproto.gotypes` (pointer, omitempty, inline). Sources:
sigs.k8s.io/structured-merge-diff ``value/reflectcache.go`` (omitempty),
``typed/compare.go`` (Added/Modified), k8s.io/apiserver
``fieldmanager/internal/structuredmerge.go`` (Update compares with a new
zero object of the kind on create).
"""

from __future__ import annotations

import functools
from typing import Any

from kapi.k8sproto import decoder, gotypes

# the JSON a zero Go value of each special message marshals to (apimachinery's MarshalJSON)
_SPECIAL_ZERO: dict[str, Any] = {
    decoder.TIME: None, decoder.MICRO_TIME: None, decoder.QUANTITY: "0", decoder.INT_OR_STRING: 0,
    decoder.DURATION: "0s", decoder.RAW_EXTENSION: None, decoder.FIELDS_V1: None,
}
_SCALAR_ZERO: dict[str, Any] = {"string": "", "bytes": None, "bool": False}


def message_for(obj: dict[str, Any]) -> decoder.Message | None:
    """The protobuf message of ``obj``'s ``apiVersion``/``kind``; None for kinds the schema table lacks
    (custom resources, autoscaling/v1 Scale)."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    group, _, version = api_version.rpartition("/")
    return decoder.schema().lookup(group, version, kind)


def shaped(obj: dict[str, Any], message: decoder.Message) -> dict[str, Any]:
    """``obj`` (a JSON object of ``message``) with every field the Go struct always holds filled in: non-pointer
    structs as ``{}`` (recursively), slices and maps without omitempty as None, scalars without omitempty as their
    zero, specials as their zero's JSON (Time None, Quantity "0", IntOrString 0, ...). Fields present are kept;
    fields without Go facts are left alone. ``obj`` is not modified; the result's dicts and lists are new, its
    other values are ``obj``'s (read it, do not modify it)."""
    out = dict(obj)
    facts = gotypes.table().get(message.name, {})
    for name, ftype, mode, vtype in message.fields.values():
        flags = facts.get(name, "?")
        if flags == "?":
            continue
        if mode == "i":
            if isinstance(ftype, decoder.Message):
                out = shaped(out, ftype)
            continue
        value = out.get(name, _ABSENT)
        if mode in ("r", "m"):
            if value is _ABSENT:
                if "o" not in flags and "p" not in flags:
                    out[name] = None
                continue
            item_type = ftype if mode == "r" else vtype
            if isinstance(item_type, decoder.Message) and item_type.special is None and not item_type.is_list:
                if mode == "r" and isinstance(value, list):
                    out[name] = [shaped(i, item_type) if isinstance(i, dict) else i for i in value]
                elif mode == "m" and isinstance(value, dict):
                    out[name] = {k: shaped(v, item_type) if isinstance(v, dict) else v for k, v in value.items()}
            continue
        if isinstance(ftype, decoder.Message):
            if ftype.special is not None or ftype.is_list:
                if value is _ABSENT and "p" not in flags and ftype.name in _SPECIAL_ZERO:
                    out[name] = _SPECIAL_ZERO[ftype.name]
                continue
            if value is _ABSENT:
                if "p" not in flags:
                    out[name] = zero(ftype)
            elif isinstance(value, dict):
                out[name] = shaped(value, ftype)
            continue
        if value is _ABSENT and "o" not in flags and "p" not in flags:
            out[name] = _SCALAR_ZERO.get(ftype, 0)
    return out


@functools.cache
def _zero(name: str) -> dict[str, Any]:
    return shaped({}, decoder.schema().messages[name])


def zero(message: decoder.Message) -> dict[str, Any]:
    """The zero Go value of ``message`` as :func:`shaped` gives it; shared (cached): read it, do not modify it."""
    return _zero(message.name)


_ABSENT = object()
