"""Field-error constructors and Go value formatting shared by every kind's validation (no per-kind knowledge).

kube's validation reports ``field.Error`` values
(k8s.io/apimachinery ``pkg/util/validation/field/errors.go``); the
message is ``<Type>: <value>: <detail>`` where the value is printed as Go
prints it: strings quoted, numbers and booleans plain, a pointer whose
type has ``String()`` (``*metav1.LabelSelector``) through that method,
anything else as ``%#v``. :func:`kapi.objectmeta.invalid`,
:func:`~kapi.objectmeta.required` and :func:`~kapi.objectmeta.forbidden`
cover the common cases; this module adds the rest and the Go renderings the
kinds need.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from kapi import objectmeta
from kapi.errors import Cause
from kapi.objectmeta import forbidden, invalid, required, validate_labels
from kapi.selectors import SelectorError, label_selector_matches
from kapi.validation import is_qualified_name, is_valid_label_value, max_len_error, regex_error
from kapi.values import as_dict as _dict
from kapi.values import as_list as _list
from kapi.values import as_str as _text

IMMUTABLE = "field is immutable"  # apivalidation.FieldImmutableErrorMsg

Obj = dict[str, Any]


go_quote = objectmeta.go_quote  # Go's strconv.Quote
go_value = objectmeta.bad_value  # a scalar as field.Error prints it (nil: "null", quoted, as kube)


def go_string_map(value: Any) -> str:
    """A map[string]string as Go's %#v prints it (keys sorted); ``map[string]string(nil)`` when absent."""
    if not isinstance(value, dict):
        return "map[string]string(nil)"
    return "map[string]string{" + ", ".join(f"{go_value(k)}:{go_value(v)}" for k, v in sorted(value.items())) + "}"


def go_strings(values: Any) -> str:
    """A []string as Go's %#v prints it: ``[]string{"a", "b"}``, ``[]string(nil)`` when absent."""
    if not isinstance(values, list):
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_value(v) for v in values) + "}"


def selector_string(selector: Any) -> str:
    """A ``*metav1.LabelSelector`` as its generated ``String()`` prints it (what field.Invalid shows for one).

    ``{"matchLabels": {"a": "b"}}`` -> ``&LabelSelector{MatchLabels:map[string]string{a: b,},
    MatchExpressions:[]LabelSelectorRequirement{},}`` (without the line break); ``nil`` -> ``"null"`` (a nil
    pointer is printed as the quoted string).
    """
    if not isinstance(selector, dict):
        return '"null"'
    labels = "".join(f"{k}: {v}," for k, v in sorted(_dict(selector.get("matchLabels")).items()))
    exprs = ""
    for expr in selector.get("matchExpressions") or []:
        expr = _dict(expr)
        values = " ".join(str(v) for v in expr.get("values") or [])
        exprs += (f"LabelSelectorRequirement{{Key:{expr.get('key', '')},Operator:{expr.get('operator', '')},"
                  f"Values:[{values}],}},")
    return (f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},"
            f"MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}")


def not_supported(path: str, value: Any, supported: Iterable[str]) -> Cause:
    """field.NotSupported: ``Unsupported value: "x": supported values: "a", "b"``."""
    allowed = ", ".join(f'"{v}"' for v in supported)
    return Cause("FieldValueNotSupported", f"Unsupported value: {go_value(value)}: supported values: {allowed}", path)


def not_found(path: str, value: Any) -> Cause:
    """field.NotFound: ``Not found: "x"``."""
    return Cause("FieldValueNotFound", f"Not found: {go_value(value)}", path)


def duplicate(path: str, value: Any) -> Cause:
    """field.Duplicate: ``Duplicate value: "x"``."""
    return Cause("FieldValueDuplicate", f"Duplicate value: {go_value(value)}", path)


def too_long_total(path: str, max_bytes: int) -> Cause:
    """field.TooLong for a total size: ``Too long: must have at most <n> bytes``."""
    return Cause("FieldValueTooLong", f"Too long: must have at most {max_bytes} bytes", path)


