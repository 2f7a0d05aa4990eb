"""Node authorization: what a kubelet may do, from the pods bound to its node ("Using Node Authorization").

Mirrors kube's ``plugin/pkg/auth/authorizer/node``. A request is a node's
when the user is ``system:node:<nodeName>`` in group ``system:nodes``;
everyone else gets NoOpinion (other authorizers decide). For a node:

- Secrets, ConfigMaps (get, list, watch of a named object), PersistentVolumeClaims
  (get; update/patch of ``status``) and ServiceAccounts (get, and create of
  the ``token`` subresource) are allowed only when a pod bound to the node
  (``spec.nodeName``) references them: volumes (``secret``, ``configMap``,
  ``projected`` sources, ``persistentVolumeClaim``, ``ephemeral`` -> PVC
  ``<pod>-<volume>``, and the ``secretRef``/``nodePublishSecretRef`` of
  volume plugins), ``envFrom`` and ``env[].valueFrom`` of every container,
  init and ephemeral container, ``imagePullSecrets`` and
  ``serviceAccountName``;
- its own Node: get, list, watch, create, update, patch, and update/patch
  of ``nodes/status`` (other nodes: NoOpinion);
- Pods: update/patch of ``pods/status`` only for pods bound to the node;
- its own Lease in ``kube-node-lease`` and its own CSINode;
- anything else by the static node rules (kube's ``NodeRules()``: events,
  pod reads and mirror pods, evictions, token/access reviews, CSRs, ...).

The graph (:class:`NodeGraph`) is kept from a List+Watch of pods across all
namespaces (re-list on 410), like the RBAC policy index. Its answers for
nodes change without the RBAC policy revision changing, so they are marked
not cacheable at the gateway. Until the first pod list has been applied
a node's request fails closed with 503.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kapi import errors
from kapi.attributes import Attributes, UserInfo
from kapi.nodeidentity import (
    CONFIG_MAP,
    PVC,
    SECRET,
    SERVICE_ACCOUNT,
    Ref,
    node_identity,
    references,
    str_field,
)
from services.authz.authorizer import Decision, Result, RulesResult
from services.authz.bootstrap import NODE_RULES
from services.authz.rbac import PolicyRule

log = logging.getLogger(__name__)

PODS = "pods"
NODE_LEASE_NAMESPACE = "kube-node-lease"
READ = frozenset({"get", "list", "watch"})
WRITE_STATUS = frozenset({"update", "patch"})
NODE_VERBS = frozenset({"get", "list", "watch", "create", "update", "patch"})
STATIC_RULES = tuple(PolicyRule.from_json(rule) for rule in NODE_RULES)


@dataclass(frozen=True)
class _Pod:
    node: str
    refs: frozenset[Ref]


class NodeGraph:
    """Pods bound to nodes and what they reference, fed by ``PolicySync(group="", resources=("pods",))``.

    Keeps, per (kind, namespace, name), how many pods on each node reference
    it. Mutated only from the event loop; methods are synchronous.
    """

    def __init__(self) -> None:
        self._pods: dict[tuple[str, str], _Pod] = {}
        self._refs: dict[Ref, dict[str, int]] = defaultdict(dict)
        self._listed = False
        self.revision = 0

    @property
    def synced(self) -> bool:
        """True once pods have been listed."""
        return self._listed

    def has_reference(self, node: str, ref: Ref) -> bool:
        """True when a pod bound to ``node`` references ``ref``."""
        return self._refs.get(ref, {}).get(node, 0) > 0

    def pod_node(self, namespace: str, name: str) -> str:
        """The node the pod is bound to ("" when unknown or unscheduled)."""
        pod = self._pods.get((namespace, name))
        return pod.node if pod is not None else ""

    def replace(self, resource: str, objects: Iterable[Mapping[str, Any]], revision: int) -> None:
        """Replace every pod with a full list read at ``revision``."""
        for key in list(self._pods):
            self._remove(key)
        for obj in objects:
            self._upsert(obj)
        self._listed = True
        self.revision = max(self.revision, revision)

    def apply(self, resource: str, event_type: str, obj: Mapping[str, Any], revision: int) -> None:
        """Apply one pod watch event (ADDED, MODIFIED, DELETED; others ignored)."""
        if event_type == "DELETED":
            meta = obj.get("metadata") or {}
            self._remove((str_field(meta, "namespace"), str_field(meta, "name")))
        elif event_type in ("ADDED", "MODIFIED"):
            self._upsert(obj)
        else:
            return
        self.revision = max(self.revision, revision)

    def _upsert(self, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        key = (str_field(meta, "namespace"), str_field(meta, "name"))
        self._remove(key)
        spec = obj.get("spec")
        node = str_field(spec, "nodeName") if isinstance(spec, dict) else ""
        if not node or not key[1]:
            return
        pod = _Pod(node, frozenset(references(obj)))
        self._pods[key] = pod
        for ref in pod.refs:
            counts = self._refs[ref]
            counts[node] = counts.get(node, 0) + 1

    def _remove(self, key: tuple[str, str]) -> None:
        pod = self._pods.pop(key, None)
        if pod is None:
            return
        for ref in pod.refs:
            counts = self._refs.get(ref)
            if counts is None:
                continue
            counts[pod.node] -= 1
            if counts[pod.node] <= 0:
                del counts[pod.node]
            if not counts:
                del self._refs[ref]


def _no(reason: str) -> Result:
    return Result(Decision.NO_OPINION, reason, cacheable=False)


_ALLOW = Result(Decision.ALLOW, cacheable=False)
NOT_A_NODE = Result(Decision.NO_OPINION, name_independent=True)  # decided by the user name alone


class NodeAuthorizer:
    """``--authorization-mode=Node`` over a :class:`NodeGraph` (see the module docstring)."""

    def __init__(self, graph: NodeGraph):
        self._graph = graph

    async def authorize(self, attributes: Attributes) -> Result:
        """Allow or NoOpinion (never Deny); 503 for a node's request before the pod graph is synced."""
        return self.decide(attributes)

    def decide(self, attributes: Attributes) -> Result:
        """Synchronous core of :meth:`authorize`."""
        node, is_node = node_identity(attributes.user)
        if not is_node:
            return NOT_A_NODE
        if not node:
            return _no(f'unknown node for user "{attributes.user.username}"')
        if attributes.resource_request:
            if not self._graph.synced:
                raise errors.unavailable("node authorizer graph not yet synced")
            if attributes.api_group == "":
                special = {"secrets": lambda: self._read(node, SECRET, attributes),
                           "configmaps": lambda: self._read(node, CONFIG_MAP, attributes),
                           "persistentvolumeclaims": lambda: self._pvc(node, attributes),
                           "serviceaccounts": lambda: self._service_account(node, attributes),
                           "nodes": lambda: self._node(node, attributes),
                           "pods": lambda: self._pod(node, attributes)}.get(attributes.resource)
                if special is not None:
                    result = special()
                    if result is not None:
                        return result
            elif attributes.api_group == "coordination.k8s.io" and attributes.resource == "leases":
                return self._own(node, attributes, NODE_LEASE_NAMESPACE)
            elif attributes.api_group == "storage.k8s.io" and attributes.resource == "csinodes":
                return self._own(node, attributes, "")
        if any(rule.allows(attributes) for rule in STATIC_RULES):
            return _ALLOW
        return _no("")

    def _related(self, node: str, kind: str, attributes: Attributes) -> Result:
        if not attributes.name:
            return _no("No Object name found")
        if self._graph.has_reference(node, (kind, attributes.namespace, attributes.name)):
            return _ALLOW
        return _no(f"no relationship found between node '{node}' and this object")

    def _read(self, node: str, kind: str, attributes: Attributes) -> Result:
        if attributes.verb not in READ:
            return _no("can only read resources of this type")
        if attributes.subresource:
            return _no("cannot read subresource")
        if not attributes.namespace:
            return _no("can only read namespaced object of this type")
        return self._related(node, kind, attributes)

    def _pvc(self, node: str, attributes: Attributes) -> Result:
        if attributes.subresource == "status":
            if attributes.verb not in WRITE_STATUS:
                return _no("can only get/update/patch this type")
            return self._related(node, PVC, attributes)
        if attributes.verb != "get":
            return _no("can only get individual resources of this type")
        if attributes.subresource:
            return _no("cannot get subresource")
        return self._related(node, PVC, attributes)

    def _service_account(self, node: str, attributes: Attributes) -> Result:
        if attributes.subresource == "token" and attributes.verb == "create":
            return self._related(node, SERVICE_ACCOUNT, attributes)
        if attributes.verb in READ and not attributes.subresource:
            return self._related(node, SERVICE_ACCOUNT, attributes)
        return _no("can only read or create tokens for individual service accounts")

    def _node(self, node: str, attributes: Attributes) -> Result | None:
        if attributes.subresource not in ("", "status"):
            return None  # e.g. nodes/proxy: static rules decide
        verbs = NODE_VERBS if not attributes.subresource else READ | WRITE_STATUS
        if attributes.verb not in verbs:
            return _no(f"can only {'/'.join(sorted(verbs))} its own Node")
        if attributes.verb == "create" and not attributes.name:
            return _ALLOW  # the name is in the body; NodeRestriction admission checks it in kube
        if attributes.name != node:
            return _no(f"node '{node}' cannot {attributes.verb} node '{attributes.name or '*'}'")
        return _ALLOW

    def _pod(self, node: str, attributes: Attributes) -> Result | None:
        if attributes.subresource != "status":
            return None
        if attributes.verb not in WRITE_STATUS | READ:
            return _no("can only get/update/patch the status of pods")
        if not attributes.name:
            return _no("No Object name found")
        if self._graph.pod_node(attributes.namespace, attributes.name) == node:
            return _ALLOW
        return _no(f"no relationship found between node '{node}' and this object")

    def _own(self, node: str, attributes: Attributes, namespace: str) -> Result:
        if attributes.verb not in ("get", "create", "update", "patch", "delete"):
            return _no("can only get, create, update, patch, or delete its own object")
        if attributes.namespace != namespace:
            return _no(f"can only access objects in the {namespace or 'cluster'} scope")
        if attributes.verb != "create" and attributes.name != node:
            return _no("can only access its own object")
        return _ALLOW

    def rules_for(self, user: UserInfo, namespace: str) -> RulesResult:
        """Nothing; incomplete for a node (kube: "node authorizer does not support user rule resolution")."""
        if node_identity(user)[1]:
            return RulesResult((), (), True, "node authorizer does not support user rule resolution")
        return RulesResult()
