"""Job (batch/v1): the generated selector and pod-template labels, as kube-apiserver's Job strategy.

From ``pkg/registry/batch/job/strategy.go`` (``PrepareForCreate`` ->
``generateSelector``) and ``pkg/apis/batch/validation/validation.go``
(``validateGeneratedSelector``), "Jobs" ("Specifying your own Pod selector"):

- Unless ``spec.manualSelector`` is true, create adds to the pod template
  the labels ``batch.kubernetes.io/job-name`` and ``job-name`` (the Job's
  name) and ``batch.kubernetes.io/controller-uid`` and ``controller-uid``
  (its uid), each only when not already given, and adds
  ``batch.kubernetes.io/controller-uid: <uid>`` to ``spec.selector.matchLabels``
  when absent.
- A Job without labels takes its template's (``SetDefaults_Job``; kube applies
  it when the stored object is read back, so every response shows them).
- Validation (manualSelector not true): the template must carry those labels
  with exactly those values, and the selector must select the uid label
  (``"`selector` not auto-generated"``). With manualSelector true the
  selector is required.
"""

from __future__ import annotations

from typing import Any

from kapi.errors import Cause
from kapi.objectmeta import required
from kapi.values import as_dict as _dict

CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
JOB_NAME = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID = "controller-uid"
LEGACY_JOB_NAME = "job-name"
NOT_AUTO_GENERATED = "`selector` not auto-generated"

Obj = dict[str, Any]


def _manual(spec: Obj) -> bool:
    return spec.get("manualSelector") is True


def prepare_for_create(obj: Obj) -> None:
    """generateSelector (unless ``spec.manualSelector``) in place, using the object's final ``metadata.uid`` and
    ``metadata.name``; then job labels default to the template's when the Job has none."""
    meta = _dict(obj.get("metadata"))
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    name, uid = str(meta.get("name") or ""), str(meta.get("uid") or "")
    template = spec.get("template")
    if not isinstance(template, dict):
        template = spec["template"] = {}
    if not _manual(spec):
        tmeta = template.get("metadata")
        if not isinstance(tmeta, dict):
            tmeta = template["metadata"] = {}
        labels = tmeta.get("labels")
        if not isinstance(labels, dict):
            labels = tmeta["labels"] = {}
        for key in (LEGACY_JOB_NAME, JOB_NAME):
            labels.setdefault(key, name)
        for key in (LEGACY_CONTROLLER_UID, CONTROLLER_UID):
            labels.setdefault(key, uid)
        selector = spec.get("selector")
        if not isinstance(selector, dict):
            selector = spec["selector"] = {}
        match = selector.get("matchLabels")
        if not isinstance(match, dict):
            match = selector["matchLabels"] = {}
        match.setdefault(CONTROLLER_UID, uid)
    template_labels = _dict(_dict(template.get("metadata")).get("labels"))
    if template_labels and not _dict(meta.get("labels")) and isinstance(obj.get("metadata"), dict):
        obj["metadata"]["labels"] = dict(template_labels)


def _go_map(value: Obj) -> str:
    return "map[string]string{" + ", ".join(f'"{k}":"{v}"' for k, v in sorted(value.items())) + "}"


def _selector_string(selector: Obj) -> str:
    """A *metav1.LabelSelector as its generated String() prints it (field.Invalid's value)."""
    labels = "".join(f"{k}: {v}," for k, v in sorted(_dict(selector.get("matchLabels")).items()))
    exprs = ""
    for expr in selector.get("matchExpressions") or []:
        expr = _dict(expr)
        values = " ".join(str(v) for v in expr.get("values") or [])
        exprs += (f"LabelSelectorRequirement{{Key:{expr.get('key', '')},Operator:{expr.get('operator', '')},"
                  f"Values:[{values}],}},")
    return (f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},"
            f"MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}")


def _has_label(labels: Obj, path: str, key: str, expected: str) -> list[Cause]:
    """apivalidation.ValidateHasLabel."""
    if key not in labels:
        return [required(f"{path}.labels[{key}]", expected)]
    if labels[key] != expected:
        return [Cause("FieldValueInvalid", f"Invalid value: {_go_map(labels)}: must be '{expected}'",
                      f"{path}.labels[{key}]")]
    return []


def validate(obj: Obj, require_prefixed_labels: bool | None = None) -> list[Cause]:
    """The Job's selector checks (validateGeneratedSelector; selector required with manualSelector).

    ``require_prefixed_labels`` (kube's RequirePrefixedLabels: true on create,
    on update only when the stored Job has them) defaults to whether the
    template carries ``batch.kubernetes.io/controller-uid``. Never raises.
    """
    from kapi.kindvalidation import selector_matches

    meta, spec = _dict(obj.get("metadata")), _dict(obj.get("spec"))
    selector = spec.get("selector")
    if _manual(spec):
        return [required("spec.selector")] if selector is None else []
    tmeta = _dict(_dict(spec.get("template")).get("metadata"))
    if not isinstance(tmeta.get("labels"), dict) or not isinstance(selector, dict):
        return []
    labels = tmeta["labels"]
    name, uid = str(meta.get("name") or ""), str(meta.get("uid") or "")
    if require_prefixed_labels is None:
        require_prefixed_labels = CONTROLLER_UID in labels
    path = "spec.template.metadata"
    out = _has_label(labels, path, LEGACY_CONTROLLER_UID, uid) + _has_label(labels, path, LEGACY_JOB_NAME, name)
    if require_prefixed_labels:
        out += _has_label(labels, path, CONTROLLER_UID, uid) + _has_label(labels, path, JOB_NAME, name)
        expected = {CONTROLLER_UID: uid}
    else:
        expected = {LEGACY_CONTROLLER_UID: uid}
    if selector_matches(selector, expected) is not True:
        out.append(Cause("FieldValueInvalid", f"Invalid value: {_selector_string(selector)}: {NOT_AUTO_GENERATED}",
                         "spec.selector"))
    return out
