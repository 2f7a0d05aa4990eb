"""NodeRestriction: what a kubelet may write (k8s.io/kubernetes plugin/pkg/admission/noderestriction).

Applies only to node users (``system:node:<nodeName>`` in group
``system:nodes``; "Admission Controllers" reference, NodeRestriction, and
"Node Authorization"). The Node authorizer lets every node write nodes,
pods, leases...; this plugin narrows that to the node's own objects:

- nodes: only its own Node (``node "n1" is not allowed to modify node
  "n2"``); on create no ``spec.configSource`` and no forbidden labels; on
  update no taint changes, no new configSource, and no change of a
  forbidden label (``node-restriction.kubernetes.io/`` prefixed ones, and
  ``kubernetes.io``/``k8s.io`` ones outside the kubelet set).
- pods: create only mirror pods (annotation ``kubernetes.io/config.mirror``)
  bound to itself, owned by its Node (controller, uid checked), referencing
  no ServiceAccount, Secret, ConfigMap, ClusterTrustBundle or PVC; delete
  only pods bound to itself; ``status`` only of pods bound to itself,
  without label changes; ``eviction`` only of pods bound to itself; any
  other subresource is refused.
- persistentvolumeclaims: only ``status`` (capacity and conditions).
- serviceaccounts/token: only tokens bound to a pod (with uid) on itself.
- leases: only in ``kube-node-lease`` and named after the node.
- csinodes, resourceslices, certificatesigningrequests: the node's own.

Refusals are 403 ``<resource> "<name>" is forbidden: <reason>`` with kube's
reasons; a missing pod or node is 404.
"""

from __future__ import annotations

import base64
import copy
from typing import Any

from cryptography import x509

from kapi import errors
from kapi.nodeidentity import CONFIG_MAP, SECRET, SERVICE_ACCOUNT, node_identity, references
from services.admission.chain import CREATE, DELETE, UPDATE, AdmissionRequest
from services.admission.informers import Informers

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
NODE_LEASE_NAMESPACE = "kube-node-lease"
NODE_RESTRICTION_NAMESPACE = "node-restriction.kubernetes.io"
# k8s.io/kubelet pkg/apis: labels and label namespaces a kubelet may set on its own Node.
KUBELET_LABELS = frozenset({
    "kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch", "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch", "beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type",
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
})
KUBELET_LABEL_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")
KUBELET_SIGNERS = ("kubernetes.io/kubelet-serving", "kubernetes.io/kube-apiserver-client-kubelet")


def _label_namespace(key: str) -> str:
    return key.split("/", 1)[0] if "/" in key else ""


def _in_namespace(namespace: str, domain: str) -> bool:
    return namespace == domain or namespace.endswith("." + domain)


def is_kubelet_label(key: str) -> bool:
    """True for a label key a kubelet may set on its own Node (kubeletapis.IsKubeletLabel)."""
    return key in KUBELET_LABELS or any(_in_namespace(_label_namespace(key), ns) for ns in KUBELET_LABEL_NAMESPACES)


def forbidden_labels(new: dict[str, str], old: dict[str, str]) -> list[str]:
    """Sorted keys added, removed or changed between ``old`` and ``new`` that a node may not touch."""
    modified = {k for k in set(new) | set(old) if new.get(k) != old.get(k) or (k in new) != (k in old)}
    out = set()
    for key in modified:
        namespace = _label_namespace(key)
        if _in_namespace(namespace, NODE_RESTRICTION_NAMESPACE):
            out.add(key)
        kubernetes = _in_namespace(namespace, "kubernetes.io") or _in_namespace(namespace, "k8s.io")
        if kubernetes and not is_kubelet_label(key):
            out.add(key)
    return sorted(out)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _meta(obj: Any) -> dict[str, Any]:
    return _dict(_dict(obj).get("metadata"))


def _spec(obj: Any) -> dict[str, Any]:
    return _dict(_dict(obj).get("spec"))


def _labels(obj: Any) -> dict[str, str]:
    return _dict(_meta(obj).get("labels"))


