"""AppArmor profile validation of Pods and pod templates (``pkg/apis/core/validation/validation.go``).

The ``appArmorProfile`` field (ValidateAppArmorProfileField) of a pod's or a container's ``securityContext``,
the deprecated ``container.apparmor.security.beta.kubernetes.io/<container>`` annotations
(ValidateAppArmorPodAnnotations, ValidateAppArmorProfileFormat), and the create-time check that a field and
its annotation say the same (validateAppArmorAnnotationsAndFieldsMatchOnCreate, Pods only). The annotation to
field conversion of PrepareForCreate is ``kapi.kinds.core._apparmor_skew``.
"""

from __future__ import annotations

from typing import Any

from kapi.errors import Cause
from kapi.kinds.fields import not_supported
from kapi.objectmeta import forbidden, go_quote, invalid, required, too_long
from kapi.values import as_dict as _dict
from kapi.values import as_list as _list

APPARMOR_CONTAINER_PREFIX = "container.apparmor.security.beta.kubernetes.io/"  # v1.DeprecatedAppArmorBeta...
APPARMOR_MAX_LOCALHOST_PROFILE = 4095  # validation.go maxLocalhostProfileLength (PATH_MAX - 1, bytes)
APPARMOR_TYPES = ("Localhost", "RuntimeDefault", "Unconfined")
ANNOTATION_UNCONFINED = "unconfined"
ANNOTATION_RUNTIME_DEFAULT = "runtime/default"
ANNOTATION_LOCALHOST_PREFIX = "localhost/"
CONTAINER_SECTIONS = ("initContainers", "containers", "ephemeralContainers")  # podshelper.VisitContainersWithPath
MATCH_TYPE = "apparmor type in annotation and field must match"
MATCH_PROFILE = "apparmor profile in annotation and field must match"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"  # core.MirrorPodAnnotationKey


def validate_apparmor_profile(profile: Any, path: str) -> list[Cause]:
    """ValidateAppArmorProfileField of an ``appArmorProfile`` at ``path`` (absent or ``null``: nothing).

    ``type`` Localhost needs a ``localhostProfile`` (``Required value: must be set when AppArmor type is
    Localhost``, also for an empty one) that is not padded with whitespace (``must not be padded with
    whitespace``) and at most 4095 bytes (``Too long``); RuntimeDefault and Unconfined refuse one (``Invalid
    value: "<profile>": can only be set when AppArmor type is Localhost``); an empty type is ``Required value:
    type is required when appArmorProfile is set``; another ``Unsupported value``.
    """
    if not isinstance(profile, dict):
        return []
    kind = profile.get("type") or ""
    local = profile.get("localhostProfile")
    lpath = f"{path}.localhostProfile"
    out: list[Cause] = []
    if kind == "Localhost":
        if local is None:
            out.append(required(lpath, "must be set when AppArmor type is Localhost"))
        elif isinstance(local, str):
            if local.strip() != local:
                out.append(invalid(lpath, local, "must not be padded with whitespace"))
            elif not local:
                out.append(required(lpath, "must be set when AppArmor type is Localhost"))
            if len(local.encode()) > APPARMOR_MAX_LOCALHOST_PROFILE:
                out.append(too_long(lpath, APPARMOR_MAX_LOCALHOST_PROFILE))
    elif kind in ("RuntimeDefault", "Unconfined"):
        if local is not None:
            out.append(invalid(lpath, local, "can only be set when AppArmor type is Localhost"))
    elif kind == "":
        out.append(required(f"{path}.type", "type is required when appArmorProfile is set"))
    else:
        out.append(not_supported(f"{path}.type", kind, APPARMOR_TYPES))
    return out


def apparmor_profile_format_error(profile: Any) -> str | None:
    """ValidateAppArmorProfileFormat: None for ``""``, ``runtime/default``, ``unconfined`` and anything starting
    ``localhost/``; else ``invalid AppArmor profile name: "<profile>"``."""
    text = profile if isinstance(profile, str) else ""
    if text in ("", ANNOTATION_RUNTIME_DEFAULT, ANNOTATION_UNCONFINED) or text.startswith(ANNOTATION_LOCALHOST_PREFIX):
        return None
    return f"invalid AppArmor profile name: {go_quote(text)}"


def _container_names(spec: Any) -> set[str]:
    spec = _dict(spec)
    return {str(_dict(c).get("name", "")) for section in CONTAINER_SECTIONS for c in _list(spec.get(section))}


