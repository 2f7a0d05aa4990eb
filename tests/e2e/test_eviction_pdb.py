"""pods/eviction against PodDisruptionBudgets and pods/binding, as kube-apiserver 1.37's EvictionREST and
BindingREST answer (pkg/registry/core/pod/storage/eviction.go, storage.go; ValidatePodBinding).

kapi runs no disruption controller, so each test writes the budget's status itself through ``/status``
(observedGeneration, the healthy counts, disruptionsAllowed) and makes its pods Running and Ready the same way.
"""

from __future__ import annotations

import json
from typing import Any

from kapi.local.launcher import Stack
from tests.e2e.test_kube_parity_defaults import _raw

REFUSED = "Cannot evict pod as it would violate the pod's disruption budget."


def _pod(stack: Stack, ns: str, name: str, labels: dict[str, str], *, ready: bool | None = True,
         spec: dict[str, Any] | None = None) -> None:
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels},
            "spec": {"containers": [{"name": "app", "image": "busybox:1.36"}], **(spec or {})}}
    code, out = _raw(stack, "POST", f"/api/v1/namespaces/{ns}/pods", body)
    assert code == 201, out
    if ready is None:
        return
    pod = json.loads(out)
    pod["status"] = {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True" if ready else "False"}]}
    code, out = _raw(stack, "PUT", f"/api/v1/namespaces/{ns}/pods/{name}/status", pod)
    assert code == 200, out


def _budget(stack: Stack, ns: str, name: str, selector: Any, status: dict[str, Any],
            spec: dict[str, Any] | None = None, observed: int | None = None) -> dict[str, Any]:
    body = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name},
            "spec": {"minAvailable": 1, "selector": selector, **(spec or {})}}
    code, out = _raw(stack, "POST", f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", body)
    assert code == 201, out
    pdb = json.loads(out)
    pdb["status"] = {"observedGeneration": pdb["metadata"]["generation"] if observed is None else observed,
                     "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0, **status}
    code, out = _raw(stack, "PUT", f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/{name}/status", pdb)
    assert code == 200, out
    return dict(json.loads(out))


def _evict(stack: Stack, ns: str, name: str, query: str = "", options: dict[str, Any] | None = None
           ) -> tuple[int, dict[str, Any]]:
    body: dict[str, Any] = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}}
    if options is not None:
        body["deleteOptions"] = options
    code, out = _raw(stack, "POST", f"/api/v1/namespaces/{ns}/pods/{name}/eviction{query}", body)
    return code, json.loads(out)


def _get(stack: Stack, path: str) -> tuple[int, dict[str, Any]]:
    code, out = _raw(stack, "GET", path)
    return code, json.loads(out)


def _refusal(cause: str, retry: int = 0) -> dict[str, Any]:
    details: dict[str, Any] = {"causes": [{"reason": "DisruptionBudget", "message": cause}]}
    if retry:
        details["retryAfterSeconds"] = retry
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": REFUSED,
            "reason": "TooManyRequests", "details": details, "code": 429}


