"""ServiceAccount: default account assignment and the projected token volume (plugin/pkg/admission/serviceaccount).

On Pod CREATE (not mirror pods):

- ``spec.serviceAccountName`` defaults to ``default`` (and
  ``spec.serviceAccount``, the deprecated alias, is kept equal).
- A named ServiceAccount that does not exist -> 403 ``pods "x" is
  forbidden: error looking up service account <ns>/<sa>: serviceaccount
  "<sa>" not found``. The implicit ``default`` account is not required
  while kapi has no ServiceAccount controller to create it
  (:data:`REQUIRE_DEFAULT_SERVICE_ACCOUNT`).
- Unless the Pod or the ServiceAccount sets
  ``automountServiceAccountToken: false`` (the Pod's choice wins), a
  projected volume ``kube-api-access-<5 chars>`` (token with
  expirationSeconds 3607, the ``kube-root-ca.crt`` ConfigMap's ``ca.crt``,
  the namespace via the downward API; defaultMode 420) is added and
  mounted read-only at ``/var/run/secrets/kubernetes.io/serviceaccount``
  in every container and init container without a mount there.
- ``imagePullSecrets`` of the ServiceAccount are copied when the Pod has none.
"""

from __future__ import annotations

from typing import Any

from kapi import errors, strategy
from services.admission.chain import CREATE, AdmissionRequest
from services.admission.informers import Informers

DEFAULT_SERVICE_ACCOUNT = "default"
MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
VOLUME_PREFIX = "kube-api-access-"
TOKEN_EXPIRATION_SECONDS = 3607
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
REQUIRE_DEFAULT_SERVICE_ACCOUNT = False


def token_volume(name: str) -> dict[str, Any]:
    """The projected service-account volume kube-apiserver adds (BoundServiceAccountTokenVolume)."""
    return {"name": name, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ]}}


class ServiceAccount:
    """The mutating and validating ServiceAccount plugin."""

    name = "ServiceAccount"

    def __init__(self, informers: Informers):
        self.informers = informers
        informers.cache("", "serviceaccounts")

    def handles(self, operation: str) -> bool:
        """CREATE."""
        return operation == CREATE

    async def admit(self, request: AdmissionRequest) -> None:
        """Assign the account, check it exists, mount the token volume; raises 403 for a missing account."""
        res = request.resource
        if res.group != "" or res.resource != "pods" or request.subresource or request.object is None:
            return
        pod = request.object
        meta = pod.get("metadata") or {}
        if MIRROR_POD_ANNOTATION in (meta.get("annotations") or {}):
            return
        spec = pod.get("spec")
        if not isinstance(spec, dict):  # "spec": null decodes to an empty PodSpec
            spec = pod["spec"] = {}
        name = spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT_SERVICE_ACCOUNT
        spec["serviceAccountName"] = name
        spec["serviceAccount"] = name
        sa = await self.informers.lookup("", "serviceaccounts", request.namespace, name, request.timeout)
        if sa is None and (name != DEFAULT_SERVICE_ACCOUNT or REQUIRE_DEFAULT_SERVICE_ACCOUNT):
            raise errors.forbidden("pods", request.name, f"error looking up service account {request.namespace}/"
                                   f'{name}: serviceaccount "{name}" not found')
        sa = sa or {}
        automount = spec.get("automountServiceAccountToken")
        if automount is None:
            automount = sa.get("automountServiceAccountToken", True) is not False
        if automount:
            self._mount(spec)
        if not spec.get("imagePullSecrets") and sa.get("imagePullSecrets"):
            spec["imagePullSecrets"] = [dict(s) for s in sa["imagePullSecrets"]]

    @staticmethod
    def _mount(spec: dict[str, Any]) -> None:
        volumes: list[Any] = spec["volumes"] if isinstance(spec.get("volumes"), list) else []
        existing = next((v.get("name") for v in volumes if isinstance(v, dict)
                         and str(v.get("name", "")).startswith(VOLUME_PREFIX)), None)
        volume_name = existing or strategy.generate_name(VOLUME_PREFIX)
        if existing is None:
            volumes.append(token_volume(volume_name))
        spec["volumes"] = volumes
        for key in ("initContainers", "containers"):
            for c in spec.get(key) or []:
                if not isinstance(c, dict):
                    continue
                mounts: list[Any] = c["volumeMounts"] if isinstance(c.get("volumeMounts"), list) else []
                if any(isinstance(m, dict) and m.get("mountPath") == MOUNT_PATH for m in mounts):
                    continue
                mounts.append({"name": volume_name, "readOnly": True, "mountPath": MOUNT_PATH})
                c["volumeMounts"] = mounts
