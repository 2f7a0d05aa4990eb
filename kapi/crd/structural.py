"""Structural-schema and default checks of a CRD's ``openAPIV3Schema`` (apiextensions-apiserver), for kapi.crd.openapi.

- *structural schema* rules (``ValidateStructural``, sorted by message as
  kube): ``type`` everywhere except under ``x-kubernetes-int-or-string`` /
  ``x-kubernetes-preserve-unknown-fields``, ``items`` for arrays, object at
  the root, no ``additionalProperties`` at the root, root ``metadata`` may
  restrict only ``name``/``generateName``, embedded resources, valid
  ``pattern``, and in ``allOf``/``anyOf``/``oneOf``/``not`` only value
  validations (no ``type``, ``default``, ``nullable``, ``description``,
  ``x-kubernetes-*``..., no ``metadata``; the int-or-string ``anyOf``
  patterns excepted) with every property also in the structural part;
- defaults (only for a structural schema): pruned (``must not have unknown
  fields``) and valid against their schema (through the ``value_validator``
  the admission service passes, kube-openapi messages).

Helpers shared with :mod:`kapi.crd.openapi` (and :func:`field_schema`, with
:mod:`kapi.crd.validation`) render field errors as
k8s.io/apimachinery ``field.Error`` does. Source:
k8s.io/apiextensions-apiserver ``pkg/apiserver/schema/validation.go``, ``complete.go``,
``defaulting/validation.go``; "Specifying a structural schema".
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kapi import gofmt, jsonutil, objectmeta
from kapi.errors import Cause

Obj = dict[str, Any]
ValueValidator = Callable[[Any, Obj], list[Cause]]
"""Validates a value against a schema; causes carry paths relative to the value ("" for itself)."""

OPENAPI_TYPES = ["array", "boolean", "integer", "number", "object", "string"]
VALIDATION_REASONS = ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"]
ROOT_FIELDS_WITH_STATUS = {  # allowedFieldsAtRootSchema, JSON name -> Go field name
    "description": "Description", "type": "Type", "format": "Format", "title": "Title", "maximum": "Maximum",
    "exclusiveMaximum": "ExclusiveMaximum", "minimum": "Minimum", "exclusiveMinimum": "ExclusiveMinimum",
    "maxLength": "MaxLength", "minLength": "MinLength", "pattern": "Pattern", "maxItems": "MaxItems",
    "minItems": "MinItems", "uniqueItems": "UniqueItems", "multipleOf": "MultipleOf", "required": "Required",
    "items": "Items", "properties": "Properties", "externalDocs": "ExternalDocs", "example": "Example",
    "x-kubernetes-preserve-unknown-fields": "XPreserveUnknownFields", "x-kubernetes-validations": "XValidations"}
_META_FIELDS = ("apiVersion", "kind", "metadata")
_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]
_LOOKAROUND = re.compile(r"\(\?<?[=!]|\\[1-9]")


@dataclass(frozen=True)
class Options:
    """Which rule families apply (all on a create; on an update, those the old CRD met)."""

    require_valid_property_type: bool = True
    require_structural: bool = True
    require_pruned_defaults: bool = True
    require_atomic_set_type: bool = True
    require_map_list_keys_map_set: bool = True
    preexisting_expressions: frozenset[str] = field(default_factory=frozenset)


def _d(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _go(value: Any) -> str:
    """A JSON value as Go's ``%#v`` prints the decoded interface{} (field.Invalid of a non-scalar)."""
    if isinstance(value, dict):
        inner = ", ".join(f"{json.dumps(str(k))}:{_go(v)}" for k, v in sorted(value.items()))
        return f"map[string]interface {{}}{{{inner}}}"
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(_go(v) for v in value) + "}"
    if value is None:
        return "interface {}(nil)"
    return json.dumps(value, ensure_ascii=False)