def validate_apparmor_annotations(annotations: Any, spec: Any, path: str) -> list[Cause]:
    """ValidateAppArmorPodAnnotations (part of ValidatePodSpecificAnnotations) of the annotations at ``path``
    (``metadata.annotations`` of a Pod, ``<template>.metadata.annotations`` of a pod template): each
    ``container.apparmor.security.beta.kubernetes.io/<name>`` key must name a container of ``spec`` (``Invalid
    value: "<name>": container not found``) and its value must be a profile :func:`apparmor_profile_format_error`
    accepts (``Invalid value: "<value>": invalid AppArmor profile name: "<value>"``); in the annotations'
    order (kube: Go map order)."""
    names = _container_names(spec)
    out: list[Cause] = []
    for key, value in _dict(annotations).items():
        if not isinstance(key, str) or not key.startswith(APPARMOR_CONTAINER_PREFIX):
            continue
        kpath = f"{path}[{key}]"
        name = key[len(APPARMOR_CONTAINER_PREFIX):]
        if name not in names:
            out.append(invalid(kpath, name, "container not found"))
        error = apparmor_profile_format_error(value)
        if error is not None:
            out.append(invalid(kpath, value if isinstance(value, str) else "", error))
    return out


def validate_apparmor_fields_match(pod: Any) -> list[Cause]:
    """validateAppArmorAnnotationsAndFieldsMatchOnCreate (ValidatePodCreate only): for each container (init,
    regular, ephemeral) whose effective profile (its own ``securityContext.appArmorProfile``, else the Pod's) is
    set and that has an AppArmor annotation, the annotation must say the same: ``<container>.securityContext.
    appArmorProfile.type: Forbidden: apparmor type in annotation and field must match``, or for a Localhost
    profile naming another profile ``....localhostProfile: Forbidden: apparmor profile in annotation and field
    must match``. A Windows Pod (``spec.os.name: windows``) is not checked."""
    pod = _dict(pod)
    spec = _dict(pod.get("spec"))
    if _dict(spec.get("os")).get("name") == "windows":
        return []
    annotations = _dict(_dict(pod.get("metadata")).get("annotations"))
    pod_profile = _dict(spec.get("securityContext")).get("appArmorProfile")
    out: list[Cause] = []
    for section in CONTAINER_SECTIONS:
        for i, container in enumerate(_list(spec.get(section))):
            container = _dict(container)
            profile = _dict(container.get("securityContext")).get("appArmorProfile")
            if profile is None:
                profile = pod_profile
            key = APPARMOR_CONTAINER_PREFIX + str(container.get("name", ""))
            if not isinstance(profile, dict) or key not in annotations:
                continue
            value = annotations[key] if isinstance(annotations[key], str) else ""
            apath = f"spec.{section}[{i}].securityContext.appArmorProfile"
            kind = profile.get("type")
            if kind == "Unconfined" and value != ANNOTATION_UNCONFINED \
                    or kind == "RuntimeDefault" and value != ANNOTATION_RUNTIME_DEFAULT \
                    or kind == "Localhost" and not value.startswith(ANNOTATION_LOCALHOST_PREFIX):
                out.append(forbidden(f"{apath}.type", MATCH_TYPE))
            elif kind == "Localhost" and value[len(ANNOTATION_LOCALHOST_PREFIX):] != profile.get("localhostProfile"):
                out.append(forbidden(f"{apath}.localhostProfile", MATCH_PROFILE))
    return out


def validate_pod_annotation_updates(new: Any, old: Any, path: str = "metadata.annotations") -> list[Cause]:
    """ValidatePodSpecificAnnotationUpdates' update rules (a Pod update or ``/status`` write; ``new``/``old`` the
    two Pods): an AppArmor annotation or the mirror pod annotation ``kubernetes.io/config.mirror`` may not change
    (``Forbidden: may not remove or update AppArmor annotations`` / ``... mirror pod annotation``, the old keys
    first) nor be added (``Forbidden: may not add AppArmor annotations`` / ``... mirror pod annotation``)."""
    new_annotations = _dict(_dict(_dict(new).get("metadata")).get("annotations"))
    old_annotations = _dict(_dict(_dict(old).get("metadata")).get("annotations"))
    out: list[Cause] = []
    for key, value in old_annotations.items():
        if key in new_annotations and new_annotations[key] == value:
            continue
        if isinstance(key, str) and key.startswith(APPARMOR_CONTAINER_PREFIX):
            out.append(forbidden(f"{path}[{key}]", "may not remove or update AppArmor annotations"))
        if key == MIRROR_POD_ANNOTATION:
            out.append(forbidden(f"{path}[{key}]", "may not remove or update mirror pod annotation"))
    for key in new_annotations:
        if key in old_annotations:
            continue
        if isinstance(key, str) and key.startswith(APPARMOR_CONTAINER_PREFIX):
            out.append(forbidden(f"{path}[{key}]", "may not add AppArmor annotations"))
        if key == MIRROR_POD_ANNOTATION:
            out.append(forbidden(f"{path}[{key}]", "may not add mirror pod annotation"))
    return out
