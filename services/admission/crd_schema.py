"""Custom resources in admission: the CRD's structural schema instead of kapi.schema (apiextensions-apiserver).

For a write to a resource served from a CustomResourceDefinition the
admission pipeline calls :func:`prepare_and_validate`, which does what
apiextensions-apiserver's decoder and ``customResourceStrategy`` do:

1. defaulting (``default`` of absent properties, recursively),
2. pruning of fields the schema does not declare (unless
   ``x-kubernetes-preserve-unknown-fields``; root ``apiVersion``/``kind``/
   ``metadata`` and those of ``x-kubernetes-embedded-resource`` objects are
   kept), reported through ``fieldValidation`` (Strict -> 400, Warn ->
   warnings) like unknown fields of built-in kinds,
3. prepare for create/update: generation 1 on create and +1 on a spec
   change; with the status subresource, status is dropped on create, kept
   from the stored object on a main-resource update, and only status
   changes through ``/status``,
4. validation with kube's messages: type, nullable, enum, pattern, formats,
   min/max, lengths, items, properties, required, ``x-kubernetes-int-or-
   string``, ``x-kubernetes-list-type`` (set/map) with ``-list-map-keys``,
   allOf/anyOf/oneOf/not, and ``x-kubernetes-validations`` CEL rules with
   ``self`` and (transition rules) ``oldSelf``; ObjectMeta as for every kind; on an update the
   validation ratchets (KEP-4008): errors of values unchanged from the stored object are dropped
   (:mod:`services.admission.crd_ratchet`).

Sources: "Extend the Kubernetes API with CustomResourceDefinitions"
(Specifying a structural schema, Field pruning, Defaulting, Validation
rules) and k8s.io/kube-openapi ``pkg/validation/validate`` messages.
"""

from __future__ import annotations

import ipaddress
import math
import re
import uuid as uuidlib
from datetime import datetime
from typing import Any

from kapi import crd, errors, goregexp, jsonutil, objectmeta, schema, strategy
from kapi.cel.engine import cel
from kapi.cel.library import escaped_value, runtime_error
from kapi.crd.defaults import default  # the defaulting the gateway also applies on reads
from kapi.crd.structural import field_value, go_json
from kapi.errors import Cause
from kapi.kinds.base import WHOLE_OBJECT_META, Obj, Strategy
from kapi.resources import Resource
from services.admission.chain import CREATE, AdmissionRequest
from services.admission.crd_ratchet import UNCORRELATED, Same, correlate_items, property_schema
from services.admission.informers import Informers
from services.admission.matching import evaluate_cel

Schema = dict[str, Any]
_TYPE_NAMES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer", float: "number",
               type(None): "null"}


class CustomResources:
    """Finds the CRD of a custom resource request: the cached CRD ``<resource>.<group>``, else a live read."""

    def __init__(self, informers: Informers):
        self.informers = informers

    async def crd_for(self, group: str, resource: str, timeout: float) -> dict[str, Any] | None:
        """The CRD serving ``group``/``resource`` (by its name ``<plural>.<group>``), or None."""
        if not group or "." not in group or not resource:
            return None
        found = await self.informers.lookup(crd.GROUP, crd.RESOURCE, "", f"{resource}.{group}", timeout)
        if found is None or crd.group(found) != group or crd.names(found).get("plural") != resource:
            return None
        return found


def resource_row(definition: dict[str, Any], version: str) -> Resource:
    """The resource-table row of ``version`` of a CRD (even before it is Established)."""
    n = crd.names(definition)
    subs = tuple(s for s in ("status", "scale") if s in crd.subresources(definition, version))
    return Resource(crd.group(definition), version, str(n.get("plural")), str(n.get("kind")),
                    crd.namespaced(definition), subresources=subs, singular_name=str(n.get("singular") or ""),
                    list_kind_name=str(n.get("listKind") or ""))


def _type_name(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), "object")


def _show(value: Any) -> str:
    """A value as kube's field errors print it: strings quoted, numbers plain, objects by type name."""
    if isinstance(value, (dict, list)):
        return f'"{_type_name(value)}"'
    return jsonutil.dumps(value).decode()


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# --- defaulting and pruning --------------------------------------------------------------------------------------