class NodeRestriction:
    """Mutating-phase plugin (as kube's ``Admit``) limiting node users to their own objects.

    ``informers`` gives pods and nodes (the pod a DELETE, eviction or token
    names; the Node's uid for mirror pod owner references).
    """

    name = "NodeRestriction"

    def __init__(self, informers: Informers):
        self.informers = informers

    def handles(self, operation: str) -> bool:
        """CREATE, UPDATE and DELETE."""
        return operation in (CREATE, UPDATE, DELETE)

    async def admit(self, request: AdmissionRequest) -> None:
        """Raise 403 (or 404 for a missing pod/node) when a node user oversteps; others pass untouched."""
        node, is_node = node_identity(request.attributes.user)
        if not is_node:
            return
        if not node:
            raise self._forbidden(request, f'could not determine node from user "{request.attributes.user.username}"')
        group, resource, sub = request.resource.group, request.resource.resource, request.subresource
        if (group, resource) == ("", "pods"):
            if sub == "":
                await self._pod(node, request)
            elif sub == "status":
                self._pod_status(node, request)
            elif sub == "eviction":
                await self._pod_eviction(node, request)
            else:
                raise self._forbidden(request, f"unexpected pod subresource \"{sub}\", only 'status' and 'eviction' "
                                               "are allowed")
        elif (group, resource) == ("", "nodes"):
            self._node(node, request)
        elif (group, resource) == ("", "persistentvolumeclaims"):
            if sub != "status":
                raise self._forbidden(request, "may only update PVC status")
            self._pvc_status(node, request)
        elif (group, resource) == ("", "serviceaccounts"):
            await self._service_account_token(node, request)
        elif (group, resource) == ("coordination.k8s.io", "leases"):
            self._lease(node, request)
        elif (group, resource) == ("storage.k8s.io", "csinodes"):
            name = _meta(request.object).get("name") if request.operation == CREATE else request.attributes.name
            if name != node:
                raise self._forbidden(request, "can only access CSINode with the same name as the requesting node")
        elif (group, resource) == ("resource.k8s.io", "resourceslices"):
            self._resource_slice(node, request)
        elif (group, resource) == ("certificates.k8s.io", "certificatesigningrequests"):
            self._csr(node, request)

    @staticmethod
    def _forbidden(request: AdmissionRequest, reason: str) -> errors.StatusError:
        res = request.resource
        return errors.forbidden(res.resource, request.name, reason, res.group)

    # ------------------------------------------------------------------ pods

    async def _pod(self, node: str, request: AdmissionRequest) -> None:
        if request.operation == CREATE:
            await self._mirror_pod_create(node, request)
        elif request.operation == DELETE:
            pod = request.old_object or await self._live_pod(request, request.attributes.name)
            if _spec(pod).get("nodeName") != node:
                raise self._forbidden(request, f'node "{node}" can only delete pods with spec.nodeName set to itself')
        else:
            raise self._forbidden(request, f'unexpected operation "{request.operation}", node "{node}" can only '
                                           "create and delete mirror pods")

    async def _live_pod(self, request: AdmissionRequest, name: str) -> dict[str, Any]:
        pod = await self.informers.lookup("", "pods", request.namespace, name, request.timeout)
        if pod is None:
            raise errors.not_found("pods", name)
        return pod

    async def _mirror_pod_create(self, node: str, request: AdmissionRequest) -> None:
        pod = _dict(request.object)
        annotations = _dict(_meta(pod).get("annotations"))
        if MIRROR_POD_ANNOTATION not in annotations:
            raise self._forbidden(request, f'pod does not have "{MIRROR_POD_ANNOTATION}" annotation, node "{node}" '
                                           "can only create mirror pods")
        spec = _spec(pod)
        if spec.get("nodeName") != node:
            raise self._forbidden(request, f'node "{node}" can only create pods with spec.nodeName set to itself')
        owners = [o for o in _meta(pod).get("ownerReferences") or [] if isinstance(o, dict)]
        if len(owners) > 1:
            raise self._forbidden(request, f'node "{node}" can only create pods with a single owner reference set '
                                           "to itself")
        if not owners or (owners[0].get("apiVersion"), owners[0].get("kind"), owners[0].get("name")) != (
                "v1", "Node", node):
            raise self._forbidden(request, f'node "{node}" can only create pods with an owner reference set to '
                                           "itself")
        owner = owners[0]
        if owner.get("controller") is not True:
            raise self._forbidden(request, f'node "{node}" can only create pods with a controller owner reference '
                                           "set to itself")
        if owner.get("blockOwnerDeletion") is True:
            raise self._forbidden(request, f'node "{node}" must not set blockOwnerDeletion on an owner reference')
        node_obj = await self.informers.lookup("", "nodes", "", node, request.timeout)
        if node_obj is None:
            raise errors.not_found("nodes", node)
        uid = _meta(node_obj).get("uid", "")
        if owner.get("uid", "") != uid:
            raise self._forbidden(request, f"node {node} UID mismatch: expected {owner.get('uid', '')} got {uid}")
        refs = {kind for kind, _, _ in references(pod)}
        if spec.get("serviceAccountName") or spec.get("serviceAccount") or SERVICE_ACCOUNT in refs:
            raise self._forbidden(request, f'node "{node}" can not create pods that reference a service account')
        if SECRET in refs:
            raise self._forbidden(request, f'node "{node}" can not create pods that reference secrets')
        if CONFIG_MAP in refs:
            raise self._forbidden(request, f'node "{node}" can not create pods that reference configmaps')
        volumes = [v for v in spec.get("volumes") or [] if isinstance(v, dict)]
        for volume in volumes:
            for source in _dict(volume.get("projected")).get("sources") or []:
                if isinstance(source, dict) and source.get("clusterTrustBundle") is not None:
                    raise self._forbidden(request, f'node "{node}" can not create pods that reference '
                                                   "clustertrustbundles")
        if any(v.get("persistentVolumeClaim") is not None for v in volumes):
            raise self._forbidden(request, f'node "{node}" can not create pods that reference '
                                           "persistentvolumeclaims")

    def _pod_status(self, node: str, request: AdmissionRequest) -> None:
        if request.operation != UPDATE:
            raise self._forbidden(request, f'unexpected operation "{request.operation}"')
        if _spec(request.old_object).get("nodeName") != node:
            raise self._forbidden(request, f'node "{node}" can only update pod status for pods with spec.nodeName '
                                           "set to itself")
        if _labels(request.old_object) != _labels(request.object):
            raise self._forbidden(request, f'node "{node}" cannot update labels through pod status')

        def claims(obj: Any) -> list[tuple[Any, Any]]:
            items = _dict(_dict(obj).get("status")).get("resourceClaimStatuses") or []
            return [(c.get("name"), c.get("resourceClaimName")) for c in items if isinstance(c, dict)]
        if claims(request.old_object) != claims(request.object):
            raise self._forbidden(request, f'node "{node}" cannot update resource claim statues')

    async def _pod_eviction(self, node: str, request: AdmissionRequest) -> None:
        if request.operation != CREATE:
            raise self._forbidden(request, f"unexpected operation {request.operation}")
        name = request.attributes.name or _meta(request.object).get("name") or ""
        if not name:
            raise self._forbidden(request, "could not determine pod from request data")
        pod = await self._live_pod(request, name)
        if _spec(pod).get("nodeName") != node:
            raise self._forbidden(request, f"node {node} can only evict pods with spec.nodeName set to itself")

    # ------------------------------------------------------------------ nodes

    def _node(self, node: str, request: AdmissionRequest) -> None:
        requested = request.name
        if requested != node:
            raise self._forbidden(request, f'node "{node}" is not allowed to modify node "{requested}"')
        new = _dict(request.object)
        if request.operation == CREATE:
            if _spec(new).get("configSource") is not None:
                raise self._forbidden(request, f'node "{node}" is not allowed to create pods with a non-nil '
                                               "configSource")
            bad = forbidden_labels(_labels(new), {})
            if bad:
                raise self._forbidden(request, f'node "{node}" is not allowed to set the following labels: '
                                               f"{', '.join(bad)}")
        elif request.operation == UPDATE:
            old = _dict(request.old_object)
            source = _spec(new).get("configSource")
            if source is not None and source != _spec(old).get("configSource"):
                raise self._forbidden(request, f'node "{node}" is not allowed to update configSource to a new '
                                               "non-nil configSource")
            if (_spec(new).get("taints") or []) != (_spec(old).get("taints") or []):
                raise self._forbidden(request, f'node "{node}" is not allowed to modify taints')
            bad = forbidden_labels(_labels(new), _labels(old))
            if bad:
                raise self._forbidden(request, f"is not allowed to modify labels: {', '.join(bad)}")

    # ------------------------------------------------------------------ others

    def _pvc_status(self, node: str, request: AdmissionRequest) -> None:
        if request.operation != UPDATE:
            raise self._forbidden(request, f'unexpected operation "{request.operation}"')

        def comparable(obj: Any) -> dict[str, Any]:
            out = copy.deepcopy(_dict(obj))
            meta = out.setdefault("metadata", {})
            for key in ("resourceVersion", "managedFields"):
                meta.pop(key, None)
            status = out.setdefault("status", {})
            for key in ("capacity", "conditions", "allocatedResourceStatuses", "allocatedResources"):
                status.pop(key, None)
            return out
        if comparable(request.old_object) != comparable(request.object):
            raise self._forbidden(request, f'node "{node}" is not allowed to update fields other than '
                                           "status.quantity and status.conditions")

    async def _service_account_token(self, node: str, request: AdmissionRequest) -> None:
        if request.operation != CREATE or request.subresource != "token":
            return
        ref = _dict(_spec(request.object).get("boundObjectRef"))
        if not ref or ref.get("apiVersion") != "v1" or ref.get("kind") != "Pod" or not ref.get("name"):
            raise self._forbidden(request, "node requested token not bound to a pod")
        if not ref.get("uid"):
            raise self._forbidden(request, "node requested token with a pod binding without a uid")
        pod = await self._live_pod(request, str(ref["name"]))
        if ref["uid"] != _meta(pod).get("uid"):
            raise self._forbidden(request, f"the UID in the bound object reference ({ref['uid']}) does not match "
                                           "the UID in record. The object might have been deleted and then recreated")
        if _spec(pod).get("nodeName") != node:
            raise self._forbidden(request, "node requested token bound to a pod scheduled on a different node")

    def _lease(self, node: str, request: AdmissionRequest) -> None:
        if request.namespace != NODE_LEASE_NAMESPACE:
            raise self._forbidden(request, f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system '
                                           "namespace")
        name = _meta(request.object).get("name") if request.operation == CREATE else request.attributes.name
        if name != node:
            raise self._forbidden(request, "can only access node lease with the same name as the requesting node")

    def _resource_slice(self, node: str, request: AdmissionRequest) -> None:
        if request.operation == CREATE and _spec(request.object).get("nodeName") != node:
            raise self._forbidden(request, "can only create ResourceSlice with the same NodeName as the requesting "
                                           "node")
        if request.operation == DELETE and _spec(request.old_object).get("nodeName") != node:
            raise self._forbidden(request, "can only delete ResourceSlice with the same NodeName as the requesting "
                                           "node")

    def _csr(self, node: str, request: AdmissionRequest) -> None:
        if request.operation != CREATE:
            return
        spec = _spec(request.object)
        if spec.get("signerName") not in KUBELET_SIGNERS:
            return
        try:
            csr = x509.load_pem_x509_csr(base64.b64decode(str(spec.get("request") or "")))
            common_names = csr.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)
            cn = str(common_names[0].value) if common_names else ""
        except ValueError as exc:
            raise self._forbidden(request, f"unable to parse csr: {exc}") from None
        if cn != f"system:node:{node}":
            raise self._forbidden(request, f"can only create a node CSR with CN=system:node:{node}")
