"""Validation of a CRD version's ``openAPIV3Schema`` itself, as apiextensions-apiserver does for v1 CRDs.

:func:`validate` returns kube's field errors for one schema, at
``spec.validation.openAPIV3Schema`` when every version has the same schema,
else ``spec.versions[i].schema.openAPIV3Schema``, in kube's order:

1. the root: with the status subresource only some keywords (``type:
   object``, properties, required, ...), never ``nullable``;
2. structural-schema errors, then default errors
   (:mod:`kapi.crd.structural`);
3. the generic rules of ``ValidateCustomResourceDefinitionOpenAPISchema``:
   ``type`` one of the OpenAPI types (``null`` -> use nullable),
   ``uniqueItems: true``, ``$ref``, ``id``, ``definitions``,
   ``dependencies``, ``patternProperties``, ``additionalItems``, ``items``
   as an array, ``properties`` with ``additionalProperties``, defaults in
   top-level metadata/apiVersion/kind and in additionalProperties of
   metadata, ``x-kubernetes-embedded-resource`` inside metadata,
   ``x-kubernetes-preserve-unknown-fields: false``,
   ``x-kubernetes-map-type`` (object, atomic|granular),
   ``x-kubernetes-list-type`` (array, atomic|set|map; set items atomic),
   ``x-kubernetes-list-map-keys`` (list-type map, item properties that are
   scalars, required or defaulted, not nullable; items not nullable),
   ``x-kubernetes-validations`` (rule, message, messageExpression, reason,
   fieldPath checks; then, on a structural schema and only where this node
   and its children have no schema errors, rules and messageExpressions
   compile (:mod:`kapi.crd.rules`), ``oldSelf`` only where every array above is
   a list-type map and every map is granular (``oldSelf cannot be used on
   the uncorrelatable portion of the schema within <path>``), and
   ``optionalOldSelf`` only with oldSelf). Properties are visited in sorted
   order (kube iterates a Go map).

Ratcheting (:func:`options_for_update`): on update a family of rules is
enforced only if the old CRD met it in every schema (structural, valid
types, pruned defaults, atomic set items, map-list keys), and expressions
already in the old CRD are only syntax-checked (kube compiles them in its
lenient stored-expression environment). :mod:`kapi.crd.validation` also
skips a schema identical to one of the old CRD's, so CRDs stored before a
rule existed stay updatable (finalizers, labels). Estimated CEL cost
limits are not enforced. Source: k8s.io/apiextensions-apiserver
``pkg/apis/apiextensions/validation/validation.go``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kapi.crd import rules
from kapi.crd.structural import (
    OPENAPI_TYPES,
    ROOT_FIELDS_WITH_STATUS,
    VALIDATION_REASONS,
    Obj,
    Options,
    ValueValidator,
    _d,
    _items,
    _key,
    _l,
    _props,
    _rule_struct,
    _s,
    _shown,
    default_errors,
    field_schema,
    forbidden,
    invalid,
    not_supported,
    required,
    structural_errors,
)
from kapi.errors import Cause

__all__ = ["Options", "ValueValidator", "options_for_update", "validate"]

_META_FIELDS = ("apiVersion", "kind", "metadata")
_NEWLINE = re.compile(r"[\n\r]+")


@dataclass(frozen=True)
class _Ctx:
    """specStandardValidatorV3's state while walking down a schema."""

    allow_defaults: bool = True
    defaults_reason: str = ""
    inside_meta: bool = False
    uncorrelatable: str | None = None
    cel: bool = False  # compile rules here (structural schema, not under a logic junctor)
    resource_root: bool = False

    def forbid_defaults(self, reason: str) -> _Ctx:
        return _Ctx(False, reason, self.inside_meta, self.uncorrelatable, self.cel, False)

    def uncorrelated(self, path: str) -> _Ctx:
        return self if self.uncorrelatable is not None else _Ctx(
            self.allow_defaults, self.defaults_reason, self.inside_meta, path, self.cel, False)

    def child(self, cel: bool | None = None, inside_meta: bool | None = None) -> _Ctx:
        return _Ctx(self.allow_defaults, self.defaults_reason, self.inside_meta if inside_meta is None else inside_meta,
                    self.uncorrelatable, self.cel if cel is None else cel, False)