def prune(value: Any, sch: Schema, path: str = "", unknown: list[str] | None = None, root: bool = False) -> list[str]:
    """Remove fields ``sch`` does not declare, in place; returns their JSON paths (``spec.foo``) in order."""
    unknown = [] if unknown is None else unknown
    if not isinstance(sch, dict):
        return unknown
    if isinstance(value, dict):
        props = sch.get("properties") or {}
        extra = sch.get("additionalProperties")
        preserve = bool(sch.get("x-kubernetes-preserve-unknown-fields"))
        embedded = root or bool(sch.get("x-kubernetes-embedded-resource"))
        for key in list(value):
            if embedded and key in ("apiVersion", "kind", "metadata"):
                continue
            if key in props:
                prune(value[key], props[key], _join(path, key), unknown)
            elif isinstance(extra, dict):
                prune(value[key], extra, _join(path, key), unknown)
            elif not (preserve or extra is True):
                unknown.append(_join(path, key))
                del value[key]
    elif isinstance(value, list) and isinstance(sch.get("items"), dict):
        for i, item in enumerate(value):
            prune(item, sch["items"], f"{path}[{i}]", unknown)
    return unknown


# --- validation ---------------------------------------------------------------------------------------------------

_FORMATS: dict[str, Any] = {
    "int32": None, "int64": None, "float": None, "double": None, "byte": None, "password": None,
    "date": lambda s: bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}", s)) and _parses(datetime.fromisoformat, s),
    "date-time": lambda s: _parses(lambda t: datetime.fromisoformat(t.replace("Z", "+00:00")), s),
    "uuid": lambda s: _parses(uuidlib.UUID, s) and len(s) == 36,
    "ipv4": lambda s: _parses(ipaddress.IPv4Address, s),
    "ipv6": lambda s: _parses(ipaddress.IPv6Address, s),
    "cidr": lambda s: _parses(ipaddress.ip_network, s),
    "email": lambda s: bool(re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", s)),
    "hostname": lambda s: bool(re.fullmatch(r"[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]"
                                            r"{0,61}[A-Za-z0-9])?)*", s)) and len(s) <= 253,
    "uri": lambda s: bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", s)),
}


def _parses(parse: Any, text: str) -> bool:
    try:
        parse(text)
    except (ValueError, TypeError):
        return False
    return True


_MAX_JSON_FLOAT = float((1 << 53) - 1)


def _type_ok(value: Any, type_: str) -> bool:
    if type_ == "object":
        return isinstance(value, dict)
    if type_ == "array":
        return isinstance(value, list)
    if type_ == "string":
        return isinstance(value, str)
    if type_ == "boolean":
        return isinstance(value, bool)
    if type_ == "integer":  # a float only within +-(2^53-1) (go-openapi's IsFloat64AJSONInteger)
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer() and abs(value) <= _MAX_JSON_FLOAT)
    if type_ == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return True


def _set_key(value: Any) -> tuple[str, Any]:
    """validateListSet's identity of an item: a compound (object, array) by its JSON, a scalar by its Go type
    and value (an int64 ``1``, a float64 ``1.0`` and ``true`` are three different items)."""
    if isinstance(value, (dict, list)):
        return "json", go_json(value)
    if isinstance(value, bool):
        return "bool", value
    if isinstance(value, int):
        return "int64", value
    return type(value).__name__, value


_UNSPECIFIED = ("unspecified", None)  # an absent map key (or a null item): kube's unspecifiedKeyValue{}


def _non_unique(keys: list[tuple[str, Any]]) -> list[int]:
    """validateListSet: the index of each identity's second appearance (a third is not reported again)."""
    counts: dict[tuple[str, Any], int] = {}
    out: list[int] = []
    for i, key in enumerate(keys):
        counts[key] = counts.get(key, 0) + 1
        if counts[key] == 2:
            out.append(i)
    return out


