"""Validation of CustomResourceDefinitions (apiextensions.k8s.io/v1), with kube-apiserver's field paths and messages.

:func:`validate` returns the field errors apiextensions-apiserver's
``ValidateCustomResourceDefinition`` / ``...Update`` report for the rules
kapi enforces: metadata.name ``<plural>.<group>``; group, scope, names
(DNS-1035 labels, kind and listKind); versions (names, exactly one storage
version, schemas required, deprecationWarning); per-version subresources
(scale paths under ``.spec`` / ``.status``), additionalPrinterColumns and
selectableFields (at most 8, each a valid path to a string, integer or
boolean schema field, no duplicates); spec.conversion (strategy None
forbids webhook settings; Webhook needs a clientConfig with exactly one of
an https ``url`` or a ``service``, and conversionReviewVersions naming v1 or
v1beta1, without duplicates); spec.preserveUnknownFields; on update the
immutable group, plural (and, once Established, scope and kind) and the
stored versions that must stay in spec.versions; and each version's
``openAPIV3Schema`` itself (structural schema, defaults, keywords,
``x-kubernetes-*`` extensions, CEL rules that must compile), see
:mod:`kapi.crd.openapi`.

Paths follow kube, which validates the internal form of a v1 CRD: a
per-version field (subresources, schema, additionalPrinterColumns,
selectableFields) that is identical in every version is reported at the
top level (``spec.subresources.scale.specReplicasPath``,
``spec.selectableFields[0].jsonPath``), otherwise per version
(``spec.versions[1].subresources...``); webhook settings are
``spec.conversion.webhookClientConfig`` and
``spec.conversion.conversionReviewVersions``. Source:
k8s.io/apiextensions-apiserver ``pkg/apis/apiextensions/validation``,
``pkg/apis/apiextensions/v1/conversion.go`` and k8s.io/apiserver
``pkg/util/webhook/validation.go``.
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

from kapi import crd
from kapi.crd import openapi
from kapi.crd.structural import field_schema
from kapi.errors import Cause
from kapi.objectmeta import forbidden, invalid, required
from kapi.validation import is_dns1035_label, is_dns1123_subdomain
from kapi.values import as_dict as _dict
from kapi.values import as_list as _list

Obj = dict[str, Any]

MAX_SELECTABLE_FIELDS = 8
ACCEPTED_REVIEW_VERSIONS = ("v1", "v1beta1")  # the ConversionReview versions kapi speaks
PRINTER_TYPES = "boolean,date,integer,number,string"
PRINTER_FORMATS = "byte,date,date-time,double,float,int32,int64,password"
_URL_FORM = "; desired format: https://host[/path]"


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def not_supported(path: str, value: str, supported: list[str]) -> Cause:
    """field.NotSupported: ``Unsupported value: "x": supported values: "a", "b"``."""
    return Cause("FieldValueNotSupported", f'Unsupported value: "{value}": supported values: '
                 + ", ".join(f'"{s}"' for s in supported), path)


def duplicate(path: str, value: str) -> Cause:
    """field.Duplicate: ``Duplicate value: "x"``."""
    return Cause("FieldValueDuplicate", f'Duplicate value: "{value}"', path)


def too_many(path: str, actual: int, limit: int) -> Cause:
    """field.TooMany: ``Too many: 9: must have at most 8 items``."""
    return Cause("FieldValueTooMany", f"Too many: {actual}: must have at most {limit} items", path)


def _invalid_json(path: str, value: Any, detail: str) -> Cause:
    """field.Invalid of a non-scalar value, printed as JSON."""
    return Cause("FieldValueInvalid", f"Invalid value: {json.dumps(value, separators=(',', ':'))}: {detail}", path)


# --- names ----------------------------------------------------------------------------------------------------


def _names(n: Obj, path: str) -> list[Cause]:
    """ValidateCustomResourceDefinitionNames: DNS-1035 labels; kind and listKind differ."""
    out: list[Cause] = []
    for key in ("plural", "singular"):
        value = _str(n.get(key))
        if value and (errs := is_dns1035_label(value)):
            out.append(invalid(f"{path}.{key}", value, ",".join(errs)))
    for key in ("kind", "listKind"):
        value = _str(n.get(key))
        if value and (errs := is_dns1035_label(value.lower())):
            out.append(invalid(f"{path}.{key}", value, "may have mixed case, but should otherwise match: "
                               + ",".join(errs)))
    for key in ("shortNames", "categories"):
        for i, value in enumerate(_list(n.get(key))):
            if errs := is_dns1035_label(_str(value)):
                out.append(invalid(f"{path}.{key}[{i}]", _str(value), ",".join(errs)))
    if n.get("kind") and n.get("kind") == n.get("listKind"):
        out.append(invalid(f"{path}.listKind", _str(n.get("listKind")), "kind and listKind may not be the same"))
    return out


# --- per-version fields ----------------------------------------------------------------------------------------


def _simple_json_path(path: str, value: str) -> list[Cause]:
    if not value:
        return [invalid(path, value, "must not be empty")]
    if not value.startswith("."):
        return [invalid(path, value, "must be a simple json path starting with .")]
    return []


def subresources(subs: Obj, path: str) -> list[Cause]:
    """ValidateCustomResourceDefinitionSubresources: scale's spec/status/labelSelector paths."""
    if "scale" not in subs:
        return []
    scale = _dict(subs.get("scale"))
    out: list[Cause] = []
    for key, prefixes, where in (("specReplicasPath", (".spec.",), ".spec"),
                                 ("statusReplicasPath", (".status.",), ".status"),
                                 ("labelSelectorPath", (".spec.", ".status."), "either .spec or .status")):
        value, field = _str(scale.get(key)), f"{path}.scale.{key}"
        if not value:
            if key != "labelSelectorPath":
                out.append(required(field))
            continue
        errs = _simple_json_path(field, value)
        if errs:
            out.extend(errs)
        elif not value.startswith(prefixes):
            out.append(invalid(field, value, f"should be a json path under {where}"))
    return out