@dataclass
class _Errors:
    schema: list[Cause] = field(default_factory=list)
    cel: list[Cause] = field(default_factory=list)

    def add(self, other: _Errors) -> None:
        self.schema.extend(other.schema)
        self.cel.extend(other.cel)


def _standard(s: Obj, path: str, ctx: _Ctx, opts: Options) -> list[Cause]:
    """specStandardValidatorV3.validate: keywords a v1 CRD schema may not use."""
    out: list[Cause] = []
    type_ = s.get("type")
    if opts.require_valid_property_type and type_ and type_ not in OPENAPI_TYPES:
        out.append(not_supported(f"{path}.type", str(type_), OPENAPI_TYPES))
    if s.get("default") is not None and not ctx.allow_defaults:
        detail = "must not be set" + (f" {ctx.defaults_reason}" if ctx.defaults_reason else "")
        out.append(forbidden(f"{path}.default", detail))
    present = {"id": bool(s.get("id")), "additionalItems": s.get("additionalItems") is not None,
               "patternProperties": bool(s.get("patternProperties")), "definitions": bool(s.get("definitions")),
               "dependencies": s.get("dependencies") is not None, "$ref": s.get("$ref") is not None}
    out.extend(forbidden(f"{path}.{key}", f"{key} is not supported") for key, there in present.items() if there)
    if type_ == "null":
        out.append(forbidden(f"{path}.type", "type cannot be set to null, use nullable as an alternative"))
    if isinstance(s.get("items"), list) and s["items"]:
        out.append(forbidden(f"{path}.items", "items must be a schema object and not an array"))
    if ctx.inside_meta and s.get("x-kubernetes-embedded-resource"):
        out.append(forbidden(f"{path}.x-kubernetes-embedded-resource", "must not be used inside of resource meta"))
    return out


def _list_rules(s: Obj, path: str, opts: Options) -> list[Cause]:
    out: list[Cause] = []
    type_ = _s(s.get("type"))
    map_type, list_type = s.get("x-kubernetes-map-type"), s.get("x-kubernetes-list-type")
    keys = _l(s.get("x-kubernetes-list-map-keys"))
    items = _items(s)
    if map_type is not None and type_ != "object":
        detail = "must be object if x-kubernetes-map-type is specified"
        out.append(required(f"{path}.type", detail) if not type_ else invalid(f"{path}.type", _shown(type_), detail))
    if map_type is not None and map_type not in ("atomic", "granular"):
        out.append(not_supported(f"{path}.x-kubernetes-map-type", str(map_type), ["atomic", "granular"]))
    if list_type is not None and type_ != "array":
        detail = "must be array if x-kubernetes-list-type is specified"
        out.append(required(f"{path}.type", detail) if not type_ else invalid(f"{path}.type", _shown(type_), detail))
    elif opts.require_atomic_set_type and list_type == "set" and items is not None:
        item_type = items.get("type")
        detail = "must be atomic as item of a list with x-kubernetes-list-type=set"
        if item_type == "array" and items.get("x-kubernetes-list-type") not in (None, "atomic"):
            out.append(invalid(f"{path}.items.x-kubernetes-list-type", _shown(items.get("x-kubernetes-list-type")),
                               detail))
        elif item_type == "object" and items.get("x-kubernetes-map-type") != "atomic":
            out.append(invalid(f"{path}.items.x-kubernetes-map-type", _shown(items.get("x-kubernetes-list-type")),
                               detail))
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        out.append(not_supported(f"{path}.x-kubernetes-list-type", str(list_type), ["atomic", "set", "map"]))
    if keys:
        detail = "must be map if x-kubernetes-list-map-keys is non-empty"
        if list_type is None:
            out.append(required(f"{path}.x-kubernetes-list-type", detail))
        elif list_type != "map":
            out.append(invalid(f"{path}.x-kubernetes-list-type", _shown(list_type), detail))
    if list_type == "map":
        if not keys:
            out.append(required(f"{path}.x-kubernetes-list-map-keys", "must not be empty if x-kubernetes-list-type "
                                "is map"))
        if "items" not in s or s.get("items") is None:
            out.append(required(f"{path}.items", "must have a schema if x-kubernetes-list-type is map"))
        elif items is None:
            out.append(invalid(f"{path}.items", _shown(s.get("items")), "must only have a single schema if "
                               "x-kubernetes-list-type is map"))
        elif items.get("type") != "object":
            out.append(invalid(f"{path}.items.type", _shown(_s(items.get("type"))), "must be object if parent "
                               "array's x-kubernetes-list-type is map"))
        else:
            props, seen = _props(items), set()
            for k in keys:
                if k in props:
                    if props[k].get("type") in ("array", "object"):
                        out.append(invalid(f"{_key(path + '.items', str(k))}.type", _shown(_s(items.get("type"))),
                                           "must be a scalar type if parent array's x-kubernetes-list-type is map"))
                else:
                    out.append(invalid(f"{path}.x-kubernetes-list-map-keys", _shown(keys),
                                       "entries must all be names of item properties"))
                if k in seen:
                    out.append(invalid(f"{path}.x-kubernetes-list-map-keys", _shown(keys),
                                       "must not contain duplicate entries"))
                seen.add(k)
    if opts.require_map_list_keys_map_set:
        out.extend(map_list_keys_map_set(s, path))
    return out