def _duplicates(value: list[Any], sch: Schema, path: str) -> list[Cause]:
    """The causes of an ``x-kubernetes-list-type`` set or map list's duplicate items, as apiextensions'
    ``pkg/apiserver/schema/listtype/validation.go`` (validateListSet, validateListMap) reports them.

    set: ``<path>[i]: Duplicate value: <item>`` at each value's second appearance (``field.Duplicate`` of the
    item: ``"a"``, ``1``, ``{"a":1}``, :func:`error_value`). map: an item that is neither an object nor null is
    the one cause ``<path>[i]: Invalid value: <item>: must be an object for an array of list-type map``;
    otherwise each key tuple's second appearance is ``Duplicate value: <the item's keys as a JSON object>``
    (``{"name":"a"}``, ``{"a":1,"b":"x"}``; an absent key is left out, so ``{}``).
    """
    list_type = sch.get("x-kubernetes-list-type")
    if list_type == "set" or (list_type is None and sch.get("uniqueItems")):
        return [Cause("FieldValueDuplicate", f"Duplicate value: {field_value(value[i])}", f"{path}[{i}]")
                for i in _non_unique([_set_key(item) for item in value])]
    if list_type != "map":
        return []
    for i, item in enumerate(value):
        if item is not None and not isinstance(item, dict):
            return [Cause("FieldValueInvalid", f"Invalid value: {field_value(item)}: must be an object for an "
                          "array of list-type map", f"{path}[{i}]")]
    keys = [str(k) for k in sch.get("x-kubernetes-list-map-keys") or []]
    shown = [{k: item[k] for k in keys if k in item} if isinstance(item, dict) else {} for item in value]
    if len(keys) == 1:
        ident = [_set_key(s[keys[0]]) if keys[0] in s else _UNSPECIFIED for s in shown]
    else:
        ident = [_set_key(s) for s in shown]
    return [Cause("FieldValueDuplicate", f"Duplicate value: {go_json(shown[i])}", f"{path}[{i}]")
            for i in _non_unique(ident)]


def _has_duplicates(value: Any, sch: Any, root: bool = False) -> bool:
    """Whether a stored object has a duplicate in any set or map list (structurallisttype.ValidateListSetsAndMaps
    over the old object: kube reports the new object's duplicates only when the old one had none)."""
    if not isinstance(sch, dict):
        return False
    if isinstance(value, dict):
        embedded = root or bool(sch.get("x-kubernetes-embedded-resource"))
        return any(_has_duplicates(item, property_schema(sch, key)) for key, item in value.items()
                   if not (embedded and key == "metadata"))
    if isinstance(value, list):
        return bool(_duplicates(value, sch, "")) or any(_has_duplicates(item, sch.get("items")) for item in value)
    return False


