"""The generic create/update strategy and ObjectMeta validation shared by every service.

:func:`prepare_for_create` and :func:`prepare_for_update` follow
k8s.io/apiserver ``pkg/registry/rest`` ``BeforeCreate``/``BeforeUpdate``
plus the small per-kind ``PrepareForCreate``/``PrepareForUpdate`` hooks of
the served kinds (``pkg/registry/core/{namespace,pod,service}/strategy.go``):
system fields (uid, creationTimestamp, generation) are the server's, status
is reset on create and kept from the stored object on a main-resource update.

:func:`validate_object_meta` follows k8s.io/apimachinery
``pkg/api/validation/objectmeta.go`` (``ValidateObjectMeta``,
``ValidateObjectMetaUpdate``) and ``pkg/util/validation/validation.go``
(``IsDNS1123Subdomain``, ``IsQualifiedName``...) message for message,
because clients print them. Kinds choose their name rule as kube does: DNS-1123
label for Namespaces, DNS-1035 label for Services, path segment for RBAC
objects, DNS-1123 subdomain for everything else.
"""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from kapi import errors, schema
from kapi.errors import Cause
from kapi.resources import Resource

# ------------------------------------------------------------ name rules
# k8s.io/apimachinery/pkg/util/validation/validation.go

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                     "and must start and end with an alphanumeric character")
DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + r"(\." + DNS1123_LABEL_FMT + ")*"
DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
                         "'.', and must start and end with an alphanumeric character")
DNS1123_SUBDOMAIN_MAX = 253
DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
DNS1035_LABEL_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                     "alphabetic character, and end with an alphanumeric character")
QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
QUALIFIED_NAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                      "alphanumeric character")
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_FMT = "(" + QUALIFIED_NAME_FMT + ")?"
LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                   "and must start and end with an alphanumeric character")
LABEL_VALUE_MAX = 63
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024  # bytes, apimachinery TotalAnnotationSizeLimitB