def map_list_keys_map_set(s: Obj, path: str) -> list[Cause]:
    """validateMapListKeysMapSet: set/map items not nullable; map keys required or defaulted, not nullable."""
    items, list_type = _items(s), s.get("x-kubernetes-list-type")
    if items is None or list_type not in ("set", "map"):
        return []
    out = []
    if items.get("nullable"):
        out.append(forbidden(f"{path}.items.nullable",
                             f"cannot be nullable when x-kubernetes-list-type is {list_type}"))
    if list_type == "map":
        required_keys = set(items.get("required") or []) if isinstance(items.get("required"), list) else set()
        props = _props(items)
        for k in _l(s.get("x-kubernetes-list-map-keys")):
            if k not in props:
                continue
            if k not in required_keys and props[k].get("default") is None:
                out.append(required(f"{_key(path + '.items', str(k))}.default", "this property is in "
                                    "x-kubernetes-list-map-keys, so it must have a default or be a required property"))
            if props[k].get("nullable"):
                out.append(forbidden(f"{_key(path + '.items', str(k))}.nullable", "this property is in "
                                     "x-kubernetes-list-map-keys, so it cannot be nullable"))
    return out


def _field_path_valid(s: Obj, field_path: str) -> bool:
    if "[" in field_path:
        return True  # array and map-key notation: not checked
    try:
        field_schema(field_path, s)
    except ValueError:
        return False
    return True


def _rule_fields(s: Obj, path: str) -> list[Cause]:
    out = []
    for i, rule in enumerate(_l(s.get("x-kubernetes-validations"))):
        rule, p = _d(rule), f"{path}.x-kubernetes-validations[{i}]"
        text, message, expr = _s(rule.get("rule")), _s(rule.get("message")), _s(rule.get("messageExpression"))
        if not text.strip():
            out.append(required(f"{p}.rule", "rule is not specified"))
        elif message and not message.strip():
            out.append(invalid(f"{p}.message", _shown(message), "message must be non-empty if specified"))
        elif _NEWLINE.search(message.strip()):
            out.append(invalid(f"{p}.message", _shown(message), "message must not contain line breaks"))
        elif _NEWLINE.search(text.strip()) and not message.strip():
            out.append(required(f"{p}.message", "message must be specified if rule contains line breaks"))
        if expr and not expr.strip():
            out.append(required(f"{p}.messageExpression", "messageExpression must be non-empty if specified"))
        reason = rule.get("reason")
        if reason is not None and reason not in VALIDATION_REASONS:
            out.append(not_supported(f"{p}.reason", str(reason), VALIDATION_REASONS))
        field_path = _s(rule.get("fieldPath"))
        if field_path and not field_path.strip():
            out.append(invalid(f"{p}.fieldPath", _shown(field_path), "fieldPath must be non-empty if specified"))
        if _NEWLINE.search(field_path):
            out.append(invalid(f"{p}.fieldPath", _shown(field_path), "fieldPath must not contain line breaks"))
        if field_path and not _field_path_valid(s, field_path):
            out.append(invalid(f"{p}.fieldPath", _shown(field_path), "fieldPath must be a valid path"))
    return out