class Validator:
    """Validates one object against a structural schema, collecting kube-style field causes.

    On an update (KEP-4008 ratcheting) :meth:`validate` gets each node's correlated stored value as
    ``prior``: the schema causes of a value equal to it are dropped, and a failing rule that does not use
    ``oldSelf`` on such a value becomes a warning (``<path>: <message>``, in :attr:`warnings`) instead of a
    cause, as apiextensions-apiserver's ratcheting validators do (see :mod:`services.admission.crd_ratchet`).
    """

    def __init__(self) -> None:
        self.causes: list[Cause] = []
        self.warnings: list[str] = []
        self._sticky: list[str] = []  # per cause: "" (schema, ratcheted), "rule" (never), "dup" (list-type)
        # the nodes whose x-kubernetes-validations run in :meth:`run_rules`, parents before children
        self._pending: list[tuple[Any, Schema, str, Any, bool, Same | None]] = []

    def _add(self, cause: Cause, kind: str = "") -> None:
        self.causes.append(cause)
        self._sticky.append(kind)

    def _invalid(self, path: str, value: Any, detail: str) -> None:
        self._add(Cause("FieldValueInvalid", f"Invalid value: {_show(value)}: {detail}", path))

    def _type_invalid(self, path: str, value: Any, detail: str) -> None:
        """kube-openapi's InvalidTypeCode (a wrong type, a null, a bad format), which apiextensions'
        kubeOpenAPIResultToFieldErrors makes a ``field.TypeInvalid`` (reason ``FieldValueTypeInvalid``)."""
        self._add(Cause("FieldValueTypeInvalid", f"Invalid value: {_show(value)}: {detail}", path))

    def _ratchet(self, before: int) -> None:
        """Drop the schema causes added since ``before`` (the value they are about is unchanged)."""
        keep = [(c, k) for c, k in zip(self.causes[before:], self._sticky[before:], strict=True) if k]
        del self.causes[before:], self._sticky[before:]
        for cause, kind in keep:
            self._add(cause, kind)

    def drop_duplicates(self) -> None:
        """Drop the ``x-kubernetes-list-type`` duplicate causes (the stored object had some already)."""
        keep = [(c, k) for c, k in zip(self.causes, self._sticky, strict=True) if k != "dup"]
        self.causes, self._sticky = [c for c, _ in keep], [k for _, k in keep]

    def keep_schema_causes_under(self, field: str | None) -> None:
        """Drop the schema causes outside ``field`` (its own and its descendants'; None: drop them all)."""
        def under(path: str) -> bool:
            return field is not None and (path == field or path.startswith((field + ".", field + "[")))

        keep = [(c, k) for c, k in zip(self.causes, self._sticky, strict=True) if k or under(c.field)]
        self.causes, self._sticky = [c for c, _ in keep], [k for _, k in keep]

    def validate(self, value: Any, sch: Schema, path: str, old: Any = None, has_old: bool = False,
                 root: bool = False, prior: Any = UNCORRELATED, parent: Same | None = None) -> None:
        """Check ``value`` at JSON path ``path`` (``old``: the stored value at the same path, for oldSelf;
        ``prior``: the correlated stored value for ratcheting, ``parent``: the nearest correlated ancestor's
        equality when this node has no ``prior``)."""
        if not isinstance(sch, dict):
            return
        before = len(self.causes)
        slot = len(self._pending)
        same = Same(value, prior, sch) if prior is not UNCORRELATED else parent
        checked = self._check(value, sch, path, old, has_old, root, prior, same)
        if same is not None and len(self.causes) > before and same():
            self._ratchet(before)
        if checked and sch.get("x-kubernetes-validations"):
            self._pending.insert(slot, (value, sch, path, old, has_old, same))  # before its children's

    def _check(self, value: Any, sch: Schema, path: str, old: Any, has_old: bool, root: bool, prior: Any,
               same: Same | None) -> bool:
        """The schema checks of one node and its subtree; False when the value is null or of the wrong type
        (its rules are not evaluated)."""
        if value is None:
            if not sch.get("nullable") and sch.get("type"):
                self._type_invalid(path, "null", f'{path} in body must be of type {sch["type"]}: "null"')
            return False
        if sch.get("x-kubernetes-int-or-string"):
            if not (isinstance(value, (int, str)) and not isinstance(value, bool)):
                self._type_invalid(path, _type_name(value), f'{path} in body must be of type integer,string: '
                                                            f'"{_type_name(value)}"')
                return False
        elif sch.get("type") and not _type_ok(value, str(sch["type"])):
            self._type_invalid(path, _type_name(value), f'{path} in body must be of type {sch["type"]}: '
                                                        f'"{_type_name(value)}"')
            return False
        self._scalar(value, sch, path)
        if isinstance(value, dict):
            self._object(value, sch, path, old if isinstance(old, dict) else None, has_old, root, prior, same)
        elif isinstance(value, list):
            self._array(value, sch, path, old if isinstance(old, list) else None, has_old, prior, same)
        self._combinators(value, sch, path, prior, same)
        return True

    def _scalar(self, value: Any, sch: Schema, path: str) -> None:
        if "enum" in sch and isinstance(sch["enum"], list) and value not in sch["enum"]:
            supported = ", ".join(_show(v) for v in sch["enum"])
            self._add(Cause("FieldValueNotSupported",
                            f"Unsupported value: {_show(value)}: supported values: {supported}", path))
        if isinstance(value, str):
            if isinstance(sch.get("maxLength"), int) and len(value) > sch["maxLength"]:
                self._add(Cause("FieldValueTooLong", f"Too long: may not be more than {sch['maxLength']} "
                                "bytes", path))
            if isinstance(sch.get("minLength"), int) and len(value) < sch["minLength"]:
                self._invalid(path, value, f"{path} in body should be at least {sch['minLength']} chars long")
            if isinstance(sch.get("pattern"), str) and goregexp.search(sch["pattern"], value) is False:  # RE2: linear
                self._invalid(path, value, f"{path} in body should match '{sch['pattern']}'")
            check = _FORMATS.get(str(sch.get("format") or ""))
            if check is not None and not check(value):
                self._type_invalid(path, value, f'{path} in body must be of type {sch["format"]}: {_show(value)}')
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            for key, excl, word in (("minimum", "exclusiveMinimum", "greater than"),
                                    ("maximum", "exclusiveMaximum", "less than")):
                bound = sch.get(key)
                if not isinstance(bound, (int, float)):
                    continue
                exclusive = sch.get(excl) is True
                bad = (value <= bound if exclusive else value < bound) if key == "minimum" else (
                    value >= bound if exclusive else value > bound)
                if bad:
                    self._invalid(path, value, f"{path} in body should be {word}{'' if exclusive else ' or equal to'}"
                                               f" {_show(bound)}")
            multiple = sch.get("multipleOf")
            if isinstance(multiple, (int, float)) and multiple and not math.isclose(value / multiple,
                                                                                     round(value / multiple)):
                self._invalid(path, value, f"{path} in body should be a multiple of {_show(multiple)}")

    def _object(self, value: dict[str, Any], sch: Schema, path: str, old: dict[str, Any] | None, has_old: bool,
                root: bool, prior: Any = UNCORRELATED, same: Same | None = None) -> None:
        props = sch.get("properties") or {}
        for key in sch.get("required") or []:
            if key not in value:
                self._add(Cause("FieldValueRequired", "Required value", _join(path, key)))
        if isinstance(sch.get("maxProperties"), int) and len(value) > sch["maxProperties"]:
            self._add(Cause("FieldValueTooMany", f"Too many: {len(value)}: must have at most "
                            f"{sch['maxProperties']} items", path))
        if isinstance(sch.get("minProperties"), int) and len(value) < sch["minProperties"]:
            self._invalid(path, len(value), f"{path} in body should have at least {sch['minProperties']} properties")
        extra = sch.get("additionalProperties")
        for key, item in value.items():
            if (root or sch.get("x-kubernetes-embedded-resource")) and key == "metadata":
                continue
            sub = props.get(key) if key in props else (extra if isinstance(extra, dict) else None)
            if isinstance(sub, dict):
                has = has_old and old is not None and key in old
                # ratcheting: the stored value of the same key; the root's apiVersion/kind never ratchet
                # (kube converts both objects to the request's version)
                typemeta = root and key in ("apiVersion", "kind")
                child = prior[key] if isinstance(prior, dict) and key in prior and not typemeta else UNCORRELATED
                self.validate(item, sub, _join(path, key), old.get(key) if has and old is not None else None, has,
                              prior=child, parent=None if typemeta else same)
        if sch.get("x-kubernetes-embedded-resource"):
            for key in ("apiVersion", "kind"):
                if not value.get(key):
                    self._add(Cause("FieldValueRequired", "Required value: must not be empty", _join(path, key)))

    def _array(self, value: list[Any], sch: Schema, path: str, old: list[Any] | None, has_old: bool,
               prior: Any = UNCORRELATED, same: Same | None = None) -> None:
        if isinstance(sch.get("maxItems"), int) and len(value) > sch["maxItems"]:
            self._add(Cause("FieldValueTooMany", f"Too many: {len(value)}: must have at most "
                            f"{sch['maxItems']} items", path))
        if isinstance(sch.get("minItems"), int) and len(value) < sch["minItems"]:
            self._invalid(path, len(value), f"{path} in body should have at least {sch['minItems']} items")
        for cause in _duplicates(value, sch, path):
            self._add(cause, "dup")
        list_type = sch.get("x-kubernetes-list-type")
        keys = [str(k) for k in sch.get("x-kubernetes-list-map-keys") or []]
        items = sch.get("items")
        if isinstance(items, dict):
            old_by_key: dict[Any, Any] = {}
            if old is not None and list_type == "map":
                old_by_key = {tuple(o.get(k) for k in keys): o for o in old if isinstance(o, dict)}
            priors = correlate_items(value, prior, sch)
            for i, item in enumerate(value):
                if list_type == "map" and isinstance(item, dict):
                    ident = tuple(item.get(k) for k in keys)
                    self.validate(item, items, f"{path}[{i}]", old_by_key.get(ident), has_old and ident in old_by_key,
                                  prior=priors[i], parent=same)
                else:
                    self.validate(item, items, f"{path}[{i}]", prior=priors[i], parent=same)

    def _combinators(self, value: Any, sch: Schema, path: str, prior: Any = UNCORRELATED,
                     same: Same | None = None) -> None:
        def passes(sub: Any) -> bool:
            probe = Validator()
            probe.validate(value, sub, path)
            return not probe.causes

        for sub in sch.get("allOf") or []:
            self.validate(value, sub, path, prior=prior, parent=same)
        any_of = sch.get("anyOf")
        if isinstance(any_of, list) and any_of and not any(passes(s) for s in any_of):
            self._invalid(path, value, f"{path} in body must validate at least one schema (anyOf)")
        one_of = sch.get("oneOf")
        if isinstance(one_of, list) and one_of and sum(1 for s in one_of if passes(s)) != 1:
            self._invalid(path, value, f"{path} in body must validate one and only one schema (oneOf)")
        if isinstance(sch.get("not"), dict) and passes(sch["not"]):
            self._invalid(path, value, f"{path} in body should not be valid against the schema (not)")

    def run_rules(self) -> None:
        """Evaluate the ``x-kubernetes-validations`` of every node :meth:`validate` checked (non-null, of its
        type), parents before children, adding their causes (or, on ratcheted values, :attr:`warnings`)."""
        pending, self._pending = self._pending, []
        for value, sch, path, old, has_old, same in pending:
            self._rules(value, sch, path, old, has_old, same)

    def _rule_error(self, exc: BaseException, rule: Schema, sch: Schema, path: str) -> None:
        """A rule whose evaluation failed: a field error, as apiextensions' validateExpressions words it, with
        the schema's type as the value (``Invalid value: "object": division by zero evaluating rule: ...``)."""
        shown = str(rule.get("message") or "").strip() or str(rule["rule"]).strip()
        type_ = f'"{sch.get("type") or ""}"'
        err = runtime_error(exc)
        if err is None:
            detail = f"compilation failed: {exc}"
        elif err.startswith("no such overload"):
            detail = f"'{err}': call arguments did not match a supported operator, function or macro signature " \
                     f"for rule: {shown}"
        else:
            detail = f"{err} evaluating rule: {shown}"
        self._add(Cause("FieldValueInvalid", f"Invalid value: {type_}: {detail}", path), "rule")

    def _rules(self, value: Any, sch: Schema, path: str, old: Any, has_old: bool, same: Same | None = None) -> None:
        for rule in sch.get("x-kubernetes-validations") or []:
            if not isinstance(rule, dict) or not isinstance(rule.get("rule"), str):
                continue
            expression = rule["rule"]
            transition = re.search(r"\boldSelf\b", expression) is not None
            if transition and not has_old and not rule.get("optionalOldSelf"):
                continue
            env: dict[str, Any] = {"self": escaped_value(value, sch)}  # self.__namespace__, a__dash__b
            if transition and rule.get("optionalOldSelf") is True:  # oldSelf is optional.of(old) or none()
                env["oldSelf"] = cel.OptionalValue.of(escaped_value(old, sch)) if has_old else \
                    cel.OptionalValue.none()
            elif transition:
                env["oldSelf"] = escaped_value(old, sch)
            try:
                ok = evaluate_cel(expression, env) is True
            except (ArithmeticError, LookupError, ValueError, TypeError, RuntimeError) as exc:
                self._rule_error(exc, rule, sch, path)
                continue
            if ok:
                continue
            message = str(rule.get("message") or "").strip() or f"failed rule: {expression.strip()}"
            if rule.get("messageExpression"):  # evalMessageExpression: a trimmed, non-empty, one-line string
                try:
                    result = evaluate_cel(str(rule["messageExpression"]), env)
                except (ArithmeticError, LookupError, ValueError, TypeError, RuntimeError):
                    result = None
                if isinstance(result, str) and result.strip() and "\n" not in result.strip():
                    message = result.strip()
            field_path = path + str(rule.get("fieldPath") or "") if rule.get("fieldPath") else path
            reason, text = rule_failure(value, sch, message, rule.get("reason"))
            if not transition and same is not None and same():  # ratcheted: kube's warning.AddWarning(e.Error())
                self.warnings.append(f"{field_path or '<nil>'}: {text}")
                continue
            self._add(Cause(reason, text, field_path), "rule")