def go_json(value: Any) -> str:
    """``json.Marshal`` of an unstructured value: keys sorted, ``<``/``>``/``&`` escaped, and a whole float64
    below 1e21 without a fraction (Go prints ``1`` for ``1.0``)."""
    def whole(v: Any) -> Any:
        if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
            return int(v)
        if isinstance(v, dict):
            return {k: whole(x) for k, x in v.items()}
        if isinstance(v, list):
            return [whole(x) for x in v]
        return v
    return jsonutil.dumps_go_encoder(whole(value)).rstrip("\n")


def field_value(value: Any) -> str:
    """A field error's bad value as apimachinery's ``field.Error.ErrorBody`` prints it (kube 1.34+,
    ``pkg/util/validation/field/errors.go``): a string ``%q`` (``"a"``), an int64, float64 or bool ``%v``
    (``3``, ``1.5``, ``1e+06``, ``true``), anything else as ``json.Marshal`` (``{"name":"a"}``, ``[1,2]``,
    ``null``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if jsonutil.INT64_MIN <= value <= jsonutil.INT64_MAX else gofmt.go_float(float(value))
    if isinstance(value, float):
        return gofmt.go_float(value)
    if isinstance(value, str):
        return objectmeta.go_quote(value)
    return go_json(value)


def _shown(value: Any) -> str:
    """field.Error's rendering of a bad value: scalars plain/quoted, nil as the quoted string ``"null"``
    (:func:`kapi.objectmeta.bad_value`), the rest as Go %#v."""
    if value is None:
        return '"null"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "[]string{" + ", ".join(json.dumps(v) for v in value) + "}"
    return _go(value)


def _rule_struct(rule: Obj) -> str:
    """apiextensions.ValidationRule printed with Go's %#v, as kube's compile errors show it."""
    reason = "(*apiextensions.FieldValueErrorReason)(nil)" if rule.get("reason") is None else (
        "(*apiextensions.FieldValueErrorReason)(0xc000000000)")
    optional = "(*bool)(nil)" if rule.get("optionalOldSelf") is None else "(*bool)(0xc000000000)"
    return (f"apiextensions.ValidationRule{{Rule:{json.dumps(_s(rule.get('rule')), ensure_ascii=False)}, "
            f"Message:{json.dumps(_s(rule.get('message')), ensure_ascii=False)}, "
            f"MessageExpression:{json.dumps(_s(rule.get('messageExpression')), ensure_ascii=False)}, "
            f"Reason:{reason}, FieldPath:{json.dumps(_s(rule.get('fieldPath')), ensure_ascii=False)}, "
            f"OptionalOldSelf:{optional}}}")


def invalid(path: str, shown: str, detail: str) -> Cause:
    """field.Invalid with an already rendered value."""
    return Cause("FieldValueInvalid", f"Invalid value: {shown}: {detail}", path)


def required(path: str, detail: str) -> Cause:
    """field.Required."""
    return Cause("FieldValueRequired", f"Required value: {detail}" if detail else "Required value", path)


def forbidden(path: str, detail: str) -> Cause:
    """field.Forbidden."""
    return Cause("FieldValueForbidden", f"Forbidden: {detail}", path)


def not_supported(path: str, value: str, supported: list[str]) -> Cause:
    """field.NotSupported."""
    return Cause("FieldValueNotSupported", f'Unsupported value: "{value}": supported values: '
                 + ", ".join(f'"{v}"' for v in supported), path)


def _key(path: str, name: str) -> str:
    return f"{path}.properties[{name}]"


def _props(schema: Obj) -> dict[str, Obj]:
    return {str(k): _d(v) for k, v in sorted(_d(schema.get("properties")).items())}


def _items(schema: Obj) -> Obj | None:
    items = schema.get("items")
    return items if isinstance(items, dict) else None


# --- structural schema (pkg/apiserver/schema/validation.go, complete.go) ------------------------------------------