def _compile(s: Obj, path: str, ctx: _Ctx, opts: Options) -> list[Cause]:
    out = []
    for i, rule in enumerate(_l(s.get("x-kubernetes-validations"))):
        rule, p = _d(rule), f"{path}.x-kubernetes-validations[{i}]"
        text, expr = _s(rule.get("rule")), _s(rule.get("messageExpression"))
        if not text.strip():
            continue
        failed = rules.compile_errors(text, s, ctx.resource_root, text not in opts.preexisting_expressions)
        if failed:
            out.append(invalid(f"{p}.rule", _rule_struct(rule), f"compilation failed: {failed}"))
        if expr.strip():
            expr_failed = rules.compile_errors(expr, s, ctx.resource_root, expr not in opts.preexisting_expressions)
            if expr_failed:
                out.append(invalid(f"{p}.messageExpression", _rule_struct(rule),
                                   f"messageExpression compilation failed: {expr_failed}"))
        if failed:
            continue
        if rules.uses_old_self(text):
            if ctx.uncorrelatable is not None:
                out.append(invalid(f"{p}.rule", _shown(text), "oldSelf cannot be used on the uncorrelatable portion "
                                   f"of the schema within {ctx.uncorrelatable}"))
        elif rule.get("optionalOldSelf") is not None:
            out.append(invalid(f"{p}.optionalOldSelf", _shown(rule.get("optionalOldSelf")),
                               "may not be set if oldSelf is not used in rule"))
    return out


def openapi_errors(s: Obj, path: str, ctx: _Ctx, opts: Options, is_root: bool = False) -> _Errors:
    """ValidateCustomResourceDefinitionOpenAPISchema for one node and everything under it."""
    errs = _Errors(_standard(s, path, ctx, opts))
    if s.get("uniqueItems") is True:
        errs.schema.append(forbidden(f"{path}.uniqueItems", "uniqueItems cannot be set to true since the runtime "
                                     "complexity becomes quadratic"))
    extra = s.get("additionalProperties")
    props = _props(s)
    if extra is not None:
        if props and (extra is False or isinstance(extra, dict)):
            errs.schema.append(forbidden(f"{path}.additionalProperties", "additionalProperties and properties are "
                                         "mutual exclusive"))
        if isinstance(extra, dict):
            sub = ctx.forbid_defaults("inside additionalProperties applying to object metadata") \
                if ctx.inside_meta else ctx.child()
            errs.add(openapi_errors(extra, f"{path}.additionalProperties", sub, opts))
    embedded = bool(s.get("x-kubernetes-embedded-resource"))
    for name, sub_schema in props.items():
        sub = ctx.child()
        if s.get("x-kubernetes-map-type") == "atomic":
            sub = sub.uncorrelated(path)
        if (is_root or embedded) and name in _META_FIELDS:
            sub = sub.child(inside_meta=True)
            if is_root:
                sub = sub.forbid_defaults(f"in top-level {name}")
        errs.add(openapi_errors(sub_schema, _key(path, name), sub, opts))
    junctor = ctx.child(cel=False)
    if isinstance(s.get("not"), dict):
        errs.add(openapi_errors(s["not"], f"{path}.not", junctor, opts))
    for key in ("allOf", "oneOf", "anyOf"):
        for i, sub_schema in enumerate(_l(s.get(key))):
            errs.add(openapi_errors(_d(sub_schema), f"{path}.{key}[{i}]", junctor, opts))
    for name, sub_schema in sorted(_d(s.get("definitions")).items()):
        errs.add(openapi_errors(_d(sub_schema), f"{path}.definitions[{name}]", junctor, opts))
    items = s.get("items")
    if items is not None:
        sub = ctx.child() if s.get("x-kubernetes-list-type") == "map" else ctx.child().uncorrelated(path)
        if isinstance(items, dict):
            errs.add(openapi_errors(items, f"{path}.items", sub, opts))
        elif isinstance(items, list):
            for i, item in enumerate(items):
                errs.add(openapi_errors(_d(item), f"{path}.items[{i}]", sub, opts))
    for name, dep in sorted(_d(s.get("dependencies")).items()):
        if isinstance(dep, dict):
            errs.add(openapi_errors(dep, f"{path}.dependencies[{name}]", junctor, opts))
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        errs.schema.append(invalid(f"{path}.x-kubernetes-preserve-unknown-fields", "false",
                                   "must be true or undefined"))
    errs.schema.extend(_list_rules(s, path, opts))
    if isinstance(s.get("x-kubernetes-validations"), list) and s["x-kubernetes-validations"]:
        errs.schema.extend(_rule_fields(s, path))
        if not errs.schema and ctx.cel:
            errs.cel.extend(_compile(s, path, ctx, opts))
    return errs