def rule_value(value: Any, sch: Schema) -> str | None:
    """The bad value of a failed ``x-kubernetes-validations`` rule as ``field.Error.ErrorBody`` prints it, or None
    when kube omits it.

    Since kube 1.35 (kubernetes/kubernetes#132798, #133832; apiextensions-apiserver
    ``pkg/apiserver/schema/cel/validation.go`` validateExpressions) the value is the node's own value, but
    ``field.OmitValueType{}`` for a schema of type ``object`` or ``array``. ErrorBody (apimachinery
    ``pkg/util/validation/field/errors.go``) prints strings ``%q`` (``"legacy"``), int64 and float64 ``%v``
    (``3``, ``1.5``, ``1e+06``), booleans ``true``/``false`` and anything else (an untyped map or list,
    ``x-kubernetes-preserve-unknown-fields``) as ``json.Marshal`` does (``{"a":1}``).
    """
    if sch.get("type") in ("object", "array"):
        return None
    return field_value(value)


def rule_failure(value: Any, sch: Schema, message: str, reason: Any = None) -> tuple[str, str]:
    """The cause reason and message of a rule that evaluated to false (``message``: the rule's message,
    messageExpression result or ``failed rule: <rule>``), as fieldErrorForReason builds them: ``reason``
    FieldValueForbidden -> ``Forbidden: <message>``, FieldValueRequired -> ``Required value: <message>``,
    FieldValueDuplicate -> ``Duplicate value: <value>`` (``field.Duplicate`` has no detail: the message is
    dropped) or ``Duplicate value`` for an object/array, anything else FieldValueInvalid ->
    ``Invalid value: <value>: <message>`` or ``Invalid value: <message>`` (:func:`rule_value`)."""
    if reason == "FieldValueForbidden":
        return reason, f"Forbidden: {message}"
    if reason == "FieldValueRequired":
        return reason, f"Required value: {message}"
    shown = rule_value(value, sch)
    if reason == "FieldValueDuplicate":
        return reason, "Duplicate value" if shown is None else f"Duplicate value: {shown}"
    return "FieldValueInvalid", f"Invalid value: {message}" if shown is None else f"Invalid value: {shown}: {message}"