SUCCESS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def test_eviction_takes_one_disruption_per_pod(stack: Stack, namespace: str) -> None:
    """checkAndDecrement: disruptionsAllowed 1 lets one of three healthy pods go, records it in disruptedPods and
    sets DisruptionAllowed False; the next eviction is the 429 naming the healthy counts."""
    for name in ("a1", "a2", "a3"):
        _pod(stack, namespace, name, {"app": "a"})
    _budget(stack, namespace, "budget", {"matchLabels": {"app": "a"}},
            {"disruptionsAllowed": 1, "currentHealthy": 3, "desiredHealthy": 3, "expectedPods": 3})
    assert _evict(stack, namespace, "a1") == (201, SUCCESS)
    _, pdb = _get(stack, f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/budget")
    assert pdb["status"]["disruptionsAllowed"] == 0
    assert list(pdb["status"]["disruptedPods"]) == ["a1"]
    # the loopback client's UpdateStatus: its field manager is kube-apiserver's
    assert [(e.get("manager"), e["operation"], e.get("subresource")) for e in pdb["metadata"]["managedFields"]
            if e.get("manager") == "kube-apiserver"] == [("kube-apiserver", "Update", "status")]
    condition = pdb["status"]["conditions"][0]
    assert {k: condition[k] for k in ("type", "status", "reason", "message", "observedGeneration")} == {
        "type": "DisruptionAllowed", "status": "False", "reason": "InsufficientPods", "message": "",
        "observedGeneration": 1}
    assert _get(stack, f"/api/v1/namespaces/{namespace}/pods/a1")[0] == 404
    code, body = _evict(stack, namespace, "a2")
    assert (code, body) == (429, _refusal("The disruption budget budget needs 3 healthy pods and has 3 currently"))
    assert _get(stack, f"/api/v1/namespaces/{namespace}/pods/a2")[0] == 200


def test_eviction_dry_run_takes_no_disruption(stack: Stack, namespace: str) -> None:
    """A dry run checks and decrements a copy only: the budget and the pod stay as they were."""
    _pod(stack, namespace, "d1", {"app": "d"})
    before = _budget(stack, namespace, "budget", {"matchLabels": {"app": "d"}},
                     {"disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2})
    assert _evict(stack, namespace, "d1", "?dryRun=All") == (201, SUCCESS)
    assert _evict(stack, namespace, "d1", options={"dryRun": ["All"]}) == (201, SUCCESS)
    _, pdb = _get(stack, f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/budget")
    assert pdb["status"] == before["status"]
    code, pod = _get(stack, f"/api/v1/namespaces/{namespace}/pods/d1")
    assert code == 200 and [c["type"] for c in pod["status"]["conditions"]] == ["Ready"]


def test_eviction_refusals(stack: Stack, namespace: str) -> None:
    """Two budgets: the 500 Failure Status without reason; a budget not yet observed: 429 retry 10; the
    DisruptionAllowed condition's reason and message when the counts are not the cause."""
    _pod(stack, namespace, "two", {"app": "two"})
    _budget(stack, namespace, "first", {"matchLabels": {"app": "two"}}, {"disruptionsAllowed": 1})
    _budget(stack, namespace, "second", {}, {"disruptionsAllowed": 1}, spec={"minAvailable": 0})
    code, body = _evict(stack, namespace, "two")
    assert (code, body) == (500, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                  "message": "This pod has more than one PodDisruptionBudget, which the eviction "
                                  "subresource does not support.", "code": 500})
    _raw(stack, "DELETE", f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/second")
    _raw(stack, "DELETE", f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/first")

    _pod(stack, namespace, "stale", {"app": "stale"})
    _budget(stack, namespace, "stale", {"matchLabels": {"app": "stale"}}, {"disruptionsAllowed": 1}, observed=0)
    code, body = _evict(stack, namespace, "stale")
    assert (code, body) == (429, _refusal("The disruption budget stale is still being processed by the server.", 10))

    _pod(stack, namespace, "cond", {"app": "cond"})
    _budget(stack, namespace, "cond", {"matchLabels": {"app": "cond"}}, {
        "disruptionsAllowed": 0, "currentHealthy": 4, "desiredHealthy": 3, "conditions": [{
            "type": "DisruptionAllowed", "status": "False", "reason": "BarReason", "message": "hoge",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}]})
    code, body = _evict(stack, namespace, "cond")
    assert (code, body) == (429, _refusal("The disruption budget cond does not allow evicting pods currently "
                                          "(BarReason): hoge"))


def test_unhealthy_pod_eviction_policy(stack: Stack, namespace: str) -> None:
    """An unready pod: IfHealthyBudget (default) lets it go without a disruption only while the budget is
    healthy; AlwaysAllow always; neither decrements."""
    _pod(stack, namespace, "sick", {"app": "sick"}, ready=False)
    _budget(stack, namespace, "sick", {"matchLabels": {"app": "sick"}},
            {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 2})
    code, body = _evict(stack, namespace, "sick")
    assert (code, body) == (429, _refusal("The disruption budget sick needs 2 healthy pods and has 1 currently"))
    _pod(stack, namespace, "sick2", {"app": "sick2"}, ready=False)
    _budget(stack, namespace, "sick2", {"matchLabels": {"app": "sick2"}},
            {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 2},
            spec={"unhealthyPodEvictionPolicy": "AlwaysAllow"})
    assert _evict(stack, namespace, "sick2") == (201, SUCCESS)
    _pod(stack, namespace, "sick3", {"app": "sick3"}, ready=False)
    _budget(stack, namespace, "sick3", {"matchLabels": {"app": "sick3"}},
            {"disruptionsAllowed": 0, "currentHealthy": 2, "desiredHealthy": 2})
    assert _evict(stack, namespace, "sick3") == (201, SUCCESS)
    _, pdb = _get(stack, f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/sick3")
    assert pdb["status"]["disruptionsAllowed"] == 0 and "disruptedPods" not in pdb["status"]


def test_eviction_marks_the_pod_disruption_target(stack: Stack, namespace: str) -> None:
    """addConditionAndDeletePod: a pod kept by graceful deletion (bound to a node) carries the DisruptionTarget
    condition; an Eviction without a name is kube's 400."""
    _pod(stack, namespace, "bound", {"app": "bound"}, spec={"nodeName": "n1"})
    assert _evict(stack, namespace, "bound") == (201, SUCCESS)
    code, pod = _get(stack, f"/api/v1/namespaces/{namespace}/pods/bound")
    assert code == 200 and pod["metadata"]["deletionTimestamp"]
    target = [c for c in pod["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert [{k: c.get(k) for k in ("status", "reason", "message", "lastProbeTime")} for c in target] == [
        {"status": "True", "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting",
         "lastProbeTime": None}]
    code, out = _raw(stack, "POST", f"/api/v1/namespaces/{namespace}/pods/bound/eviction",
                     {"apiVersion": "policy/v1", "kind": "Eviction"})
    assert code == 400 and json.loads(out)["message"] == "name in URL does not match name in Eviction object"
    _raw(stack, "DELETE", f"/api/v1/namespaces/{namespace}/pods/bound?gracePeriodSeconds=0")


def _bind(stack: Stack, ns: str, name: str, target: dict[str, Any], meta: dict[str, Any] | None = None
          ) -> tuple[int, dict[str, Any]]:
    body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, **(meta or {})}, "target": target}
    code, out = _raw(stack, "POST", f"/api/v1/namespaces/{ns}/pods/{name}/binding", body)
    return code, json.loads(out)


def test_binding(stack: Stack, namespace: str) -> None:
    """BindingREST.Create: ValidatePodBinding's plain 500s; nodeName, the binding's annotations and the
    PodScheduled True condition; the pods/binding 409s (already assigned, scheduling gates)."""
    _pod(stack, namespace, "p1", {}, ready=None)
    code, body = _bind(stack, namespace, "p1", {"kind": "Pod", "name": "n1"})
    assert (code, body) == (500, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                  "message": 'target.kind: Unsupported value: "Pod": supported values: "Node", '
                                  '"<empty>"', "code": 500})
    code, body = _bind(stack, namespace, "p1", {"kind": "Pod"})
    assert code == 500 and body["message"] == ('[target.kind: Unsupported value: "Pod": supported values: "Node", '
                                               '"<empty>", target.name: Required value]')
    code, body = _bind(stack, namespace, "p1", {"name": "n1"}, {"uid": "nope"})
    assert code == 409 and body["message"].startswith(
        'Operation cannot be fulfilled on pods "p1": Precondition failed: UID in precondition: nope, UID in object '
        "meta: ")
    _, before = _get(stack, f"/api/v1/namespaces/{namespace}/pods/p1")
    code, body = _bind(stack, namespace, "p1", {"kind": "Node", "name": "n1"}, {"annotations": {"a": "b"}})
    assert (code, body) == (201, SUCCESS)
    _, pod = _get(stack, f"/api/v1/namespaces/{namespace}/pods/p1")
    assert pod["metadata"]["managedFields"] == before["metadata"]["managedFields"]  # no field manager runs
    assert pod["spec"]["nodeName"] == "n1" and pod["metadata"]["annotations"] == {"a": "b"}
    scheduled = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert len(scheduled) == 1 and scheduled[0]["status"] == "True" and scheduled[0]["lastProbeTime"] is None
    assert scheduled[0]["lastTransitionTime"] and "reason" not in scheduled[0]
    code, body = _bind(stack, namespace, "p1", {"name": "n2"})
    assert (code, body) == (409, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                  "message": 'Operation cannot be fulfilled on pods/binding "p1": pod p1 is already '
                                  'assigned to node "n1"', "reason": "Conflict",
                                  "details": {"name": "p1", "kind": "pods/binding"}, "code": 409})
    _pod(stack, namespace, "gated", {}, ready=None, spec={"schedulingGates": [{"name": "wait"}]})
    code, body = _bind(stack, namespace, "gated", {"name": "n1"})
    assert code == 409 and body["message"] == ('Operation cannot be fulfilled on pods/binding "gated": pod gated has '
                                               "non-empty .spec.schedulingGates")


def test_a_body_of_another_kind_evicts_or_binds_nothing(stack: Stack, namespace: str) -> None:
    """EvictionREST and BindingREST decode the body into policy Eviction / core Binding: another kind is the
    decoder's 400 (converting ... unknown conversion; an options kind too), a non-object body transformDecodeError's,
    and the pod stays as it was (was: a ConfigMap POSTed to pods/x/eviction deleted the pod)."""
    _pod(stack, namespace, "keep", {}, ready=None)
    code, body = _raw(stack, "POST", f"/api/v1/namespaces/{namespace}/pods/keep/eviction",
                      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "keep"}, "data": {"a": "b"}})
    assert (code, json.loads(body)["message"]) == (400, 'ConfigMap in version "v1" cannot be handled as a Eviction: '
                                                        "converting (v1.ConfigMap) to (policy.Eviction): unknown "
                                                        "conversion")
    code, body = _raw(stack, "POST", f"/api/v1/namespaces/{namespace}/pods/keep/eviction",
                      {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "keep"}})
    assert (code, json.loads(body)["message"]) == (400, 'PodDisruptionBudget in version "v1" cannot be handled as '
                                                        "a Eviction: converting (v1.PodDisruptionBudget) to "
                                                        "(policy.Eviction): unknown conversion")
    code, body = _raw(stack, "POST", f"/api/v1/namespaces/{namespace}/pods/keep/eviction", b"[1,2]")
    assert (code, json.loads(body)["message"]) == (
        400, 'the object provided is unrecognized (must be of type Eviction): couldn\'t get version/kind; json parse '
             'error: json: cannot unmarshal array into Go value of type struct { APIVersion string '
             '"json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" } (5b312c325d)')
    code, body = _raw(stack, "POST", f"/api/v1/namespaces/{namespace}/pods/keep/binding",
                      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "keep"},
                       "target": {"kind": "Node", "name": "n1"}})
    assert (code, json.loads(body)["message"]) == (400, 'ConfigMap in version "v1" cannot be handled as a Binding: '
                                                        "converting (v1.ConfigMap) to (core.Binding): unknown "
                                                        "conversion")
    code, pod = _get(stack, f"/api/v1/namespaces/{namespace}/pods/keep")
    assert code == 200 and "nodeName" not in pod["spec"] and "deletionTimestamp" not in pod["metadata"]
    code, body = _raw(stack, "POST", f"/api/v1/namespaces/{namespace}/pods/keep/eviction",
                      {"apiVersion": "policy/v1beta1", "kind": "Eviction", "metadata": {"name": "keep"}})
    assert code == 201, body  # the older version still decodes


def test_a_token_request_of_another_kind_is_the_decoders_400(stack: Stack, namespace: str) -> None:
    """TokenREST decodes into authentication TokenRequest: a ConfigMap body is kube's conversion 400."""
    code, body = _raw(stack, "POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/default/token",
                      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    assert (code, json.loads(body)["message"]) == (400, 'ConfigMap in version "v1" cannot be handled as a '
                                                        "TokenRequest: converting (v1.ConfigMap) to "
                                                        "(authentication.TokenRequest): unknown conversion")
