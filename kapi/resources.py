"""The served resource table: one row per resource drives routing, discovery and storage keys.

Each :class:`Resource` row carries what kube-apiserver's discovery documents
publish (``APIResource``: name, singularName, namespaced, kind, verbs,
shortNames, categories) plus the storage key prefix. Adding a resource is
adding a row. Source: "The Kubernetes API" / "API concepts" reference and
the ``kubectl api-resources`` output of kube-apiserver.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
# Namespaces and Services implement no DeleteCollection in kube-apiserver (their registries' REST has none):
# discovery lists these verbs and DELETE on the collection is 405 MethodNotAllowed.
NO_DELETECOLLECTION = tuple(v for v in ALL_VERBS if v != "deletecollection")


# Resources whose registry sets ReturnDeletedObject: an immediate DELETE answers the deleted object, not a
# ``Status`` (genericregistry Store.finalizeDelete). Facts of kube 1.37, as its OpenAPI states them (the DELETE
# response of these paths is the object; of every other path ``v1.Status``; tests/test_resources.py compares
# them with the official Python client generated from that OpenAPI).
RETURNS_DELETED_OBJECT = frozenset({
    ("", "persistentvolumeclaims"), ("", "persistentvolumes"), ("", "pods"), ("", "podtemplates"),
    ("", "resourcequotas"), ("", "serviceaccounts"), ("", "services"),
    ("resource.k8s.io", "deviceclasses"), ("resource.k8s.io", "resourceclaims"),
    ("resource.k8s.io", "resourceclaimtemplates"), ("resource.k8s.io", "resourceslices"),
    ("storage.k8s.io", "csidrivers"), ("storage.k8s.io", "csinodes"), ("storage.k8s.io", "storageclasses"),
    ("storage.k8s.io", "volumeattachments"), ("storage.k8s.io", "volumeattributesclasses"),
})


@dataclass(frozen=True)
class Resource:
    """One served resource of one group/version."""

    group: str
    version: str
    resource: str  # plural, lower case
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    # Subresources served under /<name>/<subresource>, e.g. ("status", "scale").
    subresources: tuple[str, ...] = ()
    # False for APIs that are computed, never stored: the create-only reviews (SubjectAccessReview, TokenReview...),
    # answered by a handler from services/gateway/reviews/, and componentstatuses (services/gateway/componentstatus.py).
    stored: bool = True
    # A custom resource's names.singular and names.listKind ("": the built-in rule, below).
    singular_name: str = ""
    list_kind_name: str = ""

    @property
    def singular(self) -> str:
        """singularName: a CRD's ``names.singular``, else the lower-cased kind."""
        return self.singular_name or self.kind.lower()

    @property
    def returns_deleted_object(self) -> bool:
        """Whether an immediate DELETE answers the deleted object (:data:`RETURNS_DELETED_OBJECT`)."""
        return (self.group, self.resource) in RETURNS_DELETED_OBJECT

    @property
    def group_version(self) -> str:
        """"v1" for the core group, else "group/version"."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        """The kind of a list of this resource: a CRD's ``names.listKind``, else ``<Kind>List`` (ConfigMapList)."""
        return self.list_kind_name or self.kind + "List"

    def storage_prefix(self, namespace: str = "") -> str:
        """etcd key prefix, ``/registry/[<group>/]<resource>/[<namespace>/]`` (kube-apiserver layout)."""
        base = f"/registry/{self.group}/{self.resource}/" if self.group else f"/registry/{self.resource}/"
        return base + (f"{namespace}/" if namespace else "")

    def storage_key(self, namespace: str, name: str) -> str:
        """etcd key of one object."""
        return self.storage_prefix(namespace if self.namespaced else "") + name


_ALL = ("all",)
_RBAC = "rbac.authorization.k8s.io"
_ST = ("status",)
_ST_SCALE = ("status", "scale")


def _r(group: str, resource: str, kind: str, namespaced: bool, short: tuple[str, ...] = (),
       categories: tuple[str, ...] = (), subresources: tuple[str, ...] = (), version: str = "v1",
       verbs: tuple[str, ...] = ALL_VERBS) -> Resource:
    return Resource(group, version, resource, kind, namespaced, short, categories, verbs, subresources)