def too_many(path: str, actual: int, maximum: int) -> Cause:
    """field.TooMany: ``Too many: <n>: must have at most <max> items``."""
    return Cause("FieldValueTooMany", f"Too many: {actual}: must have at most {maximum} items", path)


def immutable(path: str, value: Any) -> Cause:
    """apivalidation.ValidateImmutableField's ``Invalid value: <value>: field is immutable``.

    ``value`` is the new value; a scalar is printed as field.Error does, anything else as ``str(value)``
    (callers pass the Go rendering they need, e.g. :func:`selector_string`).
    """
    return invalid(path, value if isinstance(value, (str, int, bool)) or value is None else str(value), IMMUTABLE)


def immutable_shown(path: str, shown: str) -> Cause:
    """Like :func:`immutable` with ``shown`` already rendered as Go prints the value (not quoted again)."""
    return Cause("FieldValueInvalid", f"Invalid value: {shown}: {IMMUTABLE}", path)


def selector_matches(selector: Obj, labels: Obj) -> bool | None:
    """Whether a metav1.LabelSelector selects ``labels``; None when it cannot be evaluated (bad operator)."""
    try:
        return label_selector_matches(selector, labels)
    except SelectorError:
        return None


def _at(obj: Any, parts: tuple[str, ...]) -> Any:
    for part in parts:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(part)
    return obj


def field_value(*parts: str) -> Callable[[Obj], str]:
    """A selectable field's getter: the value at ``parts`` as a string (booleans ``true``/``false``; "" if absent)."""
    def get(obj: Obj) -> str:
        value = _at(obj, parts)
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    return get


def flag_value(*parts: str) -> Callable[[Obj], str]:
    """A boolean selectable field: ``true`` when the value at ``parts`` is set and truthy, else ``false``."""
    return lambda obj: "true" if _at(obj, parts) else "false"


CONDITION_STATUSES = ("False", "True", "Unknown")  # sets.List: sorted
CONDITION_REASON_FMT = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
CONDITION_REASON_MSG = ("a condition reason must start with alphabetic character, optionally followed by a string "
                        "of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'")
_CONDITION_REASON = re.compile(CONDITION_REASON_FMT)
MAX_CONDITION_REASON = 1024
MAX_CONDITION_MESSAGE = 32768


def validate_conditions(conditions: Any, path: str) -> list[Cause]:
    """metav1validation.ValidateConditions on ``[]metav1.Condition``: no type twice (``Duplicate value``), then
    each condition: type a qualified name, status True/False/Unknown, observedGeneration not negative,
    ``lastTransitionTime: Required value: must be set``, ``reason: Required value: must be set`` or the reason
    format (at most 1024 characters), message at most 32768."""
    out: list[Cause] = []
    seen: set[Any] = set()
    for i, condition in enumerate(conditions if isinstance(conditions, list) else []):
        condition, cpath = _dict(condition), f"{path}[{i}]"
        kind = _text(condition.get("type"))
        if kind in seen:
            out.append(duplicate(f"{cpath}.type", kind))
        seen.add(kind)
        out.extend(invalid(f"{cpath}.type", kind, m) for m in is_qualified_name(kind))
        status = _text(condition.get("status"))
        if status not in CONDITION_STATUSES:
            out.append(not_supported(f"{cpath}.status", status, CONDITION_STATUSES))
        generation = condition.get("observedGeneration")
        if isinstance(generation, int) and generation < 0:
            out.append(invalid(f"{cpath}.observedGeneration", generation, "must be greater than or equal to zero"))
        if not condition.get("lastTransitionTime"):
            out.append(objectmeta.required(f"{cpath}.lastTransitionTime", "must be set"))
        reason = _text(condition.get("reason"))
        if not reason:
            out.append(objectmeta.required(f"{cpath}.reason", "must be set"))
        else:
            if not _CONDITION_REASON.fullmatch(reason):
                out.append(invalid(f"{cpath}.reason", reason, regex_error(
                    CONDITION_REASON_MSG, CONDITION_REASON_FMT, "my_name", "MY_NAME", "MyName", "ReasonA,ReasonB",
                    "ReasonA:ReasonB")))
            if len(reason) > MAX_CONDITION_REASON:
                out.append(Cause("FieldValueTooLong", f"Too long: may not be more than {MAX_CONDITION_REASON} bytes",
                                 f"{cpath}.reason"))
        message = condition.get("message")
        if isinstance(message, str) and len(message) > MAX_CONDITION_MESSAGE:
            out.append(Cause("FieldValueTooLong", f"Too long: may not be more than {MAX_CONDITION_MESSAGE} bytes",
                             f"{cpath}.message"))
    return out


