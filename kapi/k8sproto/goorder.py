"""The key order of kube-apiserver's JSON: Go struct order for built-in kinds, sorted keys for custom resources.

kube-apiserver decodes every object and encodes it again with encoding/json, so the order of a JSON
answer's keys is never the client's:

- a built-in kind is a Go struct: ``kind``, ``apiVersion`` (the inline TypeMeta), then each field in the
  struct's declaration order (``metadata``: name, generateName, namespace, selfLink, uid, resourceVersion,
  generation, creationTimestamp, ...; an inline member's fields where the member stands); a Go map
  (labels, annotations, a ResourceList, nodeSelector) is written with its keys sorted;
- a custom resource is ``unstructured.Unstructured``, a ``map[string]interface{}``: every object at every
  level has its keys sorted (``apiVersion``, ``kind``, ``metadata``, ``spec``, ...);
- raw JSON members (``runtime.RawExtension``, ``FieldsV1``) are written as they were received.

:func:`wire_order` gives that order; storage applies it to every object it writes
(:mod:`services.storage.objects`), so what is stored, listed, watched and answered is in it. The Go field
order is ``gofields.json``'s ``order`` table (scripts/gen_gofields.py, read from the pinned kubectl's Go type
descriptors); fields newer than that binary follow in protobuf field-number order. Built-in kinds the
protobuf table lacks (CustomResourceDefinition, APIService) keep the order they were written in.
Sources: Go ``encoding/json`` (struct fields in order, map keys sorted), apimachinery
``unstructured.UnstructuredJSONScheme``.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from kapi.k8sproto import decoder, gotypes
from kapi.resources import REGISTRY

_LEAF, _STRUCT, _REPEATED, _MAP, _SORTED_MAP = range(5)
_RAW = frozenset({decoder.RAW_EXTENSION, decoder.FIELDS_V1})

#: ObjectMeta fields Go writes before ``resourceVersion`` (storage never stores it; reads set it back here).
BEFORE_RESOURCE_VERSION = frozenset({"name", "generateName", "namespace", "selfLink", "uid"})

# a plan step: (json name, how, the member's message for _STRUCT/_REPEATED/_MAP values)
Plan = tuple[tuple[str, int, "decoder.Message | None"], ...]


@functools.cache
def _go_order() -> dict[str, list[str]]:
    with open(gotypes.GOFIELDS_PATH, encoding="utf-8") as fh:
        order: dict[str, list[str]] = json.load(fh).get("order", {})
    return order


@functools.cache
def _plan(name: str) -> Plan:
    """The steps that write one message's fields in Go order, inline members spliced in where they stand."""
    msg = decoder.schema().messages[name]
    by_name = {f[0]: f for f in msg.fields.values()}
    names = [n for n in _go_order().get(name, ()) if n in by_name]
    names += [f[0] for _, f in sorted(msg.fields.items()) if f[0] not in names]  # newer than the Go table
    steps: list[tuple[str, int, decoder.Message | None]] = []
    for field_name in names:
        _, ftype, mode, vtype = by_name[field_name]
        if mode == "i" and isinstance(ftype, decoder.Message):
            steps.extend(_plan(ftype.name))
        elif mode == "m":
            steps.append((field_name, _SORTED_MAP, _walkable(vtype)))
        elif mode == "r":
            sub = _walkable(ftype)
            steps.append((field_name, _LEAF if sub is None else _REPEATED, sub))
        else:
            sub = _walkable(ftype)
            steps.append((field_name, _LEAF if sub is None else _STRUCT, sub))
    return tuple(steps)


def _walkable(ftype: Any) -> decoder.Message | None:
    """``ftype`` when it is a struct to walk into (not a special such as Time or RawExtension, nor a list
    wrapper), else None."""
    if isinstance(ftype, decoder.Message) and ftype.special is None and not ftype.is_list:
        return ftype
    return None


def _struct(value: dict[str, Any], name: str, head: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in head:
        if key in value:
            out[key] = value[key]
    for key, how, sub in _plan(name):
        if key not in value:
            continue
        v = value[key]
        if how == _STRUCT and isinstance(v, dict):
            assert sub is not None
            v = _struct(v, sub.name)
        elif how == _REPEATED and isinstance(v, list):
            assert sub is not None
            v = [_struct(i, sub.name) if isinstance(i, dict) else i for i in v]
        elif how == _SORTED_MAP and isinstance(v, dict):
            v = {k: (_struct(v[k], sub.name) if sub is not None and isinstance(v[k], dict) else v[k])
                 for k in sorted(v)}
        out[key] = v
    if len(out) != len(value):  # fields the Go type does not have (kapi prunes them first): after, as they came
        for key, v in value.items():
            out.setdefault(key, v)
    return out


def sorted_deep(value: Any) -> Any:
    """``value`` with every object's keys sorted, at every level (Go's encoding of ``map[string]interface{}``)."""
    if isinstance(value, dict):
        return {k: sorted_deep(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [sorted_deep(i) for i in value]
    return value


def _message(obj: dict[str, Any]) -> decoder.Message | None:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    group, _, version = api_version.rpartition("/")
    return decoder.schema().kinds.get((group, version, kind))


def is_unstructured(obj: dict[str, Any]) -> bool:
    """True when kube holds ``obj`` as unstructured (a custom resource: its apiVersion/kind is not a built-in
    kind of :data:`kapi.resources.REGISTRY`'s static table)."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return False
    group, _, version = api_version.rpartition("/")
    row = REGISTRY.by_kind(group, version, kind)
    return row is None or not REGISTRY.is_static(row)


def wire_order(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` (a whole object, with apiVersion and kind) with its keys in kube's encoding order: Go struct order
    for built-in kinds of the protobuf table, sorted at every level for custom resources, as it is otherwise.
    Returns a new dict (or ``obj`` itself when nothing applies); values that need no reordering are shared."""
    message = _message(obj)
    if message is not None:
        return _struct(obj, message.name, ("kind", "apiVersion"))
    if is_unstructured(obj):
        result: dict[str, Any] = sorted_deep(obj)
        return result
    return obj


def with_resource_version(meta: dict[str, Any], resource_version: str, unstructured: bool) -> dict[str, Any]:
    """A copy of ``meta`` (ObjectMeta JSON without resourceVersion, in :func:`wire_order`) with
    ``resourceVersion`` where kube writes it: sorted among the keys for a custom resource, else after name,
    generateName, namespace, selfLink and uid (Go's ObjectMeta order)."""
    out: dict[str, Any] = {}
    placed = False
    for key, value in meta.items():
        if not placed and (key > "resourceVersion" if unstructured else key not in BEFORE_RESOURCE_VERSION):
            out["resourceVersion"] = resource_version
            placed = True
        if key != "resourceVersion":
            out[key] = value
    if not placed:
        out["resourceVersion"] = resource_version
    return out
