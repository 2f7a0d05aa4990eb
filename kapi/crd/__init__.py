"""CustomResourceDefinitions (apiextensions.k8s.io/v1) as resource-table rows, plus the CRD rules every service shares.

A CRD ``<plural>.<group>`` serves one :class:`kapi.resources.Resource` row per
served version once it is Established; its objects live under
``/registry/<group>/<plural>/...`` like kube-apiserver's. This module is pure:
it reads CRD objects (decoded JSON dicts) and answers names, versions,
schemas, printer columns, subresources and conditions (validation of a CRD is
:mod:`kapi.crd.validation`; of its schemas, :mod:`kapi.crd.openapi`).
Sources: "Extend the Kubernetes API with CustomResourceDefinitions",
"Versions in CustomResourceDefinitions" and k8s.io/apiextensions-apiserver
``pkg/apis/apiextensions/validation``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from kapi.gofmt import go_quote
from kapi.resources import ALL_VERBS, Resource
from kapi.values import as_dict as _dict

GROUP = "apiextensions.k8s.io"
RESOURCE = "customresourcedefinitions"
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
AGE_COLUMN = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}

Obj = dict[str, Any]


def spec(crd: Obj) -> Obj:
    """``spec`` of a CRD ({} when absent or malformed)."""
    return _dict(crd.get("spec"))


def names(crd: Obj) -> Obj:
    """``spec.names`` with listKind and singular defaulted as kube does (``<Kind>List``, lower-cased kind)."""
    out = dict(_dict(spec(crd).get("names")))
    kind = str(out.get("kind") or "")
    out.setdefault("listKind", kind + "List")
    out.setdefault("singular", kind.lower())
    return out


def group(crd: Obj) -> str:
    """``spec.group``."""
    return str(spec(crd).get("group") or "")


def versions(crd: Obj) -> list[Obj]:
    """``spec.versions`` (dicts only)."""
    return [v for v in spec(crd).get("versions") or [] if isinstance(v, dict)]


def version(crd: Obj, name: str) -> Obj | None:
    """The ``spec.versions`` entry called ``name``, or None."""
    return next((v for v in versions(crd) if v.get("name") == name), None)


def storage_version(crd: Obj) -> str:
    """The name of the version with ``storage: true`` ("" if none)."""
    return next((str(v.get("name")) for v in versions(crd) if v.get("storage")), "")


def namespaced(crd: Obj) -> bool:
    """``spec.scope`` is Namespaced (the default)."""
    return spec(crd).get("scope", "Namespaced") != "Cluster"


def subresources(crd: Obj, version_name: str) -> Obj:
    """``versions[].subresources`` of one version (``{"status": {}, "scale": {...}}``)."""
    return _dict(_dict(version(crd, version_name)).get("subresources"))


def schema(crd: Obj, version_name: str) -> Obj | None:
    """``versions[].schema.openAPIV3Schema`` of one version, or None."""
    found = _dict(_dict(version(crd, version_name)).get("schema")).get("openAPIV3Schema")
    return found if isinstance(found, dict) else None


def printer_columns(crd: Obj, version_name: str) -> list[Obj]:
    """``additionalPrinterColumns`` of one version; kube's default is one ``Age`` column (type date)."""
    columns = [c for c in _dict(version(crd, version_name)).get("additionalPrinterColumns") or []
               if isinstance(c, dict) and c.get("name") and c.get("jsonPath")]
    return columns or [dict(AGE_COLUMN)]


def selectable_fields(crd: Obj, version_name: str) -> list[str]:
    """``selectableFields[].jsonPath`` of one version, as field labels without the leading dot."""
    return [str(f["jsonPath"]).lstrip(".") for f in _dict(version(crd, version_name)).get("selectableFields") or []
            if isinstance(f, dict) and f.get("jsonPath")]


def condition(crd: Obj, type_: str) -> Obj | None:
    """The status condition of ``type_`` (NamesAccepted, Established, Terminating), or None."""
    for c in _dict(crd.get("status")).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == type_:
            return c
    return None


def is_true(crd: Obj, type_: str) -> bool:
    """Whether the condition ``type_`` has status "True"."""
    found = condition(crd, type_)
    return bool(found and found.get("status") == "True")


