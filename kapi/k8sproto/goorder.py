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
protobuf table lacks have their Go struct order in :data:`_GO_STRUCTS` (apiextensions.k8s.io/v1
CustomResourceDefinition, autoscaling/v1 Scale); other kinds outside both tables keep the order they came in.
The gateway answers the objects it composes itself (the review kinds, TokenRequest) in this order too
(``RequestScope.respond(..., composed=True)``).
Sources: Go ``encoding/json`` (struct fields in order, map keys sorted), apimachinery
``unstructured.UnstructuredJSONScheme``.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from kapi.k8sproto import decoder, gotypes
from kapi.resources import REGISTRY

_LEAF, _STRUCT, _REPEATED, _MAP, _SORTED_MAP, _EITHER = range(6)
_RAW = frozenset({decoder.RAW_EXTENSION, decoder.FIELDS_V1})

#: ObjectMeta fields Go writes before ``resourceVersion`` (storage never stores it; reads set it back here).
BEFORE_RESOURCE_VERSION = frozenset({"name", "generateName", "namespace", "selfLink", "uid"})

# a plan step: (json name, how, the full name of the member's message for _STRUCT/_REPEATED/_MAP/_EITHER values)
Plan = tuple[tuple[str, int, "str | None"], ...]

_OBJECT_META = "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_X = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1."
_PROPS = _X + "JSONSchemaProps"


def _go(*steps: str | tuple[str, int, str]) -> Plan:
    """A plan from field names (values written as they are) and (name, how, member message) steps."""
    return tuple((step, _LEAF, None) if isinstance(step, str) else step for step in steps)


#: Go struct order of the built-in types the protobuf table (schema.json) lacks, as encoding/json writes them:
#: {message full name: plan} (a kind's TypeMeta, kind and apiVersion, is written first by :func:`wire_order`).
#: Sources: apiextensions-apiserver pkg/apis/apiextensions/v1 types.go and types_jsonschema.go (JSON, a raw
#: value, is written as received; JSONSchemaPropsOrArray / OrBool / OrStringArray marshal as the schema, a list
#: of schemas, a bool or a list of strings: _EITHER walks the dict or the list's dicts, _STRUCT a dict and leaves
#: a bool, _SORTED_MAP a dict value and leaves a list); k8s.io/api autoscaling/v1 types.go (Scale).
_GO_STRUCTS: dict[str, Plan] = {
    _X + "CustomResourceDefinition": _go(("metadata", _STRUCT, _OBJECT_META),
                                         ("spec", _STRUCT, _X + "CustomResourceDefinitionSpec"),
                                         ("status", _STRUCT, _X + "CustomResourceDefinitionStatus")),
    _X + "CustomResourceDefinitionSpec": _go(
        "group", ("names", _STRUCT, _X + "CustomResourceDefinitionNames"), "scope",
        ("versions", _REPEATED, _X + "CustomResourceDefinitionVersion"),
        ("conversion", _STRUCT, _X + "CustomResourceConversion"), "preserveUnknownFields"),
    _X + "CustomResourceConversion": _go("strategy", ("webhook", _STRUCT, _X + "WebhookConversion")),
    _X + "WebhookConversion": _go(("clientConfig", _STRUCT, _X + "WebhookClientConfig"), "conversionReviewVersions"),
    _X + "WebhookClientConfig": _go("url", ("service", _STRUCT, _X + "ServiceReference"), "caBundle"),
    _X + "ServiceReference": _go("namespace", "name", "path", "port"),
    _X + "CustomResourceDefinitionVersion": _go(
        "name", "served", "storage", "deprecated", "deprecationWarning",
        ("schema", _STRUCT, _X + "CustomResourceValidation"),
        ("subresources", _STRUCT, _X + "CustomResourceSubresources"),
        ("additionalPrinterColumns", _REPEATED, _X + "CustomResourceColumnDefinition"),
        ("selectableFields", _REPEATED, _X + "SelectableField")),
    _X + "SelectableField": _go("jsonPath"),
    _X + "CustomResourceColumnDefinition": _go("name", "type", "format", "description", "priority", "jsonPath"),
    _X + "CustomResourceDefinitionNames": _go("plural", "singular", "shortNames", "kind", "listKind", "categories"),
    _X + "CustomResourceDefinitionCondition": _go("type", "status", "lastTransitionTime", "reason", "message",
                                                  "observedGeneration"),
    _X + "CustomResourceDefinitionStatus": _go(
        ("conditions", _REPEATED, _X + "CustomResourceDefinitionCondition"),
        ("acceptedNames", _STRUCT, _X + "CustomResourceDefinitionNames"), "storedVersions", "observedGeneration"),
    _X + "CustomResourceValidation": _go(("openAPIV3Schema", _STRUCT, _PROPS)),
    _X + "CustomResourceSubresources": _go("status", ("scale", _STRUCT, _X + "CustomResourceSubresourceScale")),
    _X + "CustomResourceSubresourceScale": _go("specReplicasPath", "statusReplicasPath", "labelSelectorPath"),
    _PROPS: _go(
        "id", "$schema", "$ref", "description", "type", "format", "title", "default", "maximum", "exclusiveMaximum",
        "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems",
        "multipleOf", "enum", "maxProperties", "minProperties", "required", ("items", _EITHER, _PROPS),
        ("allOf", _REPEATED, _PROPS), ("oneOf", _REPEATED, _PROPS), ("anyOf", _REPEATED, _PROPS),
        ("not", _STRUCT, _PROPS), ("properties", _SORTED_MAP, _PROPS), ("additionalProperties", _STRUCT, _PROPS),
        ("patternProperties", _SORTED_MAP, _PROPS), ("dependencies", _SORTED_MAP, _PROPS),
        ("additionalItems", _STRUCT, _PROPS), ("definitions", _SORTED_MAP, _PROPS),
        ("externalDocs", _STRUCT, _X + "ExternalDocumentation"), "example", "nullable",
        "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string",
        "x-kubernetes-list-map-keys", "x-kubernetes-list-type", "x-kubernetes-map-type",
        ("x-kubernetes-validations", _REPEATED, _X + "ValidationRule")),
    _X + "ValidationRule": _go("rule", "message", "messageExpression", "reason", "fieldPath", "optionalOldSelf"),
    _X + "ExternalDocumentation": _go("description", "url"),
    "k8s.io.api.autoscaling.v1.Scale": _go(("metadata", _STRUCT, _OBJECT_META),
                                           ("spec", _STRUCT, "k8s.io.api.autoscaling.v1.ScaleSpec"),
                                           ("status", _STRUCT, "k8s.io.api.autoscaling.v1.ScaleStatus")),
    "k8s.io.api.autoscaling.v1.ScaleSpec": _go("replicas"),
    "k8s.io.api.autoscaling.v1.ScaleStatus": _go("replicas", "selector"),
}