ROOT, ITEM, FIELD = "root", "item", "field"
_EMPTY_TYPE = {ROOT: "must not be empty at the root", ITEM: "must not be empty for specified array items",
               FIELD: "must not be empty for specified object fields"}


def _pattern(schema: Obj, path: str) -> list[Cause]:
    pattern = schema.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        return []
    bad = _LOOKAROUND.search(pattern)
    if bad:
        err = f"error parsing regexp: invalid or unsupported Perl syntax: `{bad.group()}`"
    else:
        try:
            re.compile(pattern)
            return []
        except re.error as exc:
            err = f"error parsing regexp: {exc.msg}: `{pattern}`"
    return [invalid(f"{path}.pattern", json.dumps(pattern), f"must be a valid regular expression, but isn't: {err}")]


def _value_validation(v: Obj, skip_any_of: bool, skip_first_all_of_any_of: bool, lvl: str, path: str) -> list[Cause]:
    out: list[Cause] = []
    if not skip_any_of:
        for i, sub in enumerate(_l(v.get("anyOf"))):
            out.extend(_nested(_d(sub), False, lvl, f"{path}.anyOf[{i}]"))
    for i, sub in enumerate(_l(v.get("allOf"))):
        out.extend(_nested(_d(sub), skip_first_all_of_any_of and i == 0, lvl, f"{path}.allOf[{i}]"))
    for i, sub in enumerate(_l(v.get("oneOf"))):
        out.extend(_nested(_d(sub), False, lvl, f"{path}.oneOf[{i}]"))
    if isinstance(v.get("not"), dict):
        out.extend(_nested(v["not"], False, lvl, f"{path}.not"))
    out.extend(_pattern(v, path))
    return out


_NESTED_FORBIDDEN = (("type", "must be empty to be structural"),
                     ("additionalProperties", "must be undefined to be structural"),
                     ("default", "must be undefined to be structural"), ("title", "must be empty to be structural"),
                     ("description", "must be empty to be structural"), ("nullable", "must be false to be structural"),
                     ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
                     ("x-kubernetes-embedded-resource", "must be false to be structural"),
                     ("x-kubernetes-int-or-string", "must be false to be structural"),
                     ("x-kubernetes-list-map-keys", "must be empty to be structural"),
                     ("x-kubernetes-list-type", "must be undefined to be structural"))


def _nested(v: Obj, skip_any_of: bool, lvl: str, path: str) -> list[Cause]:
    """validateNestedValueValidation: a schema under a logic junctor may only hold value validations."""
    out = _value_validation(v, skip_any_of, False, lvl, path)
    if isinstance(v.get("items"), dict):
        out.extend(_nested(v["items"], False, lvl, f"{path}.items"))
    for name, sub in _props(v).items():
        out.extend(_nested(sub, False, FIELD, _key(path, name)))
    for key, detail in _NESTED_FORBIDDEN:
        value = v.get(key)
        present = value is not None if key in ("additionalProperties", "default", "x-kubernetes-list-type") \
            else bool(value)
        if present:
            out.append(forbidden(f"{path}.{key}", detail))
    if "metadata" in _props(v):
        out.append(forbidden(_key(path, "metadata"), "must not be specified in a nested context"))
    return out