def _root(s: Obj, path: str, status_enabled: bool) -> list[Cause]:
    out = []
    if status_enabled:
        for key, value in s.items():
            if value in (None, False, "", [], {}, 0):
                continue
            if key == "type":
                if value != "object":
                    out.append(invalid(f"{path}.openAPIV3Schema.type", _shown(value), 'only "object" is allowed as '
                                       "the type at the root of the schema if the status subresource is enabled"))
                    break
                continue
            if key not in ROOT_FIELDS_WITH_STATUS:
                allowed = " ".join(ROOT_FIELDS_WITH_STATUS.values())
                out.append(invalid(f"{path}.openAPIV3Schema", "apiextensions.JSONSchemaProps{...}",
                                   f"only [{allowed}] fields are allowed at the root of the schema if the status "
                                   "subresource is enabled"))
                break
    if s.get("nullable") is True:
        out.append(forbidden(f"{path}.openAPIV3Schema.nullable", "nullable cannot be true at the root"))
    return out


def validate(schema: Any, path: str, status_enabled: bool, opts: Options | None = None,
             value_validator: ValueValidator | None = None) -> list[Cause]:
    """Field errors of one CRD schema (``schema``: the openAPIV3Schema dict; ``path``: ``spec.validation`` or
    ``spec.versions[i].schema``) as validateCustomResourceDefinitionValidation reports them (see module doc).

    ``status_enabled``: the status subresource is on for this version (for a hoisted schema: any version);
    ``value_validator`` validates defaults against their schemas (None: defaults are only checked for pruning).
    """
    if not isinstance(schema, dict):
        return []
    opts = opts or Options()
    base = f"{path}.openAPIV3Schema"
    out = _root(schema, path, status_enabled)
    cel = False
    if opts.require_structural:
        structural = structural_errors(schema, base)
        if structural:
            out.extend(structural)
        else:
            defaults = default_errors(schema, base, opts, value_validator)
            out.extend(defaults)
            cel = not defaults
    errs = openapi_errors(schema, base, _Ctx(cel=cel, resource_root=True), opts, is_root=True)
    return out + errs.schema + errs.cel


def _walk(s: Any) -> list[Obj]:
    """Every schema node under ``s`` (structural children, junctors, definitions), ``s`` first."""
    if not isinstance(s, dict):
        return []
    out = [s]
    children: list[Any] = list(_d(s.get("properties")).values()) + list(_d(s.get("definitions")).values())
    children += [s.get("additionalProperties"), s.get("not")]
    children += _l(s.get("items")) or [s.get("items")]
    for key in ("allOf", "anyOf", "oneOf"):
        children += _l(s.get(key))
    for child in children:
        out.extend(_walk(child))
    return out


def options_for_update(old_schemas: list[Any]) -> Options:
    """The rule families an update must meet, given the old CRD's schemas (kube's ratcheting)."""
    nodes = [n for s in old_schemas for n in _walk(s)]
    schemas = [s for s in old_schemas if isinstance(s, dict)]
    expressions: set[str] = set()
    for n in nodes:
        for rule in _l(n.get("x-kubernetes-validations")):
            expressions.update(v for v in (_d(rule).get("rule"), _d(rule).get("messageExpression"))
                               if isinstance(v, str))
    structural = not any(structural_errors(s, "") for s in schemas)
    unpruned = False
    if structural:
        loose = Options(require_pruned_defaults=True)
        unpruned = any(c.message.endswith("must not have unknown fields")
                       for s in schemas for c in default_errors(s, "", loose, None))
    return Options(
        require_valid_property_type=not any(n.get("type") and n.get("type") not in OPENAPI_TYPES for n in nodes),
        require_structural=structural,
        require_pruned_defaults=not unpruned,
        require_atomic_set_type=not any(_non_atomic_set(n) for n in nodes),
        require_map_list_keys_map_set=not any(map_list_keys_map_set(n, "") for n in nodes),
        preexisting_expressions=frozenset(expressions))


def _non_atomic_set(n: Obj) -> bool:
    """hasNonAtomicSetType for one node: a list-type set whose array/object items are not atomic."""
    items = _items(n)
    if n.get("x-kubernetes-list-type") != "set" or items is None:
        return False
    if items.get("type") == "array":
        return items.get("x-kubernetes-list-type") not in (None, "atomic")
    return items.get("type") == "object" and items.get("x-kubernetes-map-type") != "atomic"