#: The cause types apiextensions' hasBlockingErr (pkg/registry/customresource/strategy.go) stops CEL on.
BLOCKING = frozenset({"FieldValueNotSupported", "FieldValueRequired", "FieldValueTooLong", "FieldValueTooMany",
                      "FieldValueTypeInvalid"})

#: hasBlockingErr's one error instead of the rules: ``field.Invalid(nil, nil, ...)`` (a nil path prints
#: ``<nil>``, a nil value ``null``).
RULES_NOT_CHECKED = Cause("FieldValueInvalid", "Invalid value: null: some validation rules were not checked because "
                          "the object was invalid; correct the existing errors to complete validation", "<nil>")


def has_rules(sch: Any) -> bool:
    """Whether a structural schema has ``x-kubernetes-validations`` anywhere (cel.NewValidator's hasXValidations:
    the node, ``items``, ``properties``, ``additionalProperties``, ``allOf``)."""
    if not isinstance(sch, dict):
        return False
    if sch.get("x-kubernetes-validations"):
        return True
    props = sch.get("properties")
    return (has_rules(sch.get("items")) or has_rules(sch.get("additionalProperties"))
            or (isinstance(props, dict) and any(has_rules(p) for p in props.values()))
            or any(has_rules(a) for a in sch.get("allOf") or []))


