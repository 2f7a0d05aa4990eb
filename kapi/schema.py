"""Schema validation of built-in kinds against the strict JSON schemas of kube 1.37.

kube-apiserver decodes a request body into the kind's Go struct: a value of
the wrong type fails, and a field the struct does not have is an *unknown
field*, handled by the ``fieldValidation`` parameter (KEP-2885 "Server Side
Unknown Field Validation"): ``Strict`` -> 400 BadRequest
``strict decoding error: unknown field "spec.foo"``, ``Warn`` (the default)
-> a warning ``unknown field "spec.foo"``, ``Ignore`` -> silence. In every
mode the unknown field is dropped, since a Go struct cannot hold it.

We stand the Go structs in with the strict JSON schemas shipped by the
``kubernetes-validate`` wheel (``additionalProperties: false`` everywhere):
one ``jsonschema`` Draft 2020-12 validator per (group, version, kind),
compiled lazily and cached, sharing one ``referencing`` registry built from
``_definitions.json``. Most bodies are valid, so each is first checked by a
compiled ``jsonschema-rs`` validator of the same schema (a yes/no answer: ~1 us
for a ConfigMap, ~4 us for a Pod, against ~160 and ~470 us for the Python walk);
only a body it rejects (or cannot read) is walked by ``jsonschema`` to name
its errors, so every message stays the one below.

Type errors, enum violations and missing required fields become
:class:`kapi.errors.Cause` objects shaped like kube's field errors
(``spec.containers[0].image: Invalid value: "integer": ... must be of type
string``) for a 422 Invalid; unknown fields are returned separately.

Values a Go struct cannot hold are decoding errors (400, see
:func:`decode_error`), found through the schemas' ``format`` and the
Quantity definition: ``format: byte`` strings must be standard base64
(Go's ``illegal base64 data at input byte N``), ``format: int32``/``int64``
numbers must be integral and in range (``json: cannot unmarshal number 1e+20
into Go struct field DeploymentSpec.spec.replicas of type int32``), and
``resource.Quantity`` strings must parse (apimachinery ``ParseQuantity``).
"""

from __future__ import annotations

import binascii
import functools
import os
import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import jsonschema_rs
import kubernetes_validate
from referencing import Registry
from referencing import Resource as SchemaResource

from kapi import errors, gofmt, jsonutil
from kapi.errors import Cause

SCHEMA_VERSION = "v1.37.0-local-strict"
SCHEMA_DIR = os.path.join(os.path.dirname(kubernetes_validate.__file__), "kubernetes-json-schema", SCHEMA_VERSION)

# fieldValidation values (metav1.FieldValidationIgnore/Warn/Strict).
IGNORE, WARN, STRICT = "Ignore", "Warn", "Strict"
FIELD_VALIDATION_VALUES = (IGNORE, STRICT, WARN)

_JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer", float: "number",
               type(None): "null"}


@dataclass
class Result:
    """The outcome of :func:`validate`.

    ``causes``: 422 Invalid field causes (type, enum, required).
    ``unknown``: JSON paths of unknown fields, e.g. ``spec.foo``, in document
    order; they have already been removed from the object.
    """

    causes: list[Cause] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


def schema_file(group: str, version: str, kind: str) -> str:
    """Path of the schema of one kind: ``<kind>-<version>.json`` (core) or ``<kind>-<group prefix>-<version>.json``.

    The group prefix is the group's first dot-separated label
    (``rbac.authorization.k8s.io`` -> ``rbac``), as kubernetes-validate names them.
    """
    name = kind.lower()
    if group:
        name += "-" + group.split(".", 1)[0]
    return os.path.join(SCHEMA_DIR, f"{name}-{version}.json")


_lock = threading.Lock()
# Keywords that never fail a validation here: dropping them from the loaded schemas saves ~30% of the
# per-keyword walk (format is not checked: kube's decoder accepts any string for int-or-string, byte...).
_INERT = frozenset({"description", "format"})
# Decodability checks kept from the schemas as the custom keyword FORMAT_KEYWORD: [format, Go struct name].
FORMAT_KEYWORD = "kapiFormat"
_DECODED_FORMATS = frozenset({"byte", "int32", "int64"})
QUANTITY_DEF = "io.k8s.apimachinery.pkg.api.resource.Quantity"
RAW_EXTENSION_DEF = "io.k8s.apimachinery.pkg.runtime.RawExtension"
_MAPS_OF_SCHEMAS = frozenset({"properties", "patternProperties", "$defs", "definitions"})
_VALUES = frozenset({"enum", "const", "default", "examples"})  # instance values, not schemas