def _invariants(s: Obj, lvl: str, path: str) -> list[Cause]:
    """validateStructuralInvariants of one node and its structural children."""
    out: list[Cause] = []
    type_ = _s(s.get("type"))
    items = _items(s)
    if type_ == "array" and items is None:
        out.append(required(f"{path}.items", "must be specified"))
    if items is not None:
        out.extend(_invariants(items, ITEM, f"{path}.items"))
    props = _props(s)
    for name, sub in props.items():
        out.extend(_invariants(sub, FIELD, _key(path, name)))
    extra = s.get("additionalProperties")
    if extra is not None:
        if lvl == ROOT:
            out.append(forbidden(f"{path}.additionalProperties", "must not be used at the root"))
        if isinstance(extra, dict):
            out.extend(_invariants(extra, FIELD, f"{path}.additionalProperties"))
    int_or_string, preserve = bool(s.get("x-kubernetes-int-or-string")), bool(
        s.get("x-kubernetes-preserve-unknown-fields"))
    embedded = bool(s.get("x-kubernetes-embedded-resource"))
    if int_or_string and preserve:
        out.append(invalid(f"{path}.x-kubernetes-preserve-unknown-fields", "true",
                           "must be false if x-kubernetes-int-or-string is true"))
    if int_or_string and embedded:
        out.append(invalid(f"{path}.x-kubernetes-embedded-resource", "true",
                           "must be false if x-kubernetes-int-or-string is true"))
    any_of, all_of = s.get("anyOf"), s.get("allOf")
    skip_any_of = any_of == _INT_OR_STRING_ANY_OF
    skip_first = isinstance(all_of, list) and bool(all_of) and _d(all_of[0]).get("anyOf") == _INT_OR_STRING_ANY_OF
    out.extend(_value_validation(s, skip_any_of, skip_first, lvl, path))
    if embedded and type_ != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        out.append(required(f"{path}.type", detail) if not type_ else invalid(f"{path}.type", json.dumps(type_),
                                                                              detail))
    elif not type_ and not int_or_string and not preserve:
        out.append(required(f"{path}.type", _EMPTY_TYPE[lvl]))
    if embedded and extra is not None:
        out.append(forbidden(f"{path}.additionalProperties", "must not be used if x-kubernetes-embedded-resource is "
                             "set"))
    if lvl == ROOT and type_ and type_ != "object":
        out.append(invalid(f"{path}.type", json.dumps(type_), "must be object at the root"))
    check_meta = lvl == ROOT or embedded
    for name, want in (("kind", "string"), ("apiVersion", "string"), ("metadata", "object")):
        if name in props and check_meta and _s(props[name].get("type")) != want:
            out.append(invalid(f"{_key(path, name)}.type", json.dumps(_s(props[name].get("type"))), f"must be {want}"))
    if "metadata" in props and lvl == ROOT:
        meta = {k: v for k, v in props["metadata"].items() if v not in (None, False, "", [], {})
                and k not in ("type", "default")}
        names = set(_props(meta))
        if names and names <= {"name", "generateName"}:
            meta.pop("properties")
        if meta:
            out.append(forbidden(_key(path, "metadata"), "must not specify anything other than name and generateName, "
                                 "but metadata is implicitly specified"))
    if embedded and not preserve and not props:
        out.append(required(f"{path}.properties", "must not be empty if x-kubernetes-embedded-resource is true "
                            "without x-kubernetes-preserve-unknown-fields"))
    return out


def _complete_nested(v: Obj, s: Obj | None, s_path: str, v_path: str) -> list[Cause]:
    if s is None:
        return [required(s_path, f"because it is defined in {v_path}")]
    out = _complete(v, s, s_path, v_path)
    if isinstance(v.get("items"), dict):
        out.extend(_complete_nested(v["items"], _items(s), f"{s_path}.items", f"{v_path}.items"))
    s_props = _props(s)
    for name, sub in _props(v).items():
        if name not in s_props:
            out.append(required(_key(s_path, name), f"because it is defined in {_key(v_path, name)}"))
        else:
            out.extend(_complete_nested(sub, s_props[name], _key(s_path, name), _key(v_path, name)))
    return out


def _complete(v: Obj, s: Obj, s_path: str, v_path: str) -> list[Cause]:
    """validateStructuralCompleteness: properties and items named under junctors exist in the structural part."""
    out: list[Cause] = []
    if isinstance(v.get("not"), dict):
        out.extend(_complete_nested(v["not"], s, s_path, f"{v_path}.not"))
    for key in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(_l(v.get(key))):
            out.extend(_complete_nested(_d(sub), s, s_path, f"{v_path}.{key}[{i}]"))
    return out


