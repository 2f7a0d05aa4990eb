"""Who a node is, and what a pod bound to it references: shared by the Node authorizer and NodeRestriction.

kube keeps these in ``pkg/auth/nodeidentity`` (``NodeIdentity``: user
``system:node:<nodeName>`` in group ``system:nodes``) and
``pkg/api/v1/pod`` (``VisitPodSecretNames``, ``VisitPodConfigmapNames``);
the Node authorizer (services/authz/node.py) builds its graph from
:func:`references`, and the NodeRestriction admission plugin
(services/admission/plugins/node_restriction.py) uses both.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kapi.attributes import UserInfo

NODE_USER_PREFIX = "system:node:"
NODES_GROUP = "system:nodes"
SECRET, CONFIG_MAP, PVC, SERVICE_ACCOUNT = "secret", "configmap", "pvc", "serviceaccount"

# (kind, namespace, name) of an object a pod references.
Ref = tuple[str, str, str]


def node_identity(user: UserInfo) -> tuple[str, bool]:
    """(nodeName, is a node): kube's ``NodeIdentity`` (prefix ``system:node:`` and group ``system:nodes``)."""
    if not user.username.startswith(NODE_USER_PREFIX) or NODES_GROUP not in user.groups:
        return "", False
    return user.username[len(NODE_USER_PREFIX):], True


def _dicts(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                yield item


def str_field(obj: Any, key: str = "name") -> str:
    """``obj[key]`` when ``obj`` is a dict and the value a string, else ""."""
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, str) else ""


# Volume plugins that name a Secret by a secretRef / nodePublishSecretRef / secretName (podutil.VisitPodSecretNames).
_SECRET_REF_VOLUMES = ("cephfs", "cinder", "flexVolume", "iscsi", "rbd", "scaleIO", "storageos")


def references(pod: Mapping[str, Any]) -> set[Ref]:
    """Every Secret, ConfigMap, PVC and ServiceAccount a pod references (kinds as in :data:`Ref`)."""
    meta = pod.get("metadata") or {}
    namespace, pod_name = str_field(meta, "namespace"), str_field(meta, "name")
    spec = pod.get("spec") or {}
    if not isinstance(spec, dict):
        return set()
    refs: set[tuple[str, str]] = set()
    account = str_field(spec, "serviceAccountName") or str_field(spec, "serviceAccount")
    if account:
        refs.add((SERVICE_ACCOUNT, account))
    for secret in _dicts(spec.get("imagePullSecrets")):
        refs.add((SECRET, str_field(secret)))
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for container in _dicts(spec.get(key)):
            for source in _dicts(container.get("envFrom")):
                refs.add((SECRET, str_field(source.get("secretRef"))))
                refs.add((CONFIG_MAP, str_field(source.get("configMapRef"))))
            for env in _dicts(container.get("env")):
                value_from = env.get("valueFrom")
                if isinstance(value_from, dict):
                    refs.add((SECRET, str_field(value_from.get("secretKeyRef"))))
                    refs.add((CONFIG_MAP, str_field(value_from.get("configMapKeyRef"))))
    for volume in _dicts(spec.get("volumes")):
        refs.add((SECRET, str_field(volume.get("secret"), "secretName")))
        refs.add((CONFIG_MAP, str_field(volume.get("configMap"))))
        refs.add((PVC, str_field(volume.get("persistentVolumeClaim"), "claimName")))
        if isinstance(volume.get("ephemeral"), dict) and str_field(volume):
            refs.add((PVC, f"{pod_name}-{str_field(volume)}"))
        projected = volume.get("projected")
        if isinstance(projected, dict):
            for source in _dicts(projected.get("sources")):
                refs.add((SECRET, str_field(source.get("secret"))))
                refs.add((CONFIG_MAP, str_field(source.get("configMap"))))
        for plugin in _SECRET_REF_VOLUMES:
            refs.add((SECRET, str_field(_as_dict(volume.get(plugin)).get("secretRef"))))
        refs.add((SECRET, str_field(volume.get("azureFile"), "secretName")))
        refs.add((SECRET, str_field(_as_dict(volume.get("csi")).get("nodePublishSecretRef"))))
    return {(kind, namespace, name) for kind, name in refs if name}


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