#: The kinds of :data:`_GO_STRUCTS`: {(group, version, kind): message full name}.
_GO_KINDS = {("apiextensions.k8s.io", "v1", "CustomResourceDefinition"): _X + "CustomResourceDefinition",
             ("autoscaling", "v1", "Scale"): "k8s.io.api.autoscaling.v1.Scale"}


@functools.cache
def _go_order() -> dict[str, list[str]]:
    with open(gotypes.GOFIELDS_PATH, encoding="utf-8") as fh:
        order: dict[str, list[str]] = json.load(fh).get("order", {})
    return order


@functools.cache
def _plan(name: str) -> Plan:
    """The steps that write one message's fields in Go order, inline members spliced in where they stand."""
    explicit = _GO_STRUCTS.get(name)
    if explicit is not None:
        return explicit
    msg = decoder.schema().messages[name]
    by_name = {f[0]: f for f in msg.fields.values()}
    names = [n for n in _go_order().get(name, ()) if n in by_name]
    names += [f[0] for _, f in sorted(msg.fields.items()) if f[0] not in names]  # newer than the Go table
    steps: list[tuple[str, int, str | None]] = []
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


def _walkable(ftype: Any) -> str | None:
    """The name of ``ftype`` when it is a struct to walk into (not a special such as Time or RawExtension, nor a
    list wrapper), else None."""
    if isinstance(ftype, decoder.Message) and ftype.special is None and not ftype.is_list:
        return ftype.name
    return None


@functools.cache
def _kind_messages() -> frozenset[str]:
    """The messages that are kinds: their Go structs embed TypeMeta, so a nested one (a StatefulSet's
    PersistentVolumeClaim templates) writes ``kind`` and ``apiVersion`` first too."""
    return frozenset(m.name for m in decoder.schema().kinds.values())


def _struct(value: dict[str, Any], name: str, head: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if not head and name in _kind_messages():
        head = ("kind", "apiVersion")
    for key in head:
        if key in value:
            out[key] = value[key]
    for key, how, sub in _plan(name):
        if key not in value:
            continue
        v = value[key]
        if how == _SORTED_MAP and isinstance(v, dict):
            v = {k: (_struct(v[k], sub) if sub is not None and isinstance(v[k], dict) else v[k]) for k in sorted(v)}
        elif sub is None:
            pass
        elif isinstance(v, dict) and how in (_STRUCT, _EITHER):  # _EITHER: JSONSchemaPropsOrArray's schema
            v = _struct(v, sub)
        elif isinstance(v, list) and how in (_REPEATED, _EITHER):  # or its list of schemas
            v = [_struct(i, sub) if isinstance(i, dict) else i for i in v]
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


def _message(obj: dict[str, Any]) -> str | None:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    group, _, version = api_version.rpartition("/")
    message = decoder.schema().kinds.get((group, version, kind))
    if message is not None:
        return message.name
    return _GO_KINDS.get((group, version, kind))


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
    for built-in kinds of the protobuf table and of :data:`_GO_STRUCTS`, sorted at every level for custom
    resources, as it is otherwise.
    Returns a new dict (or ``obj`` itself when nothing applies); values that need no reordering are shared."""
    message = _message(obj)
    if message is not None:
        return _struct(obj, message, ("kind", "apiVersion"))
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