def terminating(crd: Obj) -> bool:
    """The CRD has a deletionTimestamp: its objects are being deleted."""
    return bool(_dict(crd.get("metadata")).get("deletionTimestamp"))


def rows(crd: Obj) -> list[Resource]:
    """One resource-table row per served version (by version priority, preferred first) of an Established CRD."""
    n = names(crd)
    plural, kind = str(n.get("plural") or ""), str(n.get("kind") or "")
    if not plural or not kind or not group(crd) or not is_true(crd, "Established"):
        return []
    out = []
    for v in sorted(versions(crd), key=lambda v: version_priority(str(v.get("name")))):
        if not v.get("served"):
            continue
        subs = tuple(s for s in ("status", "scale") if s in _dict(v.get("subresources")))
        out.append(Resource(group(crd), str(v.get("name")), plural, kind, namespaced(crd),
                            tuple(n.get("shortNames") or ()), tuple(n.get("categories") or ()), ALL_VERBS, subs,
                            singular_name=str(n.get("singular") or ""), list_kind_name=str(n.get("listKind") or "")))
    return out


def now() -> str:
    """The current time as an RFC 3339 UTC timestamp (seconds)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def set_condition(crd: Obj, type_: str, status: str, reason: str, message: str) -> bool:
    """Set a status condition in place, keeping lastTransitionTime when status is unchanged; True if it changed."""
    if not isinstance(crd.get("status"), dict):
        crd["status"] = {}
    status_obj = crd["status"]
    if not isinstance(status_obj.get("conditions"), list):
        status_obj["conditions"] = []  # the zero status has "conditions": null
    conditions = status_obj["conditions"]
    current = condition(crd, type_)
    if current is not None and (current.get("status"), current.get("reason"), current.get("message")) == (
            status, reason, message):
        return False
    entry = {"type": type_, "status": status, "lastTransitionTime": now(), "reason": reason, "message": message}
    if current is not None:
        if current.get("status") == status:
            entry["lastTransitionTime"] = current.get("lastTransitionTime") or entry["lastTransitionTime"]
        conditions[conditions.index(current)] = entry
    else:
        conditions.append(entry)
    return True


def accepted_names(crd: Obj) -> Obj:
    """``status.acceptedNames`` kube publishes once the names are accepted: kind, listKind, plural, singular, ..."""
    n = names(crd)
    return {k: n[k] for k in ("plural", "singular", "shortNames", "kind", "listKind", "categories") if n.get(k)}


_SEGMENT = re.compile(r"""\.?([A-Za-z0-9_$-]+)|\[(\d+|\*)\]|\[\?\(@\.([A-Za-z0-9_.-]+)\s*==\s*["']([^"']*)["']\)\]""")


def jsonpath(obj: Any, path: str) -> list[Any]:
    """Evaluate the JSONPath subset of printer columns and selectable fields; the list of matches.

    Supports ``.a.b``, ``[n]``, ``[*]`` and ``[?(@.type=="Ready")]`` filters
    (the forms kube's docs use). ``{`` ``}`` around the path are ignored.
    """
    text = path.strip().strip("{}").strip()
    current = [obj]
    pos = 0
    while pos < len(text):
        m = _SEGMENT.match(text, pos)
        if m is None or m.end() == pos:
            return []
        pos = m.end()
        nxt: list[Any] = []
        for value in current:
            if m.group(1) is not None:
                if isinstance(value, dict) and m.group(1) in value:
                    nxt.append(value[m.group(1)])
            elif m.group(2) is not None:
                if isinstance(value, list):
                    if m.group(2) == "*":
                        nxt.extend(value)
                    elif int(m.group(2)) < len(value):
                        nxt.append(value[int(m.group(2))])
                elif isinstance(value, dict) and m.group(2) == "*":
                    nxt.extend(value.values())
            elif isinstance(value, list):
                for item in value:
                    found = jsonpath(item, "." + m.group(3))
                    if found and str(found[0]) == m.group(4):
                        nxt.append(item)
        current = nxt
    return current


_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(name: str) -> tuple[int, int, int, str]:
    """Sort key of kube's version priority (smaller first): GA > beta > alpha, higher numbers first, then others.

    ``v2`` < ``v1`` < ``v1beta2`` < ``v1beta1`` < ``v1alpha1`` < ``foo`` (as
    k8s.io/apimachinery ``version.CompareKubeAwareVersionStrings``).
    """
    m = _VERSION.match(name)
    if m is None:
        return (3, 0, 0, name)
    stage = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    return (stage, -int(m.group(1)), -int(m.group(3) or 0), "")


def deprecation_warning(crd: Obj, version_name: str) -> str | None:
    """The Warning a request to a deprecated version gets (``deprecationWarning`` or kube's default), else None."""
    v = version(crd, version_name)
    if not v or not v.get("deprecated"):
        return None
    if v.get("deprecationWarning"):
        return str(v["deprecationWarning"])
    kind = names(crd).get("kind")
    msg = f"{group(crd)}/{version_name} {kind} is deprecated"
    newer = sorted((str(o.get("name")) for o in versions(crd) if o.get("served") and not o.get("deprecated")
                    and version_priority(str(o.get("name"))) < version_priority(version_name)), key=version_priority)
    return msg + (f"; use {group(crd)}/{newer[0]} {kind}" if newer else "")


APPROVAL_ANNOTATION = "api-approved.kubernetes.io"
APPROVAL_CONDITION = "KubernetesAPIApprovalPolicyConformant"
_ENHANCEMENTS_PR = "see https://github.com/kubernetes/enhancements/pull/1111"
_URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def protected_group(group_name: str) -> bool:
    """A group owned by the Kubernetes community: ``k8s.io``, ``kubernetes.io`` or a subdomain of either.

    Source: apiextensions-apiserver ``pkg/apihelpers`` IsProtectedCommunityGroup.
    """
    return any(group_name == g or group_name.endswith("." + g) for g in ("k8s.io", "kubernetes.io"))


def _is_request_url_with_host(value: str) -> bool:
    """Go's ``url.ParseRequestURI`` succeeds with a scheme and a host (the subset the approval check needs)."""
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        return False  # net/url: invalid control character in URL
    scheme = _URL_SCHEME.match(value)
    if scheme is None or not value[scheme.end():].startswith("//"):
        return False  # no scheme, or an opaque URL (no authority, no host)
    authority = re.split(r"[/?]", value[scheme.end() + 2:], maxsplit=1)[0]
    host = authority.rpartition("@")[2]
    return bool(host) and " " not in host


def approval_state(crd: Obj) -> tuple[str, str]:
    """(state, reason) of the ``api-approved.kubernetes.io`` annotation, as kube's GetAPIApprovalState.

    state is ``Missing`` (absent or empty), ``Bypassed`` (starts with ``unapproved``), ``Approved`` (a URL
    with a scheme and a host) or ``Invalid``; reason is kube's message for it (the condition's message and
    the validation error's detail). Source: apiextensions-apiserver ``pkg/apihelpers/helpers.go``.
    """
    annotations = _dict(_dict(crd.get("metadata")).get("annotations"))
    value = annotations.get(APPROVAL_ANNOTATION)
    value = value if isinstance(value, str) else ""
    if not value:
        return "Missing", f'protected groups must have approval annotation "{APPROVAL_ANNOTATION}", {_ENHANCEMENTS_PR}'
    if value.startswith("unapproved"):
        return "Bypassed", "not approved: " + go_quote(value)
    if _is_request_url_with_host(value):
        return "Approved", f"approved in {value}"
    return "Invalid", (f'protected groups must have approval annotation "{APPROVAL_ANNOTATION}" with either a URL '
                       f'or a reason starting with "unapproved", {_ENHANCEMENTS_PR}')



_APPROVAL_REASONS = {"Invalid": ("False", "InvalidAnnotation"), "Missing": ("False", "MissingAnnotation"),
                     "Approved": ("True", "ApprovedAnnotation"), "Bypassed": ("False", "UnapprovedAnnotation")}


def approval_condition(crd: Obj) -> tuple[str, str, str] | None:
    """(status, reason, message) of the KubernetesAPIApprovalPolicyConformant condition, None outside the
    protected groups (kube's apiapproval controller sets no condition there).

    Source: apiextensions-apiserver ``pkg/controller/apiapproval`` calculateCondition.
    """
    if not protected_group(group(crd)):
        return None
    state, reason = approval_state(crd)
    status, why = _APPROVAL_REASONS[state]
    return status, why, reason