def printer_columns(columns: list[Any], path: str) -> list[Cause]:
    """ValidateCustomResourceColumnDefinition for each column."""
    out: list[Cause] = []
    for i, col in enumerate(columns):
        col, p = _dict(col), f"{path}[{i}]"
        if not col.get("name"):
            out.append(required(f"{p}.name"))
        type_ = _str(col.get("type"))
        if not type_:
            out.append(required(f"{p}.type", f"must be one of {PRINTER_TYPES}"))
        elif type_ not in PRINTER_TYPES.split(","):
            out.append(invalid(f"{p}.type", type_, f"must be one of {PRINTER_TYPES}"))
        fmt = _str(col.get("format"))
        if fmt and fmt not in PRINTER_FORMATS.split(","):
            out.append(invalid(f"{p}.format", fmt, f"must be one of {PRINTER_FORMATS}"))
        json_path = _str(col.get("jsonPath"))
        out.extend([required(f"{p}.JSONPath")] if not json_path else _simple_json_path(f"{p}.JSONPath", json_path))
    return out


def selectable_fields(fields: list[Any], schema: Obj | None, path: str, top_level: bool) -> list[Cause]:
    """ValidateCustomResourceSelectableFields (+ the schema they need)."""
    if not fields:
        return []
    if schema is None:
        where = "validations.schema is included" if top_level else "version.schema.openAPIV3Schema is not included"
        return [invalid(path, "", f"selectableFields may only be set when {where}")]
    out: list[Cause] = []
    seen: set[str] = set()
    for i, entry in enumerate(fields):
        json_path, p = _str(_dict(entry).get("jsonPath")), f"{path}[{i}].jsonPath"
        if not json_path:
            out.append(required(p))
            continue
        try:
            dotted, found = field_schema(json_path, schema)
        except ValueError as err:
            out.append(invalid(p, json_path, f"is an invalid path: {err}"))
            continue
        if dotted.split(".")[0] == "metadata":
            out.append(invalid(p, json_path, "must not point to fields in metadata"))
        if found.get("type") not in ("string", "boolean", "integer"):
            out.append(invalid(p, json_path, "must point to a field of type string, boolean or integer. Enum string "
                               "fields and strings with formats are allowed."))
        if dotted in seen:
            out.append(duplicate(p, json_path))
        seen.add(dotted)
    if len(seen) > MAX_SELECTABLE_FIELDS:
        out.append(too_many(path, len(seen), MAX_SELECTABLE_FIELDS))
    return out


def _deprecation_warning(version: Obj, path: str) -> list[Cause]:
    if "deprecationWarning" not in version or version.get("deprecationWarning") is None:
        return []
    warning = _str(version.get("deprecationWarning"))
    if not version.get("deprecated"):
        return [invalid(path, warning, "can only be set for deprecated versions")]
    out = []
    if len(warning) > 256:
        out.append(invalid(path, warning, "must be <= 256 characters long"))
    if not warning:
        out.append(invalid(path, warning, "must not be an empty string"))
    return out


