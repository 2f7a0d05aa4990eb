"""Per-container validation beyond what :func:`kapi.kinds.podspec._containers` already does, message for message.

From ``pkg/apis/core/validation/validation.go`` (kube 1.37; read at a 1.35+ tree with the ContainerRestartRules and
EnvFiles gates beta and on by default, RestartAllContainersOnContainerExits alpha and off): the parts of
``validateContainerCommon`` kapi lacked (terminationMessagePolicy, env ``valueFrom`` (validateEnvVarValueFrom),
ValidateEnvFrom, the rest of ValidateVolumeMounts, ValidateVolumeDevices, validatePullPolicy,
validateResizePolicy), the container-list rules of validateContainers / validateInitContainers /
validateEphemeralContainers (container ``restartPolicy`` and ``restartPolicyRules``, checkHostPortConflicts, a
non-sidecar init container's ``RestartContainer`` resize policy, the ephemeral allow-list, ``targetContainerName``
and subPath bans), validateContainerOnlyForPod (image whitespace) and ValidatePodSpec's closing
validateFileKeyRefVolumes.

kube's path quirks are kept because clients see them: a mount's ``subPath``, ``subPathExpr``,
``mountPropagation`` and ``recursiveReadOnly`` errors sit at ``<container>.volumeMounts.<field>`` (no index);
env ``valueFrom`` and ``envFrom`` source-count errors print ``Invalid value: ""``, the envFrom one at
``<container>.envFrom`` (no index); resizePolicy's Required / Unsupported sit at ``<container>.resizePolicy``
(Duplicate at ``resizePolicy[<i>]``); an init container's host-port Duplicate is always at
``initContainers[0]`` (kube checks each alone, as a one-element list).

Every public function takes the container's JSON (after v1 defaulting) and its path (``spec.containers[0]``) and
returns the causes in kube's order; values of the wrong JSON type are skipped (the schema layer reports them).
``volumes`` arguments are ``{name: volume JSON}`` of the Pod's *valid* volumes (kube's ValidateVolumes map: a
volume with any error is not registered).
"""

from __future__ import annotations

from typing import Any

from kapi.errors import Cause
from kapi.kinds.fields import duplicate, not_found, not_supported, too_many
from kapi.kinds.podvolumes import (
    _local_descending,
    _no_backsteps,
    _object_field_selector,
    _resource_field_selector,
    _split_subscript,
)
from kapi.objectmeta import _name_is_dns_subdomain, forbidden, invalid, required
from kapi.validation import is_config_map_key, is_dns1123_label, is_relaxed_env_var_name
from kapi.values import as_dict as _dict
from kapi.values import as_list as _list

Obj = dict[str, Any]

TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")  # kube's literal order, not sorted
PULL_POLICIES = ("Always", "IfNotPresent", "Never")  # sets.List(supportedPullPolicies)
MOUNT_PROPAGATIONS = ("Bidirectional", "HostToContainer", "None")  # sorted
RECURSIVE_READ_ONLY = ("Disabled", "Enabled", "IfPossible")  # sorted
RESIZE_RESOURCES = ("cpu", "memory")  # sets.List(supportedResizeResources)
RESIZE_POLICIES = ("NotRequired", "RestartContainer")  # sets.List(supportedResizePolicies)
CONTAINER_RESTART_POLICIES = ("Always", "Never", "OnFailure")  # sets.List(supportedContainerRestartPolicies)
RESTART_RULE_ACTIONS = ("Restart",)  # without RestartAllContainersOnContainerExits (alpha, off)
RESTART_RULE_OPERATORS = ("In", "NotIn")
MAX_RESTART_RULES = 20
MAX_EXIT_CODES = 255
# validEnvDownwardAPIFieldPathExpressions, sorted (labels/annotations only through a subscript)
ENV_FIELD_PATHS = ("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
                   "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")