def field_schema(json_path: str, schema: Obj) -> tuple[str, Obj]:
    """The dotted field path and schema a selectable field's ``jsonPath`` names (cel.ValidFieldPath, no arrays).

    Raises ValueError with kube's reason: ``array notation is not allowed``,
    ``expected [ or . but got: x``, ``unexpected end of JSON path``,
    ``does not refer to a valid field``.
    """
    tokens = [t for t in re.split(r"([.\[\]])", json_path) if t]
    names: list[str] = []
    current = schema
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in ("[", "]"):
            raise ValueError("array notation is not allowed")
        if tok != ".":
            raise ValueError(f"expected [ or . but got: {tok}")
        if i + 1 >= len(tokens) or tokens[i + 1] in (".", "[", "]"):
            raise ValueError("unexpected end of JSON path")
        name = tokens[i + 1]
        props, extra = _d(current.get("properties")), current.get("additionalProperties")
        if props:
            if name not in props:
                raise ValueError("does not refer to a valid field")
            current = _d(props[name])
        elif isinstance(extra, dict):
            current = extra
        else:
            raise ValueError("does not refer to a valid field")
        names.append(name)
        i += 2
    return ".".join(names), current


def structural_errors(schema: Obj, path: str) -> list[Cause]:
    """ValidateStructural: the structural schema errors of ``schema``, sorted by their text as kube does."""
    out = _invariants(schema, ROOT, path) + _complete(schema, schema, path, path)
    return sorted(out, key=lambda c: f"{c.field}: {c.message}")


# --- defaults (pkg/apiserver/schema/defaulting/validation.go) -----------------------------------------------------


def prune(value: Any, s: Obj, embedded: bool) -> None:
    """Drop what the structural schema ``s`` does not specify, in place (kube's pruning, without metadata)."""
    if isinstance(value, dict):
        props, extra = _props(s), s.get("additionalProperties")
        for key in list(value):
            if embedded and key in _META_FIELDS:
                continue
            if key in props:
                prune(value[key], props[key], bool(props[key].get("x-kubernetes-embedded-resource")))
            elif isinstance(extra, dict):
                prune(value[key], extra, bool(extra.get("x-kubernetes-embedded-resource")))
            elif not (s.get("x-kubernetes-preserve-unknown-fields") or extra is True):
                del value[key]
    elif isinstance(value, list) and _items(s) is not None:
        items = _items(s) or {}
        for item in value:
            prune(item, items, bool(items.get("x-kubernetes-embedded-resource")))


def default_errors(s: Obj, path: str, opts: Options, value_validator: ValueValidator | None,
                   embedded: bool = True, inside_meta: bool = False) -> list[Cause]:
    """ValidateDefaults: every ``default`` is pruned and valid against its own schema (root = a resource)."""
    out: list[Cause] = []
    embedded = embedded or bool(s.get("x-kubernetes-embedded-resource"))
    if embedded:
        inside_meta = False
    if "default" in s and s["default"] is not None and not inside_meta:
        value = s["default"]
        if opts.require_pruned_defaults:
            pruned = copy.deepcopy(value)
            prune(pruned, s, embedded)
            if pruned != value:
                out.append(invalid(f"{path}.default", field_value(value), "must not have unknown fields"))
        if value_validator is not None:
            for cause in value_validator(value, s):
                suffix = f".{cause.field}" if cause.field and not cause.field.startswith("[") else cause.field
                out.append(Cause(cause.type, cause.message, f"{path}.default{suffix}"))
    if _items(s) is not None:
        out.extend(default_errors(_items(s) or {}, f"{path}.items", opts, value_validator, False, inside_meta))
    for name, prop in _props(s).items():
        out.extend(default_errors(prop, _key(path, name), opts, value_validator, False,
                                  inside_meta or (embedded and name in _META_FIELDS)))
    return out