def _identical(versions: list[Obj], key: str) -> bool:
    """All versions carry the same ``key`` (kube hoists it to the top level of the internal spec)."""
    return bool(versions) and all(v.get(key) == versions[0].get(key) for v in versions)


def _schema_errors(versions: list[Obj], old: Obj | None, hoisted: bool,
                   value_validator: openapi.ValueValidator | None) -> list[Cause]:
    """Each openAPIV3Schema's own errors (kapi.crd.openapi), at spec.validation when hoisted, with kube's ratcheting."""
    old_schemas = [_dict(v.get("schema")).get("openAPIV3Schema") for v in _list(crd.spec(old or {}).get("versions"))]
    opts = openapi.options_for_update(old_schemas) if old is not None else openapi.Options()
    with_status = ["status" in _dict(v.get("subresources")) for v in versions]
    targets = [(_dict(versions[0].get("schema")).get("openAPIV3Schema"), "spec.validation", any(with_status))] \
        if hoisted and versions else [(_dict(v.get("schema")).get("openAPIV3Schema"), f"spec.versions[{i}].schema",
                                       with_status[i]) for i, v in enumerate(versions)]
    out: list[Cause] = []
    for schema, path, status_enabled in targets:
        if isinstance(schema, dict) and schema not in old_schemas:  # unchanged schemas keep validating as they did
            out.extend(openapi.validate(schema, path, status_enabled, opts, value_validator))
    return out


def _versions(s: Obj, old: Obj | None, value_validator: openapi.ValueValidator | None = None) -> list[Cause]:
    versions = [v if isinstance(v, dict) else {} for v in _list(s.get("versions"))]
    out: list[Cause] = []
    hoisted = {key: _identical(versions, key) for key in ("schema", "subresources", "additionalPrinterColumns",
                                                            "selectableFields")}
    old_versions = [_dict(v) for v in _list(crd.spec(old or {}).get("versions"))] if old is not None else []
    schemas_required = old is None or all(_dict(v.get("schema")).get("openAPIV3Schema") for v in old_versions)
    names: set[str] = set()
    unique = True
    for i, v in enumerate(versions):
        p = f"spec.versions[{i}]"
        name = _str(v.get("name"))
        unique &= name not in names
        names.add(name)
        if errs := is_dns1035_label(name):
            out.append(invalid(f"{p}.name", name, ",".join(errs)))
        schema = _dict(v.get("schema")).get("openAPIV3Schema")
        if schemas_required and not isinstance(schema, dict):
            out.append(required(f"{p}.schema.openAPIV3Schema", "schemas are required"))
        out.extend(_deprecation_warning(v, f"{p}.deprecationWarning"))
        if not hoisted["subresources"]:
            out.extend(subresources(_dict(v.get("subresources")), f"{p}.subresources"))
        if not hoisted["additionalPrinterColumns"]:
            out.extend(printer_columns(_list(v.get("additionalPrinterColumns")), f"{p}.additionalPrinterColumns"))
        if not hoisted["selectableFields"]:
            out.extend(selectable_fields(_list(v.get("selectableFields")), schema if isinstance(schema, dict)
                                         else None, f"{p}.selectableFields", top_level=False))
    if not unique:
        out.append(Cause("FieldValueInvalid", "Invalid value: must contain unique version names", "spec.versions"))
    if sum(1 for v in versions if v.get("storage") is True) != 1:
        out.append(Cause("FieldValueInvalid", "Invalid value: must have exactly one version marked as storage "
                         "version", "spec.versions"))
    out.extend(_schema_errors(versions, old, hoisted["schema"], value_validator))
    if versions and hoisted["subresources"]:
        out.extend(subresources(_dict(versions[0].get("subresources")), "spec.subresources"))
    if versions and hoisted["additionalPrinterColumns"]:
        out.extend(printer_columns(_list(versions[0].get("additionalPrinterColumns")), "spec.additionalPrinterColumns"))
    if versions and hoisted["selectableFields"]:
        schema = _dict(versions[0].get("schema")).get("openAPIV3Schema") if hoisted["schema"] else None
        out.extend(selectable_fields(_list(versions[0].get("selectableFields")), schema if isinstance(schema, dict)
                                     else None, "spec.selectableFields", top_level=True))
    return out