ENV_SOURCES = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef")
NO_ENV_SOURCE = "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"
NO_ENV_SOURCE_NO_FILES = "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"
ENV_VALUE_AND_SOURCE = "may not be specified when `value` is not empty"
MORE_THAN_ONE_FIELD = "may not have more than one field specified at a time"
NO_ENV_FROM_SOURCE = "must specify one of: `configMapRef` or `secretRef`"
BIDIRECTIONAL_MSG = "Bidirectional mount propagation is available only to privileged containers"
RRO_NEEDS_READ_ONLY = "may only be specified when readOnly is true"
RRO_NEEDS_NO_PROPAGATION = "may only be specified when mountPropagation is None or not specified"
BLOCK_NEEDS_PVC = "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"
EPHEMERAL_FORBIDDEN = "cannot be set for an Ephemeral Container"
NON_INIT_RESTART = "may not be set for non-init containers"
RULES_NEED_POLICY = "must specify restartPolicy when restart rules are used"
SIDECAR_RULES = "restartPolicyRules are not allowed for init containers with restart policy Always"
NEVER_NEEDS_NOT_REQUIRED = "must be 'NotRequired' when pod `restartPolicy` is 'Never'"
INIT_RESTART_CONTAINER = "must not be set to 'RestartContainer' for non-sidecar initContainers"
IMAGE_WHITESPACE = "must not have leading or trailing whitespace"
# core.EphemeralContainerCommon's fields in Go declaration order that allowedEphemeralContainerFields does not allow,
# with how a value counts as set (reflect.DeepEqual against the zero value): "ptr" a pointer (any non-null value),
# "slice" (any list, even empty: a decoded ``[]`` is not a nil slice), "struct" (ResourceRequirements: one of its
# members set).
_EPHEMERAL_DISALLOWED = (("ports", "slice"), ("resources", "struct"), ("resizePolicy", "slice"),
                         ("restartPolicy", "ptr"), ("restartPolicyRules", "slice"), ("livenessProbe", "ptr"),
                         ("readinessProbe", "ptr"), ("startupProbe", "ptr"), ("lifecycle", "ptr"))
# unicode.IsSpace, what strings.TrimSpace trims (Python's str.strip would also trim U+001C-U+001F)
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029" \
            "\u202f\u205f\u3000"