def validate(obj: dict[str, Any], sch: Schema, old: dict[str, Any] | None = None,
             warnings: list[str] | None = None, status_only: bool = False,
             prior: list[Cause] | None = None) -> list[Cause]:
    """Field causes of ``obj`` against a CRD version's ``openAPIV3Schema`` (``old``: the stored object).

    The schema's ``x-kubernetes-validations`` run after every schema check, and only when no cause (``prior``:
    the object's metadata causes, or these) is blocking (:data:`BLOCKING`); otherwise, when the schema has
    rules, the one :data:`RULES_NOT_CHECKED` cause is added instead (apiextensions-apiserver
    ``pkg/registry/customresource/strategy.go`` and ``status_strategy.go``, hasBlockingErr).

    With ``old`` (an update) validation ratchets (KEP-4008, apiextensions-apiserver
    ``pkg/registry/customresource/strategy.go`` ValidateUpdate): schema errors of values unchanged from
    ``old`` are dropped, failing rules without ``oldSelf`` on unchanged values are appended to
    ``warnings`` instead, and duplicate set/map-list items are reported only when ``old`` had none.
    ``status_only`` (a ``/status`` write, ``status_strategy.go`` / ValidateStatusUpdate): the schema checks
    are those of ``status`` alone (when the object has one); list duplicates and rules cover the whole object.
    """
    validator = Validator()
    validator.validate(obj, sch, "", old, old is not None, root=True,
                       prior=old if old is not None else UNCORRELATED)
    if old is not None and _has_duplicates(old, sch, root=True):
        validator.drop_duplicates()
    if status_only:
        validator.keep_schema_causes_under("status" if "status" in obj else None)
    if has_rules(sch):
        if any(c.type in BLOCKING for c in [*(prior or []), *validator.causes]):
            validator.causes.append(RULES_NOT_CHECKED)
        else:
            validator.run_rules()
    if warnings is not None:
        warnings.extend(validator.warnings)
    return validator.causes