def _lean(node: Any, struct: str = "") -> Any:
    """A copy of a schema without annotation-only keywords; property names themselves are kept.

    ``format: byte|int32|int64`` becomes ``kapiFormat: [format, struct]``
    (``struct``: the Go struct name of the enclosing definition).
    """
    if isinstance(node, list):
        return [_lean(v, struct) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "format" and value in _DECODED_FORMATS:
            out[FORMAT_KEYWORD] = [value, struct]
            continue
        if key in _INERT or key.startswith("x-kubernetes-"):
            if key != "x-kubernetes-group-version-kind":
                continue
        if key in _VALUES:
            out[key] = value
        elif key in ("$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: _lean(sub, name.rsplit(".", 1)[-1]) for name, sub in value.items()}
        elif key in _MAPS_OF_SCHEMAS and isinstance(value, dict):
            out[key] = {name: _lean(sub, struct) for name, sub in value.items()}
        else:
            out[key] = _lean(value, struct)
    return out


# ------------------------------------------------------------ decodability (kube's decoder, 400)

_B64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def base64_error(text: str) -> str | None:
    """Go's ``base64.StdEncoding`` verdict: None if ``text`` decodes, else ``illegal base64 data at input byte N``.

    Follows encoding/base64 ``decodeQuantum``: padding is required, ``\\r``
    and ``\\n`` are skipped, N is the byte offset Go reports.
    """
    src = text.encode()
    try:  # the common case: canonical base64
        binascii.a2b_base64(src, strict_mode=True)
        return None
    except (binascii.Error, ValueError):
        pass
    si, n = 0, len(src)
    while True:
        j = 0
        while j < 4:
            if si == n:
                if j == 0:
                    return None
                return f"illegal base64 data at input byte {si - j}"
            c = src[si]
            si += 1
            if c in _B64:
                j += 1
                continue
            if c in (10, 13):
                continue
            if c != 61:  # '='
                return f"illegal base64 data at input byte {si - 1}"
            if j in (0, 1):
                return f"illegal base64 data at input byte {si - 1}"
            if j == 2:
                while si < n and src[si] in (10, 13):
                    si += 1
                if si == n:
                    return f"illegal base64 data at input byte {n}"
                if src[si] != 61:
                    return f"illegal base64 data at input byte {si - 1}"
                si += 1
            while si < n and src[si] in (10, 13):
                si += 1
            if si < n:
                return f"illegal base64 data at input byte {si}"
            return None


QUANTITY_FORMAT_ERROR = ("quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
QUANTITY_NUMERIC_ERROR = "unable to parse numeric part of quantity"
QUANTITY_SUFFIX_ERROR = "unable to parse quantity's suffix"
_QUANTITY = re.compile(r"[+-]?([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*)([-+]?[0-9]*)")
_SUFFIXES = frozenset({"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E"})


def quantity_error(text: str) -> str | None:
    """apimachinery ``resource.ParseQuantity`` on ``text`` (trimmed as ``UnmarshalJSON`` does): None or its error."""
    text = text.strip()
    m = _QUANTITY.fullmatch(text) if text else None
    if m is None:
        return QUANTITY_FORMAT_ERROR
    whole, frac, letters, exponent = m.groups()
    suffix = letters + exponent
    if suffix not in _SUFFIXES and not (
            letters in ("e", "E") and re.fullmatch(r"[-+]?[0-9]{1,9}", exponent)):
        return QUANTITY_SUFFIX_ERROR
    if not whole and not frac:
        return QUANTITY_NUMERIC_ERROR
    return None


_INT_RANGES = {"int32": 2 ** 31, "int64": 2 ** 63}


def _format_keyword(validator: Any, value: Any, instance: Any, schema: Any) -> Iterable[jsonschema.ValidationError]:
    """The FORMAT_KEYWORD check: yields one error whose message is the decoder's (Go) text."""
    fmt, struct = (value + ["", ""])[:2] if isinstance(value, list) else (value, "")
    if fmt == "byte" and isinstance(instance, str):
        message = base64_error(instance)
    elif fmt == "quantity" and isinstance(instance, str):
        message = quantity_error(instance)
    elif fmt in _INT_RANGES and isinstance(instance, (int, float)) and not isinstance(instance, bool):
        limit = _INT_RANGES[fmt]
        if isinstance(instance, int) and -limit <= instance < limit:
            return
        # Go's json reports the number literal, the innermost struct and the field path: see decode_error.
        message = f"json: cannot unmarshal number {instance} into Go struct field {struct}.{{path}} of type {fmt}"
    else:
        return
    if message:
        yield jsonschema.ValidationError(message)


@functools.cache
def _definitions() -> dict[str, Any]:
    """The lean ``_definitions.json`` (``{"$defs": {name: schema}}``), loaded once."""
    with open(os.path.join(SCHEMA_DIR, "_definitions.json"), "rb") as f:
        definitions: dict[str, Any] = _lean(jsonutil.loads(f.read()))
    quantity = definitions.get("$defs", {}).get(QUANTITY_DEF)
    if isinstance(quantity, dict):
        quantity[FORMAT_KEYWORD] = ["quantity", "Quantity"]
    raw = definitions.get("$defs", {}).get(RAW_EXTENSION_DEF)
    if isinstance(raw, dict):  # runtime.RawExtension.UnmarshalJSON keeps the bytes of any JSON value: no type
        raw.pop("type", None)  # to decode against (a ControllerRevision's data may be a string; kinds check theirs)
    return definitions


@functools.cache
def _registry() -> Registry:
    return SchemaResource.from_contents(_definitions()) @ Registry()


# ------------------------------------------------------------ null as Go's decoder reads it

def _resolve(node: Any) -> dict[str, Any]:
    """``node`` with its ``$ref`` chain followed into the definitions ({} when it is not a schema object)."""
    defs = _definitions().get("$defs", {})
    for _ in range(32):
        if not isinstance(node, dict):
            return {}
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return node
        node = defs.get(ref.rsplit("/", 1)[-1])
    return {}


_NO_ZERO = object()


def _zero_of(node: Any) -> Any:
    """The JSON encoding of the Go zero value of a map value or list element of schema ``node``.

    A struct is ``{}``, a string ``""``, a number 0, a bool false, a Quantity ``"0"`` and an
    IntOrString 0; a slice or map element (nil, encoded ``null``) and untyped values have no other
    encoding (:data:`_NO_ZERO`: the null is kept).
    """
    ref = node.get("$ref") if isinstance(node, dict) else None
    if isinstance(ref, str) and ref.endswith("/" + QUANTITY_DEF):
        return "0"
    node = _resolve(node)
    types = node.get("type")
    types = [types] if isinstance(types, str) else list(types or ())
    if "object" in types and ("properties" in node or not node.get("additionalProperties")):
        return {} if "properties" in node else _NO_ZERO
    if "integer" in types or "number" in types:
        return 0
    if "string" in types:
        return ""
    if "boolean" in types:
        return False
    return _NO_ZERO


_TIMES = ("io.k8s.apimachinery.pkg.apis.meta.v1.Time", "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime")

# The time fields k8s.io/api declares as pointers (``*metav1.Time``, ``*metav1.MicroTime``, ``omitempty``): a
# ``null`` there decodes to nil and is not encoded at all. The OpenAPI schema names them as any other time, so
# they are listed here by (the owning definition's type name, the property), for every version of it.
_POINTER_TIMES = frozenset({
    ("ObjectMeta", "deletionTimestamp"), ("ManagedFieldsEntry", "time"),
    ("PodStatus", "startTime"), ("PersistentVolumeStatus", "lastPhaseTransitionTime"), ("Taint", "timeAdded"),
    ("JobStatus", "startTime"), ("JobStatus", "completionTime"),
    ("CronJobStatus", "lastScheduleTime"), ("CronJobStatus", "lastSuccessfulTime"),
    ("HorizontalPodAutoscalerStatus", "lastScaleTime"),
    ("LeaseSpec", "acquireTime"), ("LeaseSpec", "renewTime"),
    ("LeaseCandidateSpec", "pingTime"), ("LeaseCandidateSpec", "renewTime"),
    ("PodCertificateRequestStatus", "notBefore"), ("PodCertificateRequestStatus", "beginRefreshAt"),
    ("PodCertificateRequestStatus", "notAfter"),
    ("DeviceTaint", "timeAdded"), ("AllocationResult", "allocationTimestamp"),
})


def _definition_name(node: Any) -> str:
    """The type name (``PodStatus``) of the definition ``node``'s ``$ref`` chain ends in ("" for none)."""
    defs = _definitions().get("$defs", {})
    name = ""
    for _ in range(32):
        ref = node.get("$ref") if isinstance(node, dict) else None
        if not isinstance(ref, str):
            break
        name = ref.rsplit("/", 1)[-1]
        node = defs.get(name)
    return name.rsplit(".", 1)[-1]


def _null_time(owner: str, key: str, node: Any) -> bool:
    """Whether a ``null`` of property ``key`` of definition ``owner`` stays: a zero ``metav1.Time`` struct
    encodes as ``null`` (``lastProbeTime: null``), but for ObjectMeta's ``creationTimestamp`` (``omitzero``)
    and the pointer times (:data:`_POINTER_TIMES`: ``status.startTime: null`` is absent)."""
    ref = node.get("$ref") if isinstance(node, dict) else None
    return (isinstance(ref, str) and ref.rsplit("/", 1)[-1] in _TIMES and key != "creationTimestamp"
            and (owner, key) not in _POINTER_TIMES)


def _nulls_to_zero(value: Any, node: Any) -> None:
    owner = _definition_name(node)
    node = _resolve(node)
    if isinstance(value, dict):
        properties = node.get("properties")
        if isinstance(properties, dict):
            for key in [k for k, v in value.items() if v is None and not _null_time(owner, k, properties.get(k))]:
                del value[key]
            for key, sub in value.items():
                if key in properties:
                    _nulls_to_zero(sub, properties[key])
            return
        element = node.get("additionalProperties")
        if isinstance(element, dict):
            _elements_to_zero(value, list(value.items()), element)
    elif isinstance(value, list):
        element = node.get("items")
        if isinstance(element, dict):
            _elements_to_zero(value, list(enumerate(value)), element)


def _elements_to_zero(container: Any, entries: list[tuple[Any, Any]], element: dict[str, Any]) -> None:
    """The map values or list items ``entries`` ((key or index, value)) of ``container``, all of schema
    ``element``: a null becomes the element's zero value (kept when it has none), others are walked."""
    for where, sub in entries:
        if sub is None:
            zero = _zero_of(element)
            if zero is not _NO_ZERO:
                container[where] = zero
        else:
            _nulls_to_zero(sub, element)


def nulls_to_zero(obj: dict[str, Any], group: str, version: str, kind: str) -> None:
    """Read JSON ``null`` as kube's decoder does for a built-in kind, in place, before any other check.

    ``encoding/json`` leaves a struct field it reads ``null`` for at its zero value (nil pointer, slice
    or map, empty string, 0, false), which kube encodes as absent (``omitempty``): such keys are
    dropped, at any depth (but a ``metav1.Time``, whose zero value encodes as ``null`` again, except
    ``metadata.creationTimestamp`` and the pointer times such as ``status.startTime``), so
    ``containers[0].name: null`` is a missing name (``Required value``, 422) rather than a wrong type (400).
    A ``null`` map value or list element becomes the element type's zero value (``labels: {a: null}`` is
    the label ``a: ""``; see :func:`_zero_of`). Free-form values
    (RawExtension, preserve-unknown-fields) are untouched, as is a kind without a schema. Custom
    resources are not decoded into structs and keep or prune their nulls by their CRD instead.
    """
    schema = _schema(group, version, kind)
    if schema is not None:
        _nulls_to_zero(obj, schema)


@functools.cache
def _schema(group: str, version: str, kind: str) -> dict[str, Any] | None:
    try:
        with open(schema_file(group, version, kind), "rb") as f:
            schema: dict[str, Any] = _lean(jsonutil.loads(f.read()), kind)
    except FileNotFoundError:
        return None
    # kubernetes-validate names core/v1 Event "event-v1" and events.k8s.io Event "event-events-v1";
    # make sure the file really is this group's kind.
    gvks = schema.get("x-kubernetes-group-version-kind") or []
    if gvks and not any(g.get("group", "") == group and g.get("kind") == kind for g in gvks):
        return None
    return schema


def _validator(group: str, version: str, kind: str) -> jsonschema.protocols.Validator | None:
    with _lock:  # functools.cache is not atomic: build each validator once
        return _cached_validator(group, version, kind)


@functools.cache
def _cached_validator(group: str, version: str, kind: str) -> jsonschema.protocols.Validator | None:
    schema = _schema(group, version, kind)
    if schema is None:
        return None
    return _Validator(schema, registry=_registry())


_Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {FORMAT_KEYWORD: _format_keyword})


class _FastFormat:
    """The FORMAT_KEYWORD check for jsonschema-rs: :func:`_format_keyword` itself, as a pass/fail.

    jsonschema-rs builds one per schema location (``parent_schema``, the
    keyword's ``value``, ``schema_path``) and calls :meth:`validate`, which
    raises ValueError when the Python check would report an error.
    """

    def __init__(self, parent_schema: Any, value: Any, schema_path: Any) -> None:
        self._value = value

    def validate(self, instance: Any) -> None:
        for error in _format_keyword(None, self._value, instance, None):
            raise ValueError(error.message)


@functools.cache
def _fast_registry() -> jsonschema_rs.Registry:
    definitions = _definitions()
    return jsonschema_rs.Registry([(definitions["$id"], definitions)])


@functools.cache
def _cached_fast_validator(group: str, version: str, kind: str) -> jsonschema_rs.Validator | None:
    schema = _schema(group, version, kind)
    if schema is None:
        return None
    return jsonschema_rs.Draft202012Validator(schema, registry=_fast_registry(), validate_formats=False,
                                              keywords={FORMAT_KEYWORD: _FastFormat})


def fast_valid(obj: Any, group: str, version: str, kind: str) -> bool:
    """True when the compiled validator accepts ``obj`` against the kind's strict schema.

    False means "walk it" (the body has an error, or the kind has no schema,
    or jsonschema-rs could not read the value): it is never True for a body
    :func:`validate` would report, since both check the same schema with the
    same format keyword. Built per kind on first use (~1 ms).
    """
    with _lock:
        validator = _cached_fast_validator(group, version, kind)
    if validator is None:
        return False
    try:
        return bool(validator.is_valid(obj))
    except Exception:  # noqa: BLE001 - a value it cannot convert is checked by the full walk
        return False


def preload(kinds: Iterable[tuple[str, str, str]]) -> int:
    """Compile the validators of ``kinds`` ((group, version, kind) triples) now; returns how many exist.

    Loading the definitions and compiling a validator takes tens of
    milliseconds; a server calls this at start so the first request does not.
    """
    return sum(1 for g, v, k in kinds if _validator(g, v, k) is not None)


def kind_schema(group: str, version: str, kind: str) -> dict[str, Any] | None:
    """The kind's lean strict schema (``$ref`` chains into :func:`definitions`); None without one. Do not mutate."""
    return _schema(group, version, kind)


def definitions() -> dict[str, Any]:
    """The lean definitions by name (``io.k8s.api.core.v1.PodSpec`` -> schema), loaded once; do not mutate."""
    defs: dict[str, Any] = _definitions().get("$defs", {})
    return defs


def has_schema(group: str, version: str, kind: str) -> bool:
    """True when a strict schema exists for this kind."""
    return _schema(group, version, kind) is not None


def top_level_fields(group: str, version: str, kind: str) -> frozenset[str]:
    """The kind's top-level property names (``spec``, ``status``, ``data``...); empty if no schema."""
    schema = _schema(group, version, kind)
    return frozenset((schema or {}).get("properties", {}))


def _error_path(error: jsonschema.ValidationError, extra: Sequence[str] = ()) -> str:
    """The field path of ``error``, map keys in brackets (``metadata.labels[app]``) as kube's field.Path prints them.

    The schema path tells fields (``properties``) from map keys
    (``additionalProperties``) and list items (``items``); ``$ref`` hops are
    transparent in it. ``extra`` names fields below the error's instance.
    """
    tokens = list(error.absolute_schema_path)[:-1]  # the last token is the failing keyword
    instance = list(error.absolute_path)
    out, i, j = "", 0, 0
    while j < len(tokens) and i < len(instance):
        token = tokens[j]
        if token in ("properties", "patternProperties", "prefixItems"):
            j += 1  # skip the property name / pattern / index that follows
            part = instance[i]
            out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
            i += 1
        elif token in ("additionalProperties", "items"):
            out += f"[{instance[i]}]"
            i += 1
        j += 1
    for part in [*instance[i:], *extra]:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _json_type(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _expected_types(schema: Any) -> list[str]:
    types = schema.get("type", []) if isinstance(schema, dict) else []
    if isinstance(types, str):
        types = [types]
    return [t for t in types if t != "null"]


def _type_cause(path: str, value: Any, expected: Sequence[str]) -> Cause:
    # kube-openapi's InvalidType, as kube-apiserver reports it for CRDs:
    # `spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`.
    actual = _json_type(value)
    want = " or ".join(expected) if expected else "a different type"
    return Cause("FieldValueTypeInvalid",
                 f'Invalid value: "{actual}": {path or "body"} in body must be of type {want}: "{actual}"', path)


def _go_field_path(path: str) -> str:
    # encoding/json's field stack: struct field names only, no list indexes or map keys.
    return ".".join(part.split("[")[0] for part in path.split(".")) if path else ""


def decode_error(kind: str, version: str, cause: Cause) -> errors.StatusError:
    """400 BadRequest for a value kube-apiserver's decoder refuses, with the decoder's message.

    ``ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot
    unmarshal bool into Go struct field ConfigMap.data of type string``
    (for a wrong JSON type the Go struct is approximated by the kind). A
    FieldValueTypeInvalid cause whose message is not ``Invalid value: ...``
    carries the decoder's own text (base64, Quantity, int32/int64 range).
    """
    return errors.bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: '
                              + decode_error_text(kind, cause))


def decode_error_text(kind: str, cause: Cause) -> str:
    """The decoder's own words for a FieldValueTypeInvalid ``cause`` of a ``kind`` object (what follows the
    ``cannot be handled as`` prefix of :func:`decode_error`; the detail of a patch's 422)."""
    if not cause.message.startswith("Invalid value: "):
        return cause.message
    actual = cause.message.split('"')[1] if '"' in cause.message else "value"
    want = cause.message.rsplit("must be of type ", 1)[-1].split(":")[0].split(" or ")[0]
    go_actual = {"boolean": "bool", "integer": "number", "null": "null"}.get(actual, actual)
    go_want = {"integer": "int", "boolean": "bool", "object": "map", "array": "slice"}.get(want, want)
    path = _go_field_path(cause.field)
    target = f"{kind}.{path}" if path else kind
    return f"json: cannot unmarshal {go_actual} into Go struct field {target} of type {go_want}"


def check_types(obj: Any, group: str, version: str, kind: str) -> dict[str, Any]:
    """Decode-time type check of a body meant as ``group/version, Kind=kind`` (e.g. a ``Scale``).

    Returns ``obj`` (a dict) with unknown fields dropped; raises 400 BadRequest in
    kube's decoder words when the body is not an object or a field has the wrong
    JSON type (see :func:`decode_error`).
    """
    if not isinstance(obj, dict):
        raise errors.bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: json: cannot '
                                 f"unmarshal {_GO_JSON_TYPES.get(_json_type(obj), _json_type(obj))} into Go value "
                                 f"of type {version}.{kind}")
    result = validate(obj, group, version, kind)
    type_errors = [c for c in result.causes if c.type == "FieldValueTypeInvalid"]
    if type_errors:
        raise decode_error(kind, version, type_errors[0])
    return obj


_GO_JSON_TYPES = {"boolean": "bool", "integer": "number", "array": "array", "string": "string", "null": "null"}


def _quote(value: Any) -> str:
    return jsonutil.dumps(value).decode() if isinstance(value, (str, int, float, bool)) or value is None else \
        f'"{_json_type(value)}"'


def _causes_of(error: jsonschema.ValidationError, unknown: list[tuple[dict[str, Any], str, str]],
               causes: list[Cause]) -> None:
    path = _error_path(error)
    kind = error.validator
    if kind == "additionalProperties":
        instance = error.instance
        if not isinstance(instance, dict):
            return
        known = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        for key in instance:
            if key not in known:
                unknown.append((instance, key, _error_path(error, (key,))))
        return
    if kind == FORMAT_KEYWORD:  # a decoding error: decode_error turns it into the 400
        causes.append(Cause("FieldValueTypeInvalid", error.message.replace("{path}", _go_field_path(path)), path))
        return
    if kind == "type":
        causes.append(_type_cause(path, error.instance, _expected_types(error.schema)))
        return
    if kind == "required":
        instance = error.instance if isinstance(error.instance, dict) else {}
        for name in error.validator_value:
            if name not in instance:
                causes.append(Cause("FieldValueRequired", "Required value", _error_path(error, (name,))))
        return
    if kind == "enum":
        allowed = ", ".join(jsonutil.dumps(v).decode() for v in error.validator_value)
        causes.append(Cause("FieldValueNotSupported",
                            f"Unsupported value: {_quote(error.instance)}: supported values: {allowed}", path))
        return
    if kind in ("oneOf", "anyOf"):
        branches = error.validator_value or []
        # int-or-string and Quantity are oneOf over bare types: report them as one type error.
        if all(isinstance(b, dict) and set(b) <= {"type", "format"} for b in branches):
            expected = [t for b in branches for t in _expected_types(b)]
            causes.append(_type_cause(path, error.instance, expected))
            return
    causes.append(Cause("FieldValueInvalid", f"Invalid value: {_quote(error.instance)}: {error.message}", path))


def _document_order(obj: Any) -> dict[tuple[int, str], int]:
    """(id of a map, key) -> the key's position in a pre-order walk of ``obj``: the order in which a JSON decoder
    meets every field, as sigs.k8s.io/json's strict decoder reports unknown fields."""
    position: dict[tuple[int, str], int] = {}
    stack: list[Iterator[tuple[Any, Any]]] = [iter([(None, obj)])]  # (the map holding it or None, key) per value
    while stack:
        step = next(stack[-1], None)
        if step is None:
            stack.pop()
            continue
        holder, value = step
        if holder is not None:
            position[holder] = len(position)
        if isinstance(value, dict):
            stack.append(zip([(id(value), key) for key in value], value.values(), strict=True))
        elif isinstance(value, list):
            stack.append((None, item) for item in value)
    return position


def validate(obj: dict[str, Any], group: str, version: str, kind: str) -> Result:
    """Validate ``obj`` (a decoded object of ``group/version, Kind=kind``) against its strict schema.

    Unknown fields are removed from ``obj`` in place (as decoding into a Go
    struct drops them) and reported in ``Result.unknown``; type, enum and
    required violations are ``Result.causes``. A kind without a schema (not
    a built-in) yields an empty result. Never raises for bad input.
    """
    validator = _validator(group, version, kind)
    result = Result()
    if validator is None or fast_valid(obj, group, version, kind):
        return result
    unknown: list[tuple[dict[str, Any], str, str]] = []
    causes: list[Cause] = []
    for error in validator.iter_errors(obj):
        _causes_of(error, unknown, causes)
    result.causes = list(dict.fromkeys(causes))  # one "required" error per missing property repeats the list
    if len(unknown) > 1:  # the schema walk reports nested objects first; kube's decoder meets them in order
        position = _document_order(obj)
        unknown.sort(key=lambda item: position.get((id(item[0]), item[1]), 0))
    for container, key, path in unknown:
        container.pop(key, None)
        result.unknown.append(path)
    return result


def apply_field_validation(unknown: Sequence[str], directive: str, options_kind: str = "CreateOptions", *,
                           kind: str = "", version: str = "") -> list[str]:
    """Apply the ``fieldValidation`` directive to the unknown fields :func:`validate` found.

    ``directive``: "" (means Warn, kube's default), "Ignore", "Warn" or
    "Strict". Returns the warnings to send (Warn: one ``unknown field
    "<path>"`` per field). Raises :class:`kapi.errors.StatusError`: 400
    BadRequest ``strict decoding error: unknown field "a", unknown field "b"``
    under Strict, prefixed ``<Kind> in version "<version>" cannot be handled
    as a <Kind>: `` when ``kind`` is given (kube's transformDecodeError for a
    create or update body); 422 Invalid for any other directive, as kube validates
    ``CreateOptions``/``UpdateOptions``/``PatchOptions`` (``options_kind``).
    """
    directive = directive or WARN
    if directive not in FIELD_VALIDATION_VALUES:
        allowed = ", ".join(f'"{v}"' for v in FIELD_VALIDATION_VALUES)
        raise errors.invalid(options_kind, "", [Cause(
            "FieldValueNotSupported", f"Unsupported value: {_quote(directive)}: supported values: {allowed}",
            "fieldValidation")], group="meta.k8s.io")
    if not unknown or directive == IGNORE:
        return []
    messages = [f"unknown field {gofmt.go_quote(path)}" for path in unknown]  # Go's %q: control characters escaped
    if directive == STRICT:
        prefix = f'{kind} in version "{version}" cannot be handled as a {kind}: ' if kind else ""
        raise errors.bad_request(prefix + "strict decoding error: " + ", ".join(messages))
    return messages