def is_valid_port_name(name: str) -> list[str]:
    """validation.IsValidPortName (IANA_SVC_NAME): at most 15 of ``[-a-z0-9]``, a letter, no ``--``, no edge ``-``."""
    out: list[str] = []
    if len(name) > 15:
        out.append(max_len_error(15))
    if not re.fullmatch(r"[-a-z0-9]+", name):
        out.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search(r"[a-z]", name):
        out.append("must contain at least one letter (a-z)")
    if "--" in name:
        out.append("must not contain consecutive hyphens")
    if name and (name[0] == "-" or name[-1] == "-"):
        out.append("must not begin or end with a hyphen")
    return out


def validate_label_selector(selector: Any, path: str, *, allow_invalid_label_values: bool = False) -> list[Cause]:
    """metav1validation.ValidateLabelSelector (create: label values in selectors must be valid;
    ``allow_invalid_label_values``, LabelSelectorValidationOptions.AllowInvalidLabelValueInSelector, skips the
    ``matchExpressions`` values' check).

    ``matchLabels`` as ValidateLabels (causes on ``<path>.matchLabels``); each ``matchExpressions[i]``:
    In/NotIn need ``values`` (``Required value: must be specified when `operator` is 'In' or 'NotIn'``),
    Exists/DoesNotExist forbid them, any other operator is ``Invalid value: "X": not a valid selector
    operator``; the key is a qualified name and each value a label value. [] when valid, which is also when
    ``metav1.LabelSelectorAsSelector`` can convert it.
    """
    selector = _dict(selector)
    out = validate_labels(selector.get("matchLabels"), f"{path}.matchLabels")
    for i, expr in enumerate(_list(selector.get("matchExpressions"))):
        expr = _dict(expr)
        epath = f"{path}.matchExpressions[{i}]"
        operator, values = expr.get("operator") or "", _list(expr.get("values"))
        if operator in ("In", "NotIn"):
            if not values:
                out.append(required(f"{epath}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                out.append(forbidden(f"{epath}.values",
                                     "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        else:
            out.append(invalid(f"{epath}.operator", operator, "not a valid selector operator"))
        key = expr.get("key")
        out.extend(invalid(f"{epath}.key", key, msg) for msg in is_qualified_name(key if isinstance(key, str) else ""))
        for j, value in enumerate(values):
            if isinstance(value, str) and not allow_invalid_label_values:
                out.extend(invalid(f"{epath}.values[{j}]", value, msg) for msg in is_valid_label_value(value))
    return out


def parse_time(value: Any) -> datetime | None:
    """A metav1.Time / MicroTime JSON value (RFC 3339) as an aware datetime (UTC when it names no zone); None when
    absent, empty or unparsable (the schema's to report)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def go_time_string(parsed: datetime) -> str:
    """time.Time.String() of ``parsed`` in kube-apiserver's zone (UTC), as field errors print a metav1.Time:
    ``2026-12-02 05:00:00 +0000 UTC``, a fraction of a second with its trailing zeros cut."""
    parsed = parsed.astimezone(UTC)
    text = parsed.strftime("%Y-%m-%d %H:%M:%S")
    if parsed.microsecond:
        text += f".{parsed.microsecond:06d}".rstrip("0")
    return text + " +0000 UTC"