def _text(value: Any) -> str | None:
    """A Go string field: absent/null is ``""``; a non-string is None (the schema's to report; skip the check)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else None


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _set(value: Any) -> bool:
    """A Go pointer or member is set: the JSON key is there and not null."""
    return value is not None


# ------------------------------------------------------------ validateContainerCommon's steps

def validate_termination_message_policy(container: Obj, path: str) -> list[Cause]:
    """validateContainerCommon's terminationMessagePolicy switch (right after ``image``): ``File`` or
    ``FallbackToLogsOnError``; ``""`` is ``<path>.terminationMessagePolicy: Required value``, another value
    ``Unsupported value: "x": supported values: "File", "FallbackToLogsOnError"``. Absent is not checked: v1
    defaulting sets ``File`` (also for ``""``) before validation, so only a body that skipped it lacks one."""
    if "terminationMessagePolicy" not in _dict(container):
        return []
    policy = _text(_dict(container).get("terminationMessagePolicy"))
    fpath = f"{path}.terminationMessagePolicy"
    if policy is None or policy in TERMINATION_MESSAGE_POLICIES:
        return []
    if not policy:
        return [required(fpath)]
    return [not_supported(fpath, policy, TERMINATION_MESSAGE_POLICIES)]


def _env_field_ref(ref: Obj, path: str) -> list[Cause]:
    """validateObjectFieldSelector with validEnvDownwardAPIFieldPathExpressions.

    :func:`kapi.kinds.podvolumes._object_field_selector` does every step but the last with the volume's expression
    set; only its final ``Unsupported value`` depends on the set, so its causes are kept unless that is all it found
    (or it found nothing for a non-subscripted path), in which case the env set decides.
    """
    causes = _object_field_selector(ref, path)
    fpath = f"{path}.fieldPath"
    if causes and not (len(causes) == 1 and causes[0].type == "FieldValueNotSupported" and causes[0].field == fpath):
        return causes
    field_path = _str(ref.get("fieldPath"))
    if _split_subscript(field_path) is not None:
        return causes  # a subscripted label/annotation: the key checks above are all there is
    internal = "spec.nodeName" if field_path == "spec.host" else field_path  # ConvertDownwardAPIFieldLabel
    return [] if internal in ENV_FIELD_PATHS else [not_supported(fpath, internal, ENV_FIELD_PATHS)]


def _env_resource_ref(ref: Obj, path: str) -> list[Cause]:
    """validateContainerResourceFieldSelector with ``volume`` false: as a volume's
    (:func:`kapi.kinds.podvolumes._resource_field_selector`, same expressions and hugepages prefixes) but an empty
    ``containerName`` is not Required (the env's own container is meant)."""
    if not _str(ref.get("containerName")):
        ref = {**ref, "containerName": "-"}  # only the Required check reads it
    return _resource_field_selector(ref, path)


def _key_selector(ref: Obj, path: str) -> list[Cause]:
    """validateConfigMapKeySelector / validateSecretKeySelector: ``name`` a DNS-1123 subdomain (checked even when
    empty: ``Invalid value: ""``), then ``key`` Required or a config map key (IsConfigMapKey)."""

    out: list[Cause] = []
    name, key = _text(ref.get("name")), _text(ref.get("key"))
    if name is not None:
        out.extend(invalid(f"{path}.name", name, msg) for msg in _name_is_dns_subdomain(name, False))
    if key is not None:
        if not key:
            out.append(required(f"{path}.key"))
        else:
            out.extend(invalid(f"{path}.key", key, msg) for msg in is_config_map_key(key))
    return out


def _file_key_ref(ref: Obj, path: str) -> list[Cause]:
    """validateFileKeySelector (EnvFiles): ``key`` Required or a relaxed env var name, ``volumeName`` Required or a
    DNS-1123 label, ``path`` Required or without ``..`` elements (``must not contain '..'``)."""

    out: list[Cause] = []
    key, volume, target = _text(ref.get("key")), _text(ref.get("volumeName")), _text(ref.get("path"))
    if key is not None:
        if not key:
            out.append(required(f"{path}.key"))
        else:
            out.extend(invalid(f"{path}.key", key, msg) for msg in is_relaxed_env_var_name(key))
    if volume is not None:
        if not volume:
            out.append(required(f"{path}.volumeName"))
        else:
            out.extend(invalid(f"{path}.volumeName", volume, msg) for msg in is_dns1123_label(volume))
    if target is not None:
        out.extend([required(f"{path}.path")] if not target else _no_backsteps(target, f"{path}.path"))
    return out


def env_var_value_from(var: Any, path: str, *, env_files: bool = True) -> list[Cause]:
    """validateEnvVarValueFrom of one env var; ``path`` is the var's (``spec.containers[0].env[2]``), causes sit
    under ``<path>.valueFrom``. kube calls it per var right after that var's name checks (ValidateEnv), so
    :func:`kapi.kinds.podspec._env` can call it inside its loop for kube's exact order.

    Each set source is checked in order (fieldRef: validateObjectFieldSelector with the env field paths;
    resourceFieldRef: containerName optional; configMapKeyRef / secretKeyRef: name and key; fileKeyRef: key,
    volumeName, path), then: none set ``Invalid value: "": must specify one of: ...`` (``env_files`` False, the
    EnvFiles gate off, drops `` or `fileKeyRef``` from the list); a set ``value`` ``may not be specified when `value`
    is not empty``; else more than one ``may not have more than one field specified at a time``.
    """
    var = _dict(var)
    source = var.get("valueFrom")
    if not isinstance(source, dict):
        return []
    vpath = f"{path}.valueFrom"
    out: list[Cause] = []
    count = 0
    checks = {"fieldRef": _env_field_ref, "resourceFieldRef": _env_resource_ref, "configMapKeyRef": _key_selector,
              "secretKeyRef": _key_selector, "fileKeyRef": _file_key_ref}
    for key in ENV_SOURCES:
        ref = source.get(key)
        if not _set(ref) or (key == "fileKeyRef" and not env_files):
            continue
        count += 1
        if isinstance(ref, dict):
            out.extend(checks[key](ref, f"{vpath}.{key}"))
    if count == 0:
        out.append(invalid(vpath, "", NO_ENV_SOURCE if env_files else NO_ENV_SOURCE_NO_FILES))
    elif _str(var.get("value")):
        out.append(invalid(vpath, "", ENV_VALUE_AND_SOURCE))
    elif count > 1:
        out.append(invalid(vpath, "", MORE_THAN_ONE_FIELD))
    return out


def validate_env_value_from(container: Obj, path: str, *, env_files: bool = True) -> list[Cause]:
    """validateEnvVarValueFrom for every ``env`` var of the container at ``path`` (:func:`env_var_value_from`, under
    ``<path>.env[<i>].valueFrom``). Called after kapi's env name checks this matches kube only when one var has
    errors; call :func:`env_var_value_from` inside the name loop for the exact interleaving."""
    out: list[Cause] = []
    for i, var in enumerate(_list(_dict(container).get("env"))):
        out.extend(env_var_value_from(var, f"{path}.env[{i}]", env_files=env_files))
    return out


def validate_env_from(container: Obj, path: str) -> list[Cause]:
    """ValidateEnvFrom of the container's ``envFrom`` (validateContainerCommon: right after ValidateEnv).

    Per source: a non-empty ``prefix`` must be a relaxed env var name (RelaxedEnvironmentVariableValidation, GA);
    ``configMapRef`` / ``secretRef`` ``name`` Required, else a DNS-1123 subdomain with generateName rules (a trailing
    ``-`` is allowed: ValidateConfigMapName / ValidateSecretName with prefix true); then none set
    ``<path>.envFrom: Invalid value: "": must specify one of: `configMapRef` or `secretRef``` or both set ``may not
    have more than one field specified at a time`` (both at ``envFrom``, no index, as kube).
    """

    out: list[Cause] = []
    lpath = f"{path}.envFrom"
    for i, source in enumerate(_list(_dict(container).get("envFrom"))):
        source = _dict(source)
        ipath = f"{lpath}[{i}]"
        prefix = _str(source.get("prefix"))
        if prefix:
            out.extend(invalid(f"{ipath}.prefix", prefix, msg) for msg in is_relaxed_env_var_name(prefix))
        count = 0
        for key in ("configMapRef", "secretRef"):
            ref = source.get(key)
            if not _set(ref):
                continue
            count += 1
            name = _text(_dict(ref).get("name")) if isinstance(ref, dict) else None
            if name is None:
                continue
            npath = f"{ipath}.{key}.name"
            if not name:
                out.append(required(npath))
            else:
                out.extend(invalid(npath, name, msg) for msg in _name_is_dns_subdomain(name, True))
        if count == 0:
            out.append(invalid(lpath, "", NO_ENV_FROM_SOURCE))
        elif count > 1:
            out.append(invalid(lpath, "", MORE_THAN_ONE_FIELD))
    return out


def device_map(container: Obj) -> dict[str, str]:
    """GetVolumeDeviceMap: name -> devicePath (a later device with the same name wins)."""
    return {_str(d.get("name")): _str(d.get("devicePath")) for d in map(_dict, _list(container.get("volumeDevices")))}


def _mount_map(container: Obj) -> dict[str, str]:
    """GetVolumeMountMap: name -> mountPath (a later mount with the same name wins)."""
    return {_str(m.get("name")): _str(m.get("mountPath")) for m in map(_dict, _list(container.get("volumeMounts")))}


def _privileged(container: Obj) -> bool:
    return _dict(container.get("securityContext")).get("privileged") is True


def volume_mount_extras(container: Obj, path: str, index: int, devices: dict[str, str] | None = None
                        ) -> tuple[list[Cause], list[Cause]]:
    """ValidateVolumeMounts' checks of mount ``index`` that kapi's ``_volume_mounts`` lacks, split around the one
    it has in the middle: ``(before, after)``.

    kube's order per mount: name Required, name Not found, mountPath Required, mountPath ``must be unique``
    (kapi's), then ``before``: name ``must not already exist in volumeDevices``, mountPath ``must not already exist
    as a path in volumeDevices``, ``subPath`` relative without ``..`` (validateLocalDescendingPath at
    ``<path>.volumeMounts.subPath``, no index); then kapi's ``subPathExpr and subPath are mutually exclusive``; then
    ``after``: ``subPathExpr`` relative without ``..`` (``<path>.volumeMounts.subPathExpr``), ``mountPropagation``
    (``Unsupported value`` among Bidirectional/HostToContainer/None, Bidirectional ``Forbidden`` unless
    ``securityContext.privileged``), ``recursiveReadOnly`` (Disabled; Enabled/IfPossible need ``readOnly: true`` and
    a propagation None or unset; else ``Unsupported value``), the last three at ``<path>.volumeMounts.<field>``.
    ``devices`` is :func:`device_map` of the container (computed when None).
    """
    container = _dict(container)
    mounts = _list(container.get("volumeMounts"))
    if not 0 <= index < len(mounts):
        return [], []
    if devices is None:
        devices = device_map(container)
    mount = _dict(mounts[index])
    lpath, mpath = f"{path}.volumeMounts", f"{path}.volumeMounts[{index}]"
    name, mount_path = _str(mount.get("name")), _str(mount.get("mountPath"))
    before: list[Cause] = []
    if name in devices:
        before.append(invalid(f"{mpath}.name", name, "must not already exist in volumeDevices"))
    if mount_path in devices.values():
        before.append(invalid(f"{mpath}.mountPath", mount_path, "must not already exist as a path in volumeDevices"))
    sub_path, sub_path_expr = _str(mount.get("subPath")), _str(mount.get("subPathExpr"))
    if sub_path:
        before.extend(_local_descending(sub_path, f"{lpath}.subPath"))
    after: list[Cause] = []
    if sub_path_expr:
        after.extend(_local_descending(sub_path_expr, f"{lpath}.subPathExpr"))
    propagation = mount.get("mountPropagation")
    if isinstance(propagation, str):
        ppath = f"{lpath}.mountPropagation"
        if propagation not in MOUNT_PROPAGATIONS:
            after.append(not_supported(ppath, propagation, MOUNT_PROPAGATIONS))
        if propagation == "Bidirectional" and not _privileged(container):
            after.append(forbidden(ppath, BIDIRECTIONAL_MSG))
    rro = mount.get("recursiveReadOnly")
    if isinstance(rro, str):
        rpath = f"{lpath}.recursiveReadOnly"
        if rro in ("Enabled", "IfPossible"):
            if mount.get("readOnly") is not True:
                after.append(forbidden(rpath, RRO_NEEDS_READ_ONLY))
            if _set(propagation) and propagation != "None":
                after.append(forbidden(rpath, RRO_NEEDS_NO_PROPAGATION))
        elif rro != "Disabled":
            after.append(not_supported(rpath, rro, RECURSIVE_READ_ONLY))
    return before, after


def validate_volume_mounts(container: Obj, path: str) -> list[Cause]:
    """:func:`volume_mount_extras` of every mount, ``before`` then ``after`` per mount (the kube order when kapi's
    ``_volume_mounts`` runs first and at most one mount has errors; for the exact interleaving call
    :func:`volume_mount_extras` inside ``_volume_mounts``' loop: ``before`` after the ``must be unique`` check,
    ``after`` after the ``subPathExpr and subPath are mutually exclusive`` check)."""
    container = _dict(container)
    devices = device_map(container)
    out: list[Cause] = []
    for i in range(len(_list(container.get("volumeMounts")))):
        before, after = volume_mount_extras(container, path, i, devices)
        out.extend(before)
        out.extend(after)
    return out


def validate_volume_devices(container: Obj, path: str, volumes: dict[str, Any]) -> list[Cause]:
    """ValidateVolumeDevices of the container's ``volumeDevices`` (validateContainerCommon: after volumeMounts).

    Per device: name Required; name ``must be unique``; a volume that is no ``persistentVolumeClaim`` or
    ``ephemeral`` ``can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode``, an
    unknown one ``Not found``; devicePath Required; devicePath ``must be unique``; a devicePath with a ``..`` element
    ``can not contain backsteps ('..')`` (else it is remembered, even empty); name ``must not already exist in
    volumeMounts``; devicePath ``must not already exist as a path in volumeMounts``. ``volumes`` maps the Pod's valid
    volume names to their JSON.
    """
    container = _dict(container)
    mounts = _mount_map(container)
    lpath = f"{path}.volumeDevices"
    out: list[Cause] = []
    paths: set[str] = set()
    names: set[str] = set()
    for i, device in enumerate(_list(container.get("volumeDevices"))):
        device = _dict(device)
        dpath = f"{lpath}[{i}]"
        name, device_path = _str(device.get("name")), _str(device.get("devicePath"))
        if not name:
            out.append(required(f"{dpath}.name"))
        if name in names:
            out.append(invalid(f"{dpath}.name", name, "must be unique"))
        if name in volumes:
            source = _dict(volumes[name])
            if not _set(source.get("persistentVolumeClaim")) and not _set(source.get("ephemeral")):
                out.append(invalid(f"{dpath}.name", name, BLOCK_NEEDS_PVC))
        else:
            out.append(not_found(f"{dpath}.name", name))
        if not device_path:
            out.append(required(f"{dpath}.devicePath"))
        if device_path in paths:
            out.append(invalid(f"{dpath}.devicePath", device_path, "must be unique"))
        if device_path and _no_backsteps(device_path, f"{lpath}.devicePath"):
            out.append(invalid(f"{dpath}.devicePath", device_path, "can not contain backsteps ('..')"))
        else:
            paths.add(device_path)
        if name in mounts:
            out.append(invalid(f"{dpath}.name", name, "must not already exist in volumeMounts"))
        if device_path in mounts.values():
            out.append(invalid(f"{dpath}.devicePath", device_path, "must not already exist as a path in volumeMounts"))
        if name:
            names.add(name)
    return out


def validate_pull_policy(container: Obj, path: str) -> list[Cause]:
    """validatePullPolicy of ``imagePullPolicy`` (validateContainerCommon: after volumeDevices, before resources):
    ``""`` ``Required value``; not Always/IfNotPresent/Never ``Unsupported value``. Absent is not checked (v1
    defaulting sets it, also for ``""``, before validation)."""
    if "imagePullPolicy" not in _dict(container):
        return []
    policy = _text(_dict(container).get("imagePullPolicy"))
    fpath = f"{path}.imagePullPolicy"
    if policy is None or policy in PULL_POLICIES:
        return []
    return [required(fpath)] if not policy else [not_supported(fpath, policy, PULL_POLICIES)]


def validate_resize_policy(container: Obj, path: str, pod_restart_policy: Any = "Always") -> list[Cause]:
    """validateResizePolicy of ``resizePolicy`` (validateContainerCommon: after resources, before securityContext).

    Per entry: a resourceName seen before ``<path>.resizePolicy[<i>]: Duplicate value``; resourceName ``""``
    ``<path>.resizePolicy: Required value``, not cpu/memory ``Unsupported value``; restartPolicy ``""`` Required,
    not NotRequired/RestartContainer ``Unsupported value`` (both at ``resizePolicy``, no index); with the Pod's
    ``restartPolicy`` (``pod_restart_policy``) Never, a restartPolicy other than NotRequired ``Invalid value:
    "<policy>": must be 'NotRequired' when pod `restartPolicy` is 'Never'``.
    """
    lpath = f"{path}.resizePolicy"
    out: list[Cause] = []
    seen: set[str] = set()
    for i, entry in enumerate(_list(_dict(container).get("resizePolicy"))):
        entry = _dict(entry)
        resource, policy = _text(entry.get("resourceName")), _text(entry.get("restartPolicy"))
        if resource is not None:
            if resource in seen:
                out.append(duplicate(f"{lpath}[{i}]", resource))
            seen.add(resource)
            if not resource:
                out.append(required(lpath))
            elif resource not in RESIZE_RESOURCES:
                out.append(not_supported(lpath, resource, RESIZE_RESOURCES))
        if policy is not None:
            if not policy:
                out.append(required(lpath))
            elif policy not in RESIZE_POLICIES:
                out.append(not_supported(lpath, policy, RESIZE_POLICIES))
            if pod_restart_policy == "Never" and policy != "NotRequired":
                out.append(invalid(lpath, policy, NEVER_NEEDS_NOT_REQUIRED))
    return out


# ------------------------------------------------------------ container-list rules

def _restart_policy_rules(container: Obj, path: str) -> list[Cause]:
    """validateContainerRestartPolicy (ContainerRestartRules on): the container ``restartPolicy`` (``Required`` with
    rules but no policy; else Always/Never/OnFailure), at most 20 ``restartPolicyRules``, each rule's ``action``
    Restart and ``exitCodes`` Required (``must be specified``) with operator In/NotIn and at most 255 values."""
    out: list[Cause] = []
    policy = container.get("restartPolicy")
    rules = _list(container.get("restartPolicyRules"))
    if policy is None:
        if not rules:
            return out
        out.append(required(f"{path}.restartPolicy", RULES_NEED_POLICY))
    elif isinstance(policy, str) and policy not in CONTAINER_RESTART_POLICIES:
        out.append(not_supported(f"{path}.restartPolicy", policy, CONTAINER_RESTART_POLICIES))
    rpath = f"{path}.restartPolicyRules"
    if len(rules) > MAX_RESTART_RULES:
        out.append(too_many(rpath, len(rules), MAX_RESTART_RULES))
    for i, rule in enumerate(rules):
        rule = _dict(rule)
        ipath = f"{rpath}[{i}]"
        action = _text(rule.get("action"))
        if action is not None and action not in RESTART_RULE_ACTIONS:
            out.append(not_supported(f"{ipath}.action", action, RESTART_RULE_ACTIONS))
        codes = rule.get("exitCodes")
        if not _set(codes):
            out.append(required(f"{ipath}.exitCodes", "must be specified"))
            continue
        codes = _dict(codes)
        operator = _text(codes.get("operator"))
        if operator is not None and operator not in RESTART_RULE_OPERATORS:
            out.append(not_supported(f"{ipath}.exitCodes.operator", operator, RESTART_RULE_OPERATORS))
        values = _list(codes.get("values"))
        if len(values) > MAX_EXIT_CODES:
            out.append(too_many(f"{ipath}.exitCodes.values", len(values), MAX_EXIT_CODES))
    return out


def validate_container_restart_policy(container: Obj, path: str, *, init: bool = False,
                                      restart_rules: bool = True) -> list[Cause]:
    """The container-level ``restartPolicy`` / ``restartPolicyRules`` rules.

    Regular container (validateContainers, last per-container step, after the probes): with ContainerRestartRules
    (``restart_rules``, on by default since 1.35) validateContainerRestartPolicy (:func:`_restart_policy_rules`);
    without it a set policy is ``<path>.restartPolicy: Forbidden: may not be set for non-init containers``.

    Init container (``init``; validateInitContainerRestartPolicy, right after validateContainerCommon): rules without
    a policy ``Required value: must specify restartPolicy when restart rules are used``; policy Always with rules
    ``<path>.restartPolicyRules: Forbidden: restartPolicyRules are not allowed for init containers with restart
    policy Always``; another policy validateContainerRestartPolicy. Without ``restart_rules`` only Always is
    supported (``Unsupported value: "x": supported values: "Always"``).
    """
    container = _dict(container)
    policy = container.get("restartPolicy")
    if not init:
        if restart_rules:
            return _restart_policy_rules(container, path)
        return [forbidden(f"{path}.restartPolicy", NON_INIT_RESTART)] if _set(policy) else []
    rules = _list(container.get("restartPolicyRules"))
    if policy is None:
        return [required(f"{path}.restartPolicy", RULES_NEED_POLICY)] if rules and restart_rules else []
    if not isinstance(policy, str):
        return []
    if not restart_rules:
        return [] if policy == "Always" else [not_supported(f"{path}.restartPolicy", policy, ("Always",))]
    if policy == "Always":
        return [forbidden(f"{path}.restartPolicyRules", SIDECAR_RULES)] if rules else []
    return _restart_policy_rules(container, path)


def validate_init_container_resize_policy(container: Obj, path: str) -> list[Cause]:
    """validateInitContainers' last step for a non-sidecar init container (``restartPolicy`` not Always): each
    ``resizePolicy[<j>].restartPolicy`` RestartContainer is ``Invalid value: "RestartContainer": must not be set to
    'RestartContainer' for non-sidecar initContainers`` (on create; kube's update keeps an existing one).
    (AllowSidecarResizePolicy is on with InPlacePodVerticalScaling GA, so a resizePolicy itself is allowed.)"""
    container = _dict(container)
    if container.get("restartPolicy") == "Always":
        return []
    return [invalid(f"{path}.resizePolicy[{j}].restartPolicy", "RestartContainer", INIT_RESTART_CONTAINER)
            for j, entry in enumerate(_list(container.get("resizePolicy")))
            if _dict(entry).get("restartPolicy") == "RestartContainer"]


def validate_host_port_conflicts(containers: list[Any], path: str) -> list[Cause]:
    """checkHostPortConflicts / AccumulateUniqueHostPorts over ``containers`` at the list path ``path``
    (``spec.containers``): each non-zero ``hostPort`` keyed ``<protocol>/<hostIP>/<hostPort>`` (``TCP//80`` without
    a hostIP); a repeat is ``<path>[<i>].ports[<j>].hostPort: Duplicate value: "TCP//80"``.

    validateContainers calls it once after all regular containers; validateInitContainers once per init container
    with ``[container]`` and the list path, so an init container's repeat is always reported at ``<path>[0]``.
    """
    out: list[Cause] = []
    seen: set[str] = set()
    for i, container in enumerate(containers):
        for j, port in enumerate(_list(_dict(container).get("ports"))):
            port = _dict(port)
            host_port = port.get("hostPort")
            if not isinstance(host_port, int) or isinstance(host_port, bool) or host_port == 0:
                continue
            key = f"{_str(port.get('protocol'))}/{_str(port.get('hostIP'))}/{host_port}"
            if key in seen:
                out.append(duplicate(f"{path}[{i}].ports[{j}].hostPort", key))
            else:
                seen.add(key)
    return out


def validate_image_whitespace(container: Obj, path: str) -> list[Cause]:
    """validateContainerOnlyForPod: an ``image`` with leading or trailing whitespace (Go's unicode.IsSpace) is
    ``<path>.image: Invalid value: " x": must not have leading or trailing whitespace``. kube runs it for ephemeral
    containers (validateEphemeralContainers, right after validateContainerCommon) and, for Pods only (not
    templates), for containers and init containers (ValidatePodCreate's validateContainersOnlyForPod)."""
    image = _dict(container).get("image")
    if isinstance(image, str) and image != image.strip(_GO_SPACE):
        return [invalid(f"{path}.image", image, IMAGE_WHITESPACE)]
    return []


def _is_set(value: Any, kind: str) -> bool:
    if value is None:
        return False
    if kind == "struct":  # core.ResourceRequirements{Limits, Requests, Claims}: any member non-nil
        return isinstance(value, dict) and any(value.get(k) is not None for k in ("limits", "requests", "claims"))
    return True


def validate_ephemeral_container(container: Obj, path: str, other_names: set[str] | frozenset[str]) -> list[Cause]:
    """validateEphemeralContainers' own rules for one ephemeral container, after its validateContainerCommon, image
    whitespace check and name Duplicate: a ``targetContainerName`` not among ``other_names`` (the names of the
    Pod's containers and init containers) ``Not found``; validateFieldAllowList ``Forbidden: cannot be set for an
    Ephemeral Container`` for each of ports, resources, resizePolicy, restartPolicy, restartPolicyRules,
    livenessProbe, readinessProbe, startupProbe, lifecycle that is set (Go field order; a list counts even empty, as
    a decoded ``[]`` is no nil slice; ``resources`` when one of limits/requests/claims is there); then each
    ``volumeMounts[<j>]`` ``subPath`` and ``subPathExpr`` Forbidden. This covers the probe/lifecycle part that
    :func:`kapi.kinds.podprobes.validate_container_probes` does with ``ephemeral=True`` (call one, not both).
    """
    container = _dict(container)
    out: list[Cause] = []
    target = container.get("targetContainerName")
    if isinstance(target, str) and target and target not in other_names:
        out.append(not_found(f"{path}.targetContainerName", target))
    out.extend(forbidden(f"{path}.{key}", EPHEMERAL_FORBIDDEN)
               for key, kind in _EPHEMERAL_DISALLOWED if _is_set(container.get(key), kind))
    for j, mount in enumerate(_list(container.get("volumeMounts"))):
        mount = _dict(mount)
        for key in ("subPath", "subPathExpr"):
            if _str(mount.get(key)):
                out.append(forbidden(f"{path}.volumeMounts[{j}].{key}", EPHEMERAL_FORBIDDEN))
    return out