def value_causes(value: Any, sch: Schema) -> list[Cause]:
    """Field causes of a bare value (a schema ``default``) against ``sch``, paths relative to it ("" = itself).

    Messages read as kube-openapi's for a validator rooted at the value (`` in body must be of type ...``);
    used by kapi.crd.openapi to validate defaults at CRD create/update. As apiextensions-apiserver's
    ``pkg/apiserver/schema/defaulting/validation.go`` validate: the schema errors if any; else the
    ``x-kubernetes-validations`` with the default as both the new and the old value (transition rules run,
    ``oldSelf`` equal to ``self``; never ratcheted); and only when those pass, once more as a create (old
    nil: ``optionalOldSelf`` rules see ``optional.none()``, other ``oldSelf`` rules are skipped).
    """
    validator = Validator()
    validator.validate(value, sch, "")
    if validator.causes:  # apiextensions validateDefaults: CEL only on a default without schema errors
        return validator.causes
    # first the default as both the new and the old value (transition rules see oldSelf == self)
    rules = Validator()
    rules.validate(value, sch, "", value, True)
    rules.run_rules()
    if rules.causes:
        return rules.causes
    # then, when all passed, as an update from nothing (CRDValidationRatcheting, GA): optionalOldSelf
    # rules see oldSelf == optional.none(), other transition rules do not run
    fresh = Validator()
    fresh.validate(value, sch, "")
    fresh.run_rules()
    return fresh.causes


# --- the admission step ------------------------------------------------------------------------------------------


class CustomResourceStrategy(Strategy):
    """A custom resource's ``/status`` rules (apiextensions-apiserver ``pkg/registry/customresource/strategy.go``
    statusStrategy.PrepareForUpdate): the new object is the stored one but for its ``status`` and managedFields,
    so a ``/status`` write changes no label, annotation, finalizer, ownerReference nor any field outside
    ``status`` (apiVersion and kind stay the request's: kube converts the stored object to the request's
    version first)."""

    status_reset_metadata = WHOLE_OBJECT_META

    def prepare_for_update(self, new: Obj, old: Obj, subresource: str = "", *, now: datetime | None = None) -> None:
        """``/status``: every top-level field but ``status``, ``metadata``, ``apiVersion`` and ``kind`` taken from
        ``old`` (the generic step already took ``spec`` and :attr:`status_reset_metadata`)."""
        if subresource != "status":
            return
        keep = ("status", "metadata", "apiVersion", "kind")
        for key in [k for k in new if k not in keep and k not in old]:
            del new[key]
        for key, value in old.items():
            if key not in keep:
                new[key] = value


_CUSTOM_RESOURCE = CustomResourceStrategy()


def _spec_changed(new: dict[str, Any], old: dict[str, Any], with_status: bool) -> bool:
    def body(o: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in o.items() if k not in ("metadata", "status" if with_status else "metadata",
                                                         "apiVersion", "kind")}
    return body(new) != body(old)


def prepare_and_validate(request: AdmissionRequest, definition: dict[str, Any], field_validation: str,
                         options_kind: str, now: datetime) -> None:
    """Default, prune, prepare and validate ``request.object`` of a custom resource; raises 400/422.

    Sets ``request.object`` to the object to store and adds unknown-field
    warnings to ``request.warnings``.
    """
    assert request.object is not None
    resource = request.resource
    sch = crd.schema(definition, resource.version) or {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    with_status = "status" in resource.subresources
    obj = request.object
    default(obj, sch)
    unknown = prune(obj, sch, root=True)
    if request.operation == CREATE:
        obj = strategy.prepare_for_create(obj, resource, request.namespace, now)
        obj.setdefault("metadata", {})["generation"] = 1
        if with_status:
            obj.pop("status", None)
    else:
        old = request.old_object or {}
        obj = strategy.prepare_for_update(obj, old, resource, subresource=request.subresource, kind=_CUSTOM_RESOURCE)
        generation = (old.get("metadata") or {}).get("generation")
        generation = generation if isinstance(generation, int) else 1
        if request.subresource != "status" and _spec_changed(obj, old, with_status):
            generation += 1
        obj.setdefault("metadata", {})["generation"] = generation
    request.object = obj
    decoded = options_kind != "PatchOptions"
    request.warnings.extend(schema.apply_field_validation(unknown, field_validation, options_kind,
                                                          kind=resource.kind if decoded else "",
                                                          version=resource.version))
    causes = objectmeta.validate_object_meta(obj, resource, request.operation == CREATE, old=request.old_object)
    causes.extend(validate(obj, sch, request.old_object, request.warnings,
                           status_only=request.operation != CREATE and request.subresource == "status", prior=causes))
    if causes:
        meta = obj.get("metadata") or {}
        name = meta.get("name") or request.attributes.name or ""
        raise errors.invalid(resource.kind, name if isinstance(name, str) else "", causes, resource.group)