_DNS1123_LABEL = re.compile(DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN = re.compile(DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL = re.compile(DNS1035_LABEL_FMT)
_QUALIFIED_NAME = re.compile(QUALIFIED_NAME_FMT)
_LABEL_VALUE = re.compile(LABEL_VALUE_FMT)

# Generated names: names.SimpleNameGenerator (k8s.io/apiserver pkg/storage/names) and utilrand.String.
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
GENERATED_SUFFIX_LENGTH = 5
MAX_GENERATED_BASE_LENGTH = 63 - GENERATED_SUFFIX_LENGTH

RBAC_GROUP = "rbac.authorization.k8s.io"

# Kinds with a spec whose strategy does not track metadata.generation (kube sets it for workloads,
# Pods since KEP-5067, custom resources; not for these).
_NO_GENERATION_KINDS = frozenset({
    "Namespace", "Service", "Node", "PersistentVolume", "PersistentVolumeClaim", "ResourceQuota", "LimitRange",
    "Endpoints",
})


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """validation.RegexError: ``<msg> (e.g. 'a',  or 'b', regex used for validation is '<fmt>')``.

    The doubled space before "or" is kube's (each example ends in ", " and the next starts with " or ").
    """
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    text = msg + " (e.g. "
    for i, example in enumerate(examples):
        if i:
            text += " or "
        text += f"'{example}', "
    return text + f"regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    """validation.MaxLenError."""
    return f"must be no more than {length} characters"


def _full(pattern: re.Pattern[str], value: str) -> bool:
    return pattern.fullmatch(value) is not None


def is_dns1123_label(value: str) -> list[str]:
    """Messages for a value that is not an RFC 1123 label (max 63); [] when valid."""
    out = []
    if len(value) > DNS1123_LABEL_MAX:
        out.append(max_len_error(DNS1123_LABEL_MAX))
    if not _full(_DNS1123_LABEL, value):
        out.append(regex_error(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return out


def is_dns1123_subdomain(value: str) -> list[str]:
    """Messages for a value that is not an RFC 1123 subdomain (max 253); [] when valid."""
    out = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        out.append(max_len_error(DNS1123_SUBDOMAIN_MAX))
    if not _full(_DNS1123_SUBDOMAIN, value):
        out.append(regex_error(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return out


def is_dns1035_label(value: str) -> list[str]:
    """Messages for a value that is not an RFC 1035 label (max 63); [] when valid."""
    out = []
    if len(value) > DNS1123_LABEL_MAX:
        out.append(max_len_error(DNS1123_LABEL_MAX))
    if not _full(_DNS1035_LABEL, value):
        out.append(regex_error(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return out


def is_valid_path_segment_name(value: str) -> list[str]:
    """path.IsValidPathSegmentName: not "." or "..", no "/" or "%"."""
    for illegal in (".", ".."):
        if value == illegal:
            return [f"may not be '{illegal}'"]
    return is_valid_path_segment_prefix(value)


def is_valid_path_segment_prefix(value: str) -> list[str]:
    """path.IsValidPathSegmentPrefix: no "/" or "%"."""
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def is_qualified_name(value: str) -> list[str]:
    """validation.IsQualifiedName: ``[prefix/]name``, prefix a DNS subdomain, name max 63 (label keys, annotations)."""
    parts = value.split("/")
    out: list[str] = []
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            out.append("prefix part must be non-empty")
        else:
            out.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return ["a qualified name " + regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name",
                                                  "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        out.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX:
        out.append("name part " + max_len_error(QUALIFIED_NAME_MAX))
    if not _full(_QUALIFIED_NAME, name):
        out.append("name part " + regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc"))
    return out


def is_valid_label_value(value: str) -> list[str]:
    """validation.IsValidLabelValue: empty or a qualified-name-like string of at most 63 characters."""
    out = []
    if len(value) > LABEL_VALUE_MAX:
        out.append(max_len_error(LABEL_VALUE_MAX))
    if not _full(_LABEL_VALUE, value):
        out.append(regex_error(LABEL_VALUE_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return out


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


def name_rule(resource: Resource) -> NameFunc:
    """The metadata.name rule of a resource (ValidateNamespaceName, ValidateServiceName, ValidateRBACName...)."""
    if resource.group == "" and resource.kind == "Namespace":
        return _name_is_dns_label
    if resource.group == "" and resource.kind == "Service":
        return _name_is_dns1035_label
    if resource.group == RBAC_GROUP:
        return _name_is_path_segment
    return _name_is_dns_subdomain


# ------------------------------------------------------------ validation


def _value(value: Any) -> str:
    """A bad value as field.Error prints it (%q for strings, plain numbers and booleans)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if value is None:
        return "null"
    return str(value)


def invalid(path: str, value: Any, detail: str) -> Cause:
    """field.Invalid: ``Invalid value: <value>: <detail>``."""
    return Cause("FieldValueInvalid", f"Invalid value: {_value(value)}: {detail}", path)


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


def _validate_finalizers(finalizers: Any, path: str = "metadata.finalizers") -> list[Cause]:
    out: list[Cause] = []
    if isinstance(finalizers, list):
        for finalizer in finalizers:
            if isinstance(finalizer, str):
                out.extend(invalid(path, finalizer, m) for m in is_qualified_name(finalizer))
    return out


def _go_strings(values: list[str]) -> str:
    return "[]string{" + ", ".join(_value(v) for v in values) + "}"


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


# ------------------------------------------------------------ strategy


def format_time(now: datetime) -> str:
    """RFC 3339 UTC with whole seconds and "Z" (metav1.Time's JSON form); naive datetimes are taken as UTC."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def generate_name(base: str, rng: random.Random | None = None) -> str:
    """names.SimpleNameGenerator: ``base`` (cut to 58 characters) plus 5 random characters from NAME_ALPHABET."""
    choice = (rng or random).choice
    return base[:MAX_GENERATED_BASE_LENGTH] + "".join(choice(NAME_ALPHABET) for _ in range(GENERATED_SUFFIX_LENGTH))


def tracks_generation(resource: Resource) -> bool:
    """True when the kind's strategy keeps metadata.generation: it has a spec and is not one of the untracked kinds."""
    return resource.kind not in _NO_GENERATION_KINDS and "spec" in schema.top_level_fields(
        resource.group, resource.version, resource.kind)


def _object_and_meta(obj: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    if not isinstance(obj, dict):
        raise errors.bad_request("the object must be a JSON object")
    metadata = obj.get("metadata")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise errors.bad_request("metadata: must be a JSON object")
    out = dict(obj)
    out["metadata"] = dict(metadata)
    return out, out["metadata"]


def _namespace_label(obj: dict[str, Any], meta: dict[str, Any]) -> None:
    # Namespace defaulting and Canonicalize: label kubernetes.io/metadata.name = name (KEP-2161).
    labels = meta.get("labels")
    labels = dict(labels) if isinstance(labels, dict) else {}
    name = _str(meta.get("name"))
    if name:
        labels["kubernetes.io/metadata.name"] = name
        meta["labels"] = labels


def prepare_for_create(obj: dict[str, Any], resource: Resource, namespace: str, now: datetime, *,
                       rng: random.Random | None = None) -> dict[str, Any]:
    """Return a copy of ``obj`` ready to store as a new object (rest.BeforeCreate + the kind's PrepareForCreate).

    - namespace: namespaced kinds take ``namespace`` (the request's); an
      object naming another namespace -> 400 BadRequest ``the namespace of
      the provided object does not match the namespace sent on the
      request``; cluster-scoped kinds have it cleared.
    - ``generateName`` with an empty name -> name = prefix + 5 random
      characters (``rng`` injectable for tests).
    - uid (uuid4), creationTimestamp (``now``, RFC 3339 seconds, UTC),
      generation 1 for kinds that track it (:func:`tracks_generation`);
      deletionTimestamp, deletionGracePeriodSeconds, resourceVersion and
      selfLink cleared; managedFields kept as given.
    - apiVersion/kind filled in when absent.
    - Namespace: ``spec.finalizers`` includes "kubernetes",
      ``status.phase`` "Active", label ``kubernetes.io/metadata.name``;
      Pod: status reset to phase Pending; Service: status reset; Secret:
      ``type`` defaults to Opaque.

    Raises StatusError 400 for a non-object body or metadata.
    """
    out, meta = _object_and_meta(obj)
    out.setdefault("apiVersion", resource.group_version)
    out.setdefault("kind", resource.kind)
    if resource.namespaced:
        given = _str(meta.get("namespace"))
        if given and namespace and given != namespace:
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on "
                                     "the request")
        meta["namespace"] = namespace or given
    else:
        meta.pop("namespace", None)
    if not _str(meta.get("name")) and _str(meta.get("generateName")):
        meta["name"] = generate_name(meta["generateName"], rng)
    for key in ("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion", "selfLink"):
        meta.pop(key, None)
    meta["uid"] = str(uuid.UUID(int=rng.getrandbits(128), version=4)) if rng else str(uuid.uuid4())
    meta["creationTimestamp"] = format_time(now)
    if tracks_generation(resource):
        meta["generation"] = 1
    else:
        meta.pop("generation", None)
    if resource.group == "":
        _prepare_core_create(out, meta, resource.kind)
    return out


def _prepare_core_create(out: dict[str, Any], meta: dict[str, Any], kind: str) -> None:
    if kind == "Namespace":
        spec = dict(out["spec"]) if isinstance(out.get("spec"), dict) else {}
        finalizers = list(spec.get("finalizers") or [])
        if "kubernetes" not in finalizers:
            finalizers.append("kubernetes")
        spec["finalizers"] = finalizers
        out["spec"] = spec
        out["status"] = {"phase": "Active"}
        _namespace_label(out, meta)
    elif kind == "Pod":
        out["status"] = {"phase": "Pending"}
    elif kind == "Service":
        out["status"] = {"loadBalancer": {}}
    elif kind == "Secret" and not out.get("type"):
        out["type"] = "Opaque"


def prepare_for_update(new: dict[str, Any], old: dict[str, Any], resource: Resource, *,
                       subresource: str = "") -> dict[str, Any]:
    """Return a copy of ``new`` ready to replace ``old`` (rest.BeforeUpdate + the kind's PrepareForUpdate).

    - uid from ``old`` when ``new`` has none (a different one fails
      validation as immutable); creationTimestamp, deletionTimestamp and
      deletionGracePeriodSeconds from ``old``; resourceVersion from ``old``
      when absent (an unconditional update).
    - generation: ``old``'s, plus 1 when ``spec`` changed, for kinds that
      track it.
    - namespace: ``old``'s when absent (namespaced kinds); cleared for
      cluster-scoped ones.
    - Main resource (``subresource`` "" or "scale"): status kept from ``old``
      for resources with a status subresource (kapi.resources); a Namespace also
      keeps ``spec.finalizers``. ``subresource="status"``: spec and the
      labels/annotations/finalizers/ownerReferences kept from ``old``
      (ResetObjectMetaForStatus). ``subresource="finalize"`` (namespaces):
      status kept from ``old``.

    Raises StatusError 400 for a non-object body or metadata.
    """
    out, meta = _object_and_meta(new)
    old_meta = _meta(old)
    out.setdefault("apiVersion", resource.group_version)
    out.setdefault("kind", resource.kind)
    if not _str(meta.get("uid")) and old_meta.get("uid"):
        meta["uid"] = old_meta["uid"]
    for key in ("creationTimestamp", "deletionTimestamp"):
        if old_meta.get(key):
            meta[key] = old_meta[key]
    if old_meta.get("deletionGracePeriodSeconds") is not None and meta.get("deletionGracePeriodSeconds") is None:
        meta["deletionGracePeriodSeconds"] = old_meta["deletionGracePeriodSeconds"]
    if not meta.get("resourceVersion") and old_meta.get("resourceVersion"):
        meta["resourceVersion"] = old_meta["resourceVersion"]
    if resource.namespaced:
        if not _str(meta.get("namespace")) and old_meta.get("namespace"):
            meta["namespace"] = old_meta["namespace"]
    else:
        meta.pop("namespace", None)
    meta.pop("selfLink", None)

    if subresource == "status":
        if "spec" in old:
            out["spec"] = old["spec"]
        else:
            out.pop("spec", None)
        for key in ("labels", "annotations", "finalizers", "ownerReferences"):
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)
    elif subresource == "finalize" or (subresource in ("", "scale") and "status" in resource.subresources):
        if "status" in old:
            out["status"] = old["status"]
        else:
            out.pop("status", None)
        if subresource == "" and resource.kind == "Namespace":
            spec = dict(out["spec"]) if isinstance(out.get("spec"), dict) else {}
            old_spec = old["spec"] if isinstance(old.get("spec"), dict) else {}
            if "finalizers" in old_spec:
                spec["finalizers"] = old_spec["finalizers"]
            else:
                spec.pop("finalizers", None)
            out["spec"] = spec
    if resource.group == "" and resource.kind == "Namespace":
        _namespace_label(out, meta)

    if tracks_generation(resource):
        old_generation = old_meta.get("generation")
        generation = old_generation if isinstance(old_generation, int) else 0
        if subresource in ("", "scale") and out.get("spec") != old.get("spec"):
            generation += 1
        meta["generation"] = generation
    elif "generation" in old_meta:
        meta["generation"] = old_meta["generation"]
    else:
        meta.pop("generation", None)
    return out