# The served resources, as `kubectl api-resources` lists them on kube-apiserver.
RESOURCES: tuple[Resource, ...] = (
    # the legacy core/v1 bindings (kube's LegacyBindingREST beside pods/binding): create only, binds a Pod
    Resource("", "v1", "bindings", "Binding", True, verbs=("create",), stored=False),
    # the deprecated core/v1 componentstatuses (kube's pkg/registry/core/componentstatus REST): computed at each
    # request by probing the control plane (services/gateway/componentstatus.py), get and list only
    Resource("", "v1", "componentstatuses", "ComponentStatus", False, ("cs",), verbs=("get", "list"), stored=False),
    _r("", "configmaps", "ConfigMap", True, ("cm",)),
    _r("", "endpoints", "Endpoints", True, ("ep",)),
    _r("", "events", "Event", True, ("ev",)),
    _r("", "limitranges", "LimitRange", True, ("limits",)),
    _r("", "namespaces", "Namespace", False, ("ns",), subresources=("status", "finalize"), verbs=NO_DELETECOLLECTION),
    _r("", "nodes", "Node", False, ("no",), subresources=_ST),
    _r("", "persistentvolumeclaims", "PersistentVolumeClaim", True, ("pvc",), subresources=_ST),
    _r("", "persistentvolumes", "PersistentVolume", False, ("pv",), subresources=_ST),
    _r("", "pods", "Pod", True, ("po",), _ALL, ("status", "log", "exec", "attach", "portforward", "proxy",
                                             "eviction", "binding", "ephemeralcontainers", "resize")),
    _r("", "podtemplates", "PodTemplate", True),
    _r("", "replicationcontrollers", "ReplicationController", True, ("rc",), _ALL, _ST_SCALE),
    _r("", "resourcequotas", "ResourceQuota", True, ("quota",), subresources=_ST),
    _r("", "secrets", "Secret", True),
    _r("", "serviceaccounts", "ServiceAccount", True, ("sa",), subresources=("token",)),
    _r("", "services", "Service", True, ("svc",), _ALL, _ST),
    _r("apps", "controllerrevisions", "ControllerRevision", True),
    _r("apps", "daemonsets", "DaemonSet", True, ("ds",), _ALL, _ST),
    _r("apps", "deployments", "Deployment", True, ("deploy",), _ALL, _ST_SCALE),
    _r("apps", "replicasets", "ReplicaSet", True, ("rs",), _ALL, _ST_SCALE),
    _r("apps", "statefulsets", "StatefulSet", True, ("sts",), _ALL, _ST_SCALE),
    # autoscaling: stored once at v2 (the preferred version, listed first); v1 is served by conversion.
    _r("autoscaling", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True, ("hpa",), _ALL, _ST, "v2"),
    _r("autoscaling", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True, ("hpa",), _ALL, _ST),
    _r("batch", "cronjobs", "CronJob", True, ("cj",), _ALL, _ST),
    _r("batch", "jobs", "Job", True, (), _ALL, _ST),
    _r("certificates.k8s.io", "certificatesigningrequests", "CertificateSigningRequest", False, ("csr",),
       subresources=("status", "approval")),
    _r("coordination.k8s.io", "leases", "Lease", True),
    _r("discovery.k8s.io", "endpointslices", "EndpointSlice", True),
    _r("events.k8s.io", "events", "Event", True, ("ev",)),
    _r("networking.k8s.io", "ingressclasses", "IngressClass", False),
    _r("networking.k8s.io", "ingresses", "Ingress", True, ("ing",), subresources=_ST),
    _r("networking.k8s.io", "ipaddresses", "IPAddress", False, ("ip",)),
    _r("networking.k8s.io", "networkpolicies", "NetworkPolicy", True, ("netpol",)),
    _r("networking.k8s.io", "servicecidrs", "ServiceCIDR", False, subresources=_ST),
    _r("node.k8s.io", "runtimeclasses", "RuntimeClass", False),
    _r("policy", "poddisruptionbudgets", "PodDisruptionBudget", True, ("pdb",), subresources=_ST),
    Resource("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", False, verbs=("create",),
             stored=False),
    Resource("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", False, verbs=("create",), stored=False),
    Resource("authorization.k8s.io", "v1", "localsubjectaccessreviews", "LocalSubjectAccessReview", True,
             verbs=("create",), stored=False),
    Resource("authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", False,
             verbs=("create",), stored=False),
    Resource("authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", False,
             verbs=("create",), stored=False),
    Resource("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", False,
             verbs=("create",), stored=False),
    _r(_RBAC, "clusterrolebindings", "ClusterRoleBinding", False),
    _r(_RBAC, "clusterroles", "ClusterRole", False),
    _r(_RBAC, "rolebindings", "RoleBinding", True),
    _r(_RBAC, "roles", "Role", True),
    _r("resource.k8s.io", "deviceclasses", "DeviceClass", False),
    _r("resource.k8s.io", "resourceclaims", "ResourceClaim", True, subresources=_ST),
    _r("resource.k8s.io", "resourceclaimtemplates", "ResourceClaimTemplate", True),
    _r("resource.k8s.io", "resourceslices", "ResourceSlice", False),
    _r("scheduling.k8s.io", "priorityclasses", "PriorityClass", False, ("pc",)),
    _r("storage.k8s.io", "csidrivers", "CSIDriver", False),
    _r("storage.k8s.io", "csinodes", "CSINode", False),
    _r("storage.k8s.io", "csistoragecapacities", "CSIStorageCapacity", True),
    _r("storage.k8s.io", "storageclasses", "StorageClass", False, ("sc",)),
    _r("storage.k8s.io", "volumeattachments", "VolumeAttachment", False, subresources=_ST),
    _r("storage.k8s.io", "volumeattributesclasses", "VolumeAttributesClass", False, ("vac",)),
    _r("admissionregistration.k8s.io", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", False),
    _r("admissionregistration.k8s.io", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", False),
    _r("admissionregistration.k8s.io", "validatingadmissionpolicies", "ValidatingAdmissionPolicy", False,
       subresources=_ST),
    _r("admissionregistration.k8s.io", "validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding",
       False),
    _r("flowcontrol.apiserver.k8s.io", "flowschemas", "FlowSchema", False, subresources=_ST),
    _r("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations", "PriorityLevelConfiguration", False,
       subresources=_ST),
    _r("apiextensions.k8s.io", "customresourcedefinitions", "CustomResourceDefinition", False, ("crd", "crds"),
       ("api-extensions",), _ST),
    _r("apiregistration.k8s.io", "apiservices", "APIService", False, (), ("api-extensions",), _ST),
)


class Registry:
    """Lookup over a resource table by (group, version, resource) and by kind."""

    def __init__(self, rows: Iterable[Resource] = RESOURCES):
        self.static: tuple[Resource, ...] = tuple(rows)
        self._static_gvrs = {(r.group, r.version, r.resource) for r in self.static}
        self.generation = 0  # bumped by every set_overlay, so derived documents can be rebuilt
        self.set_overlay(())

    def set_overlay(self, rows: Iterable[Resource]) -> None:
        """Serve ``rows`` (custom resources from CRDs) after the static table; a static row wins a clash."""
        self.rows = self.static + tuple(r for r in rows if (r.group, r.version, r.resource) not in self._static_gvrs)
        self._by_gvr = {(r.group, r.version, r.resource): r for r in self.rows}
        self._by_gvk = {(r.group, r.version, r.kind): r for r in self.rows}
        self.generation += 1

    def is_static(self, resource: Resource) -> bool:
        """True for a group/version/resource of the built-in table (not from the overlay)."""
        return (resource.group, resource.version, resource.resource) in self._static_gvrs

    def get(self, group: str, version: str, resource: str) -> Resource | None:
        """The row for a group/version/resource, or None if not served."""
        return self._by_gvr.get((group, version, resource))

    def by_kind(self, group: str, version: str, kind: str) -> Resource | None:
        """The row for a group/version/kind, or None."""
        return self._by_gvk.get((group, version, kind))

    def groups(self) -> dict[str, list[str]]:
        """Named API groups (core excluded) -> served versions, preferred first, in table order."""
        out: dict[str, list[str]] = {}
        for r in self.rows:
            if r.group and r.version not in out.setdefault(r.group, []):
                out[r.group].append(r.version)
        return out

    def in_group_version(self, group: str, version: str) -> list[Resource]:
        """Rows of one group/version in table order."""
        return [r for r in self.rows if r.group == group and r.version == version]


REGISTRY = Registry()
