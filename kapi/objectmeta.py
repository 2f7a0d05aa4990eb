"""ObjectMeta validation shared by every service, as k8s.io/apimachinery does it, message for message.

:func:`validate_object_meta` follows ``pkg/api/validation/objectmeta.go``
(``ValidateObjectMeta``, ``ValidateObjectMetaUpdate``) with the format
checks of :mod:`kapi.validation`, because clients print the messages.
Kinds choose their name rule as kube does (:func:`name_rule`): DNS-1123
label for Namespaces, DNS-1035 label for Services, path segment for RBAC
objects, an IP in canonical form for IPAddresses, DNS-1123 subdomain for
everything else. Problems are
:class:`kapi.errors.Cause` values built like ``field.Invalid``,
``field.Required``... (:func:`invalid`, :func:`required`, :func:`forbidden`,
:func:`too_long`); build the 422 with ``errors.invalid(kind, name, causes, group)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kapi.errors import Cause
from kapi.resources import Resource
from kapi.validation import (
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_ip,
    is_valid_label_value,
    is_valid_path_segment_name,
    is_valid_path_segment_prefix,
)

TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024  # bytes, apimachinery TotalAnnotationSizeLimitB

RBAC_GROUP = "rbac.authorization.k8s.io"

# ------------------------------------------------------------ name rules


def _mask_trailing_dash(name: str) -> str:
    # A generateName prefix may end in "-": validate it as if a character followed.
    return name[:-1] + "a" if len(name) > 1 and name.endswith("-") else name


NameFunc = Callable[[str, bool], list[str]]
"""A name rule: (name, is generateName prefix) -> messages (apimachinery ValidateNameFunc)."""


def _name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def _name_is_dns_label(name: str, prefix: bool) -> list[str]:
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def _name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    return is_dns1035_label(_mask_trailing_dash(name) if prefix else name)


def _name_is_path_segment(name: str, prefix: bool) -> list[str]:
    return is_valid_path_segment_prefix(name) if prefix else is_valid_path_segment_name(name)


def _name_is_ip(name: str, prefix: bool) -> list[str]:
    # ValidateIPAddressName: IPAddress names are not generated, so a generateName prefix is checked as a name.
    return is_valid_ip(name)


def name_rule(resource: Resource) -> NameFunc:
    """The metadata.name rule of a resource (ValidateNamespaceName, ValidateServiceName, ValidateRBACName...)."""
    if resource.group == "" and resource.kind == "Namespace":
        return _name_is_dns_label
    if resource.group == "" and resource.kind == "Service":
        return _name_is_dns1035_label
    if resource.group == "networking.k8s.io" and resource.kind == "IPAddress":
        return _name_is_ip
    # APIService: also <version>.<group>; ValidateCertificateRequestName is a path segment rule too
    if resource.group in (RBAC_GROUP, "apiregistration.k8s.io", "certificates.k8s.io"):
        return _name_is_path_segment
    return _name_is_dns_subdomain


# ------------------------------------------------------------ validation


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
               "\\": "\\\\", '"': '\\"'}


def go_quote(value: str) -> str:
    """Go's ``strconv.Quote`` (``%q``): control and non-printable characters escaped (``\\x00``, ``\\n``,
    ``\\u2028``), printable Unicode kept."""
    out = []
    for ch in value:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def bad_value(value: Any) -> str:
    """A bad value as ``field.Error.ErrorBody`` prints it (apimachinery ``pkg/util/validation/field/errors.go``).

    Strings ``%q`` (:func:`go_quote`); booleans and numbers ``%v`` (a whole float without a fraction, as the
    Go integer field held it); nil, or a nil pointer, is the string "null" and so quoted: ``"null"``; a list
    of strings as ``%#v`` of a ``[]string`` (``[]string{"a", "b"}``). Other values: ``str``.
    """
    if value is None:
        return '"null"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "[]string{" + ", ".join(go_quote(v) for v in value) + "}"
    return str(value)


def invalid(path: str, value: Any, detail: str) -> Cause:
    """field.Invalid: ``Invalid value: <value>: <detail>``."""
    return Cause("FieldValueInvalid", f"Invalid value: {bad_value(value)}: {detail}", path)


def required(path: str, detail: str = "") -> Cause:
    """field.Required: ``Required value[: detail]``."""
    return Cause("FieldValueRequired", "Required value" + (f": {detail}" if detail else ""), path)


def forbidden(path: str, detail: str) -> Cause:
    """field.Forbidden: ``Forbidden: <detail>``."""
    return Cause("FieldValueForbidden", f"Forbidden: {detail}", path)


def too_long(path: str, max_bytes: int) -> Cause:
    """field.TooLong: ``Too long: may not be more than <n> bytes``."""
    return Cause("FieldValueTooLong", f"Too long: may not be more than {max_bytes} bytes", path)


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def validate_labels(labels: Any, path: str = "metadata.labels") -> list[Cause]:
    """ValidateLabels: every key a qualified name, every value a valid label value (causes on ``path``)."""
    out: list[Cause] = []
    if not isinstance(labels, dict):
        return out
    for key, value in labels.items():
        out.extend(invalid(path, key, m) for m in is_qualified_name(key))
        if isinstance(value, str):
            out.extend(invalid(path, value, m) for m in is_valid_label_value(value))
    return out


def validate_annotations(annotations: Any, path: str = "metadata.annotations") -> list[Cause]:
    """ValidateAnnotations: keys are qualified names (case-insensitive); keys plus values at most 256 KiB in total."""
    out: list[Cause] = []
    if not isinstance(annotations, dict):
        return out
    total = 0
    for key, value in annotations.items():
        out.extend(invalid(path, key, m) for m in is_qualified_name(key.lower()))
        total += len(key.encode()) + len(_str(value).encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        out.append(too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))
    return out


def _validate_owner_references(refs: Any, path: str = "metadata.ownerReferences") -> list[Cause]:
    out: list[Cause] = []
    if not isinstance(refs, list):
        return out
    controllers = []
    for ref in refs:
        if not isinstance(ref, dict):
            continue
        api_version = _str(ref.get("apiVersion"))
        if not api_version.rsplit("/", 1)[-1]:
            out.append(invalid(f"{path}.apiVersion", api_version, "version must not be empty"))
        for name in ("kind", "name", "uid"):
            if not _str(ref.get(name)):
                out.append(invalid(f"{path}.{name}", _str(ref.get(name)), "must not be empty"))
        if ref.get("controller") is True:
            controllers.append(f"{ref.get('kind', '')}/{ref.get('name', '')}")
    if len(controllers) > 1:
        out.append(invalid(f"{path}", refs, "Only one reference can have Controller set to true. Found \"true\" "
                           "in references for " + " and ".join(controllers)))
    return out


DUPLICATE_OWNER_REFERENCES = (
    ".metadata.ownerReferences contains duplicate entries{when}; API server dedups owner references in 1.20+, and "
    "may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: {uids}")


def dedup_owner_references(obj: dict[str, Any], after_mutating_admission: bool) -> str | None:
    """Drop repeated ``metadata.ownerReferences`` entries (one equal to an earlier one in every field; an entry
    differing in ``controller`` or another field stays) from ``obj`` in place; returns kube's warning naming the
    duplicate UIDs, or None when there were none.

    kube's handlers dedupOwnerReferencesAndAddWarning (``endpoints/handlers/rest.go``): POST and PUT dedup before
    mutating admission and again after it (the second warning says ``after mutating admission happens``), a
    PATCH only after it.
    """
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return None
    refs = meta.get("ownerReferences")
    if not isinstance(refs, list) or len(refs) < 2:
        return None
    kept: list[Any] = []
    duplicates: list[str] = []
    for ref in refs:
        if ref in kept:
            duplicates.append(_str(ref.get("uid")) if isinstance(ref, dict) else "")
        else:
            kept.append(ref)
    if not duplicates:
        return None
    meta["ownerReferences"] = kept
    return DUPLICATE_OWNER_REFERENCES.format(when=" after mutating admission happens" if after_mutating_admission
                                             else "", uids=", ".join(duplicates))


def _validate_finalizers(finalizers: Any, path: str = "metadata.finalizers") -> list[Cause]:
    out: list[Cause] = []
    if isinstance(finalizers, list):
        for finalizer in finalizers:
            if isinstance(finalizer, str):
                out.extend(invalid(path, finalizer, m) for m in is_qualified_name(finalizer))
    return out


def _go_strings(values: list[str]) -> str:
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


def validate_object_meta(obj: dict[str, Any], resource: Resource, create: bool,
                         old: dict[str, Any] | None = None) -> list[Cause]:
    """Validate ``obj``'s metadata as kube's ObjectMeta validation does; returns the causes ([] when valid).

    ``create``: ValidateObjectMeta (name or generateName required, name and
    namespace rules, labels, annotations, ownerReferences, finalizers).
    Update (``create`` False, ``old`` the stored object):
    ValidateObjectMetaUpdate (name, namespace, uid, creationTimestamp,
    deletionTimestamp, deletionGracePeriodSeconds are immutable -> ``field is
    immutable``; no new finalizers once deletion started) plus the label,
    annotation, ownerReference and finalizer rules. Build the 422 with
    ``errors.invalid(resource.kind, name, causes, resource.group)``.
    """
    meta = _meta(obj)
    out: list[Cause] = []
    if create or old is None:
        name_fn = name_rule(resource)
        generate_name = _str(meta.get("generateName"))
        if generate_name:
            out.extend(invalid("metadata.generateName", generate_name, m) for m in name_fn(generate_name, True))
        name = _str(meta.get("name"))
        if not name:
            out.append(required("metadata.name", "name or generateName is required"))
        else:
            out.extend(invalid("metadata.name", name, m) for m in name_fn(name, False))
        namespace = _str(meta.get("namespace"))
        if resource.namespaced:
            if not namespace:
                out.append(required("metadata.namespace"))
            else:
                out.extend(invalid("metadata.namespace", namespace, m) for m in _name_is_dns_label(namespace, False))
        elif namespace:
            out.append(forbidden("metadata.namespace", "not allowed on this type"))
        generation = meta.get("generation")
        if isinstance(generation, int) and generation < 0:
            out.append(invalid("metadata.generation", generation, "must be greater than or equal to 0"))
    else:
        old_meta = _meta(old)
        if old_meta.get("deletionTimestamp"):
            old_finalizers = set(old_meta.get("finalizers") or [])
            new = [f for f in meta.get("finalizers") or [] if f not in old_finalizers]
            if new:
                out.append(forbidden("metadata.finalizers", "no new finalizers can be added if the object is being "
                                     f"deleted, found new finalizers {_go_strings(new)}"))
        for key in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp",
                    "deletionGracePeriodSeconds"):
            new_value, old_value = meta.get(key) or None, old_meta.get(key) or None
            if new_value != old_value:
                out.append(invalid(f"metadata.{key}", new_value if new_value is not None else "",
                                   "field is immutable"))
    out.extend(validate_labels(meta.get("labels")))
    out.extend(validate_annotations(meta.get("annotations")))
    out.extend(_validate_owner_references(meta.get("ownerReferences")))
    out.extend(_validate_finalizers(meta.get("finalizers")))
    return out