# --- conversion -------------------------------------------------------------------------------------------------


def webhook_url(path: str, url: str) -> list[Cause]:
    """webhook.ValidateWebhookURL with https forced."""
    try:
        u = urllib.parse.urlsplit(url)
    except ValueError as err:
        return [required(path, f"url must be a valid URL: {err}{_URL_FORM}")]
    out = []
    if u.scheme != "https":
        out.append(invalid(path, u.scheme, "'https' is the only allowed URL scheme" + _URL_FORM))
    if not u.netloc.rpartition("@")[2]:
        out.append(invalid(path, "", "host must be specified" + _URL_FORM))
    if "@" in u.netloc:
        out.append(invalid(path, u.netloc.rpartition("@")[0], "user information is not permitted in the URL"))
    if u.fragment:
        out.append(invalid(path, u.fragment, "fragments are not permitted in the URL"))
    if u.query:
        out.append(invalid(path, u.query, "query parameters are not permitted in the URL"))
    return out


def webhook_service(path: str, service: Obj) -> list[Cause]:
    """webhook.ValidateWebhookService: name, namespace, port 1-65535, path segments DNS subdomains."""
    out = []
    if not service.get("name"):
        out.append(required(f"{path}.name", "service name is required"))
    if not service.get("namespace"):
        out.append(required(f"{path}.namespace", "service namespace is required"))
    port = service.get("port", 443)
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        out.append(invalid(f"{path}.port", port, "port is not valid: must be between 1 and 65535, inclusive"))
    url_path = service.get("path")
    if not isinstance(url_path, str) or url_path in ("", "/"):
        return out
    if url_path == "//":
        return [*out, invalid(f"{path}.path", url_path, "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        out.append(invalid(f"{path}.path", url_path, "must start with a '/'"))
    steps = url_path[1:].removesuffix("/").split("/")
    for i, step in enumerate(steps):
        if not step:
            out.append(invalid(f"{path}.path", url_path, f"segment[{i}] may not be empty"))
            continue
        out.extend(invalid(f"{path}.path", url_path, f"segment[{i}]: {e}") for e in is_dns1123_subdomain(step))
    return out


def conversion(s: Obj, require_recognized: bool = True) -> list[Cause]:
    """validateCustomResourceConversion on the internal form (webhookClientConfig, conversionReviewVersions)."""
    if "conversion" not in s or s.get("conversion") is None:
        return []
    conv, path = _dict(s.get("conversion")), "spec.conversion"
    webhook = conv.get("webhook")
    client_config = _dict(webhook).get("clientConfig") if isinstance(webhook, dict) else None
    review_versions = _list(_dict(webhook).get("conversionReviewVersions"))
    strategy = _str(conv.get("strategy"))
    out: list[Cause] = []
    if not strategy:
        out.append(required(f"{path}.strategy"))
    elif strategy not in ("None", "Webhook"):
        out.append(not_supported(f"{path}.strategy", strategy, ["None", "Webhook"]))
    if strategy != "Webhook":
        if client_config is not None:
            out.append(forbidden(f"{path}.webhookClientConfig", "should not be set when strategy is not set to "
                                 "Webhook"))
        if review_versions:
            out.append(forbidden(f"{path}.conversionReviewVersions", "should not be set when strategy is not set "
                                 "to Webhook"))
        return out
    if not isinstance(client_config, dict):
        out.append(required(f"{path}.webhookClientConfig", "required when strategy is set to Webhook"))
    else:
        url, service = client_config.get("url"), client_config.get("service")
        if (url is None) == (service is None):
            out.append(required(f"{path}.webhookClientConfig", "exactly one of url or service is required"))
        elif url is not None:
            out.extend(webhook_url(f"{path}.webhookClientConfig.url", _str(url)))
        else:
            out.extend(webhook_service(f"{path}.webhookClientConfig.service", _dict(service)))
    vpath = f"{path}.conversionReviewVersions"
    if not review_versions:
        return [*out, required(vpath)]
    seen: set[str] = set()
    for i, v in enumerate(review_versions):
        v = _str(v)
        if v in seen:
            out.append(invalid(f"{vpath}[{i}]", v, "duplicate version"))
            continue
        seen.add(v)
        out.extend(invalid(f"{vpath}[{i}]", v, e) for e in is_dns1035_label(v))
    if require_recognized and not seen & set(ACCEPTED_REVIEW_VERSIONS):
        out.append(_invalid_json(vpath, review_versions, "must include at least one of "
                                 + ", ".join(ACCEPTED_REVIEW_VERSIONS)))
    return out


# --- the whole object --------------------------------------------------------------------------------------------


def _stored_versions(definition: Obj) -> list[Cause]:
    stored = _list(_dict(definition.get("status")).get("storedVersions"))
    names = {_str(_dict(v).get("name")) for v in _list(crd.spec(definition).get("versions"))}
    return [invalid(f"status.storedVersions[{i}]", v, f"missing from spec.versions; {v} was previously a storage "
                    f"version, and must remain in spec.versions until a storage migration ensures no data remains "
                    f"persisted in {v} and removes {v} from status.storedVersions")
            for i, v in enumerate(stored) if isinstance(v, str) and v not in names]


def validate(definition: Obj, old: Obj | None = None,
             value_validator: openapi.ValueValidator | None = None) -> list[Cause]:
    """Field errors of a CRD create (``old`` None) or update, as kube-apiserver reports them (see the module doc).

    The versions' schemas are checked by :func:`kapi.crd.openapi.validate`; ``value_validator`` (the admission
    service's custom-resource validator) checks their defaults' values.
    """
    out: list[Cause] = []
    s = crd.spec(definition)
    raw_names = _dict(s.get("names"))
    n = crd.names(definition)
    grp, plural = crd.group(definition), _str(raw_names.get("plural"))
    name = _str(_dict(definition.get("metadata")).get("name"))
    if name and name != f"{plural}.{grp}":
        out.append(invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    if not grp:
        out.append(required("spec.group"))
    elif errs := is_dns1123_subdomain(grp):
        out.append(invalid("spec.group", grp, ",".join(errs)))
    elif "." not in grp:
        out.append(invalid("spec.group", grp, "should be a domain with at least one dot"))
    scope = _str(s.get("scope"))
    if not scope:
        out.append(required("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        out.append(not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))
    if s.get("preserveUnknownFields") is True and not crd.spec(old or {}).get("preserveUnknownFields"):
        out.append(invalid("spec.preserveUnknownFields", True, "cannot set to true, set "
                           "x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"))
    out.extend(_versions(s, old, value_validator))
    for key in ("plural", "kind"):
        if not raw_names.get(key):
            out.append(required(f"spec.names.{key}"))
    out.extend(_names(n, "spec.names"))
    old_conversion = _dict(crd.spec(old or {}).get("conversion"))
    old_review = _list(_dict(old_conversion.get("webhook")).get("conversionReviewVersions"))
    out.extend(conversion(s, require_recognized=old is None or not old_review
                          or bool(set(old_review) & set(ACCEPTED_REVIEW_VERSIONS))))
    if old is not None:
        old_s, old_names = crd.spec(old), _dict(crd.spec(old).get("names"))
        if crd.is_true(old, "Established"):
            if old_s.get("scope") != s.get("scope"):
                out.append(invalid("spec.scope", scope, "field is immutable"))
            if old_names.get("kind") != raw_names.get("kind"):
                out.append(invalid("spec.names.kind", _str(raw_names.get("kind")), "field is immutable"))
        if crd.group(old) != grp:
            out.append(invalid("spec.group", grp, "field is immutable"))
        if old_names.get("plural") != raw_names.get("plural"):
            out.append(invalid("spec.names.plural", plural, "field is immutable"))
        out.extend(_stored_versions(definition))
    out.extend(_api_approval(definition, old))
    return out


def _api_approval(definition: Obj, old: Obj | None) -> list[Cause]:
    """validateAPIApproval: a CRD of a protected group (``*.k8s.io``, ``*.kubernetes.io``) needs the
    ``api-approved.kubernetes.io`` annotation, a URL or a reason starting with ``unapproved``; an update that
    leaves the annotation's state as it was is never rejected (kube: "imagine a controller controlling a CRD
    spec"). Source: ``pkg/apis/apiextensions/validation/validation.go``.
    """
    if not crd.protected_group(crd.group(definition)):
        return []
    state, reason = crd.approval_state(definition)
    if old is not None and crd.approval_state(old)[0] == state:
        return []
    path = f"metadata.annotations[{crd.APPROVAL_ANNOTATION}]"
    if state == "Missing":
        return [required(path, reason)]
    if state == "Invalid":
        value = _dict(_dict(definition.get("metadata")).get("annotations")).get(crd.APPROVAL_ANNOTATION)
        return [invalid(path, value, reason)]
    return []
