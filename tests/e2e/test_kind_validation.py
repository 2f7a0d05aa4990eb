"""kube's per-kind validation through the whole stack (issue 19 item 7): a Deployment's strategy and selector
operators, a Pod's resources, tolerations and names, a Service's session affinity and IP families, Secret type
rules; each a 422 Invalid with kube's field path and message as kubectl shows it, and nothing stored. And a
service-account token issued in the future (``iat`` beyond the one-minute leeway) is 401."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any

import jwt
import pytest

from kapi.local.launcher import Stack
from services.authn.serviceaccount import algorithm, load_signing_key
from tests.e2e.conftest import Kubectl, token_kubeconfig

TEMPLATE: dict[str, Any] = {"metadata": {"labels": {"app": "web"}},
                            "spec": {"containers": [{"name": "web", "image": "nginx"}]}}
PERCENT = ("a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
           "regex used for validation is '[0-9]+%')")


@pytest.fixture(scope="module")
def ns(kubectl: Kubectl) -> str:
    """One namespace for the module (the shared fixture names it after the test, brackets included)."""
    kubectl.run("create", "namespace", "t-kind-validation")
    return "t-kind-validation"


def _deployment(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE, **spec}}


def _pod(container: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
            "spec": {"containers": [{"name": "web", "image": "nginx", **(container or {})}], **spec}}


def _refused(kubectl: Kubectl, namespace: str, obj: dict[str, Any]) -> str:
    """Create ``obj`` with kubectl; assert it failed and nothing was stored; kubectl's stderr."""
    proc = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(obj), check=False)
    assert proc.returncode != 0, proc.stdout
    name, kind = obj["metadata"]["name"], obj["kind"].lower()
    assert kubectl.run("-n", namespace, "get", kind, name, check=False).returncode != 0
    return proc.stderr


@pytest.mark.parametrize(("obj", "error"), [
    (_deployment(strategy={"rollingUpdate": {"maxSurge": "str"}}),
     'The Deployment "web" is invalid: spec.strategy.rollingUpdate.maxSurge: Invalid value: '
     f'intstr.IntOrString{{Type:1, IntVal:0, StrVal:"str"}}: {PERCENT}'),
    (_deployment(strategy={"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}),
     'The Deployment "web" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: '
     'intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: may not be 0 when `maxSurge` is 0'),
    (_deployment(revisionHistoryLimit=-1),
     'The Deployment "web" is invalid: spec.revisionHistoryLimit: Invalid value: -1: must be greater than or '
     "equal to 0"),
    (_deployment(selector={"matchExpressions": [{"key": "app", "operator": "Near", "values": ["web"]}]}),
     'spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator'),
    (_deployment(template={"metadata": {"labels": {"app": "web"}}, "spec": None}),
     'The Deployment "web" is invalid: spec.template.spec.containers: Required value'),
    (_pod({"resources": {"limits": {"cpu": -1}}}),
     'spec.containers[0].resources.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0'),
    (_pod(tolerations=[{"key": "k", "operator": "Near"}]),
     'The Pod "web" is invalid: spec.tolerations[0].operator: Unsupported value: "Near": supported values: '
     '"Equal", "Exists"'),
    (_pod({"ports": [{"name": "8080", "containerPort": 80}]}),
     'The Pod "web" is invalid: spec.containers[0].ports[0].name: Invalid value: "8080": must contain at least '
     "one letter (a-z)"),
    (_pod({"env": [{"name": "A\u0000B", "value": "x"}]}),
     'The Pod "web" is invalid: spec.containers[0].env[0].name: Invalid value: "A\\x00B": a valid environment '
     "variable name must consist only of printable ASCII characters other than '='"),
    ({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
      "spec": {"ports": [{"port": 80}], "sessionAffinity": "Sticky"}},
     'The Service "web" is invalid: spec.sessionAffinity: Unsupported value: "Sticky": supported values: '
     '"ClientIP", "None"'),
    ({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "web"}, "type": "kubernetes.io/tls",
      "data": {"tls.crt": base64.b64encode(b"cert").decode()}},
     'The Secret "web" is invalid: data[tls.key]: Required value'),
    ({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "web"}, "type": "kubernetes.io/dockerconfigjson",
      "stringData": {".dockerconfigjson": "not json"}},
     'The Secret "web" is invalid: data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": '
     "invalid character 'o' in literal null (expecting 'u')"),
], ids=["maxSurge-str", "surge-and-unavailable-0", "history-negative", "selector-operator", "null-pod-spec",
        "negative-cpu", "toleration-operator", "port-name", "env-nul", "session-affinity", "tls-key",
        "dockerconfigjson"])
def test_kube_validation_refuses(kubectl: Kubectl, ns: str, obj: dict[str, Any], error: str) -> None:
    stderr = _refused(kubectl, ns, obj)
    assert error in stderr, stderr


def test_valid_objects_stay_valid(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(_deployment(
        strategy={"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}, minReadySeconds=5)))
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(_pod(
        {"ports": [{"name": "http", "containerPort": 80}], "env": [{"name": "my.var", "value": "a\u0000b"}],
         "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "500m"}}},
        tolerations=[{"operator": "Exists"}])))
    kubectl.run("-n", namespace, "create", "secret", "generic", "ok", "--type=kubernetes.io/basic-auth",
                "--from-literal=username=admin")
    proc = kubectl.run("-n", namespace, "patch", "secret", "ok", "--type=merge", "-p",
                       json.dumps({"type": "Opaque"}), check=False)
    assert proc.returncode != 0
    assert 'The Secret "ok" is invalid: type: Invalid value: "Opaque": field is immutable' in proc.stderr


def test_service_account_token_issued_in_the_future_is_refused(stack: Stack, kubectl: Kubectl, ns: str,
                                                               tmp_path: Path) -> None:
    kubectl.run("create", "serviceaccount", "builder", "-n", ns)
    token = kubectl.run("create", "token", "builder", "-n", ns).stdout.strip()
    claims, header = jwt.decode(token, options={"verify_signature": False}), jwt.get_unverified_header(token)
    key = load_signing_key(str(stack.pki.dir / "sa.key"))

    def signed(**changes: Any) -> Kubectl:
        forged = jwt.encode({**claims, **changes}, key, algorithm=algorithm(key), headers={"kid": header["kid"]})
        return Kubectl(token_kubeconfig(stack, "sa", forged, tmp_path / "sa.kubeconfig"))

    # the same claims signed again authenticate (the signing is right), so only iat makes the difference
    assert signed().run("auth", "whoami", "-o", "json", check=False).returncode == 0
    proc = signed(iat=int(time.time()) + 3600).run("get", "configmaps", "-n", ns, check=False)
    assert proc.returncode != 0
    assert "You must be logged in to the server (Unauthorized)" in proc.stderr, proc.stderr


@pytest.mark.parametrize(("obj", "error"), [
    (_pod({"livenessProbe": {"exec": {"command": ["true"]}, "httpGet": {"port": 80}}}),
     'The Pod "web" is invalid: spec.containers[0].livenessProbe.httpGet: Forbidden: may not specify more than 1 '
     "handler type"),
    (_pod({"livenessProbe": {"tcpSocket": {"port": 80}, "successThreshold": 2}}),
     'The Pod "web" is invalid: spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1'),
    (_pod(volumes=[{"name": "v", "hostPath": {"path": "/x"}, "emptyDir": {}}]),
     'The Pod "web" is invalid: spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type'),
    (_pod(volumes=[{"name": "v", "configMap": {"name": "c", "items": [{"key": "k", "path": "../x"}]}}]),
     'The Pod "web" is invalid: spec.volumes[0].configMap.items[0].path: Invalid value: "../x": must not '
     "contain '..'"),
    (_pod(securityContext={"runAsUser": -1}),
     'The Pod "web" is invalid: spec.securityContext.runAsUser: Invalid value: -1: must be between 0 and '
     "2147483647, inclusive"),
    (_pod(affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}}]}}),
     'The Pod "web" is invalid: spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].'
     "weight: Invalid value: 0: must be in the range 1-100"),
    (_pod(topologySpreadConstraints=[{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]),
     'The Pod "web" is invalid: spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than '
     "zero"),
    (_deployment(template={"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
        {"name": "web", "image": "nginx", "readinessProbe": {"grpc": {"port": 0}}}]}}),
     'The Deployment "web" is invalid: spec.template.spec.containers[0].readinessProbe.grpc.port: Invalid value: '
     "0: must be between 1 and 65535, inclusive"),
    (_pod({"ports": [{"containerPort": 80, "hostPort": 8080}]}, hostNetwork=True),
     'The Pod "web" is invalid: spec.containers[0].ports[0].hostPort: Invalid value: 8080: must match '
     "`containerPort` when `hostNetwork` is true"),
    (_pod(activeDeadlineSeconds=0),
     'The Pod "web" is invalid: spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, '
     "inclusive"),
    (_pod(os={"name": "plan9"}),
     'The Pod "web" is invalid: spec.os: Unsupported value: "plan9": supported values: "linux", "windows"'),
], ids=["two-handlers", "liveness-success-threshold", "two-volume-sources", "item-path-dotdot", "run-as-user",
        "affinity-weight", "max-skew", "template-grpc-port", "host-network-port", "active-deadline", "os-name"])
def test_pod_spec_rules_reach_kubectl(kubectl: Kubectl, ns: str, obj: dict[str, Any], error: str) -> None:
    """ValidatePodSpec's probes, volume sources, securityContext, affinity and topology spread, on Pods and
    templates (kapi/kinds/pod{probes,volumes,security,affinity}.py)."""
    stderr = _refused(kubectl, ns, obj)
    assert stderr.strip() == error, stderr


@pytest.mark.parametrize(("obj", "error"), [
    ({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"}, "spec": {"hard": {"pods": "-1"}}},
     'The ResourceQuota "q" is invalid: spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0'),
    ({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l"},
      "spec": {"limits": [{"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}]}},
     # defaulting gives default and defaultRequest the max first, so those two are below min as well
     'The LimitRange "l" is invalid: \n'
     "* spec.limits[0].min[cpu]: Invalid value: 2: min value 2 is greater than max value 1\n"
     "* spec.limits[0].defaultRequest[cpu]: Invalid value: 1: min value 2 is greater than default request value 1\n"
     "* spec.limits[0].default[cpu]: Invalid value: 2: min value 2 is greater than default value 1"),
], ids=["quota-negative", "limit-min-over-max"])
def test_quota_and_limit_range_rules_reach_kubectl(kubectl: Kubectl, ns: str, obj: dict[str, Any], error: str) -> None:
    """ValidateResourceQuota and ValidateLimitRange (kapi/kinds/quotas.py)."""
    stderr = _refused(kubectl, ns, obj)
    assert stderr.strip() == error, stderr


@pytest.mark.parametrize(("obj", "error"), [
    ({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
      "spec": {"resources": {"requests": {"storage": "1Gi"}}}},
     'The PersistentVolumeClaim "c" is invalid: spec.accessModes: Required value: at least 1 access mode is '
     "required"),
    ({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "e"},
      "subsets": [{"addresses": [{"ip": "169.254.1.1"}], "ports": [{"port": 80}]}]},
     # the deprecation warning of every v1 Endpoints request comes with the refusal too
     "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice\n"
     'The Endpoints "e" is invalid: subsets[0].addresses[0].ip: Invalid value: "169.254.1.1": may not be in the '
     "link-local range (169.254.0.0/16, fe80::/10)"),
    ({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "ev"}, "reason": "Started",
      "involvedObject": {"kind": "Pod", "name": "p", "namespace": "elsewhere"}},
     'The Event "ev" is invalid: involvedObject.namespace: Invalid value: "elsewhere": does not match '
     "event.namespace"),
    ({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
      "spec": {"ports": [{"port": 80}], "selector": {"app": "web"}, "loadBalancerSourceRanges": ["10.0.0.0/8"],
               "sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 0}}}},
     'The Service "s" is invalid: \n'
     "* spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater than 0 and less than "
     "86400\n"
     "* spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'"),
], ids=["pvc-access-modes", "endpoints-link-local", "event-namespace", "service-affinity-and-ranges"])
def test_core_kind_rules_reach_kubectl(kubectl: Kubectl, ns: str, obj: dict[str, Any], error: str) -> None:
    """ValidatePersistentVolumeClaim, ValidateEndpointsCreate, the core/v1 Event's legacyValidateEvent and the rest
    of ValidateService (kapi/kinds/persistentvolumes.py, endpoints.py, events.py, services.py)."""
    stderr = _refused(kubectl, ns, obj)
    assert stderr.strip() == error, stderr


def test_node_and_persistent_volume_rules_reach_kubectl(kubectl: Kubectl) -> None:
    """Cluster-scoped: ValidateNode's taints and ValidatePersistentVolume's one volume source."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "bad-taint"},
            "spec": {"taints": [{"key": "a", "effect": "Sometimes"}]}}
    proc = kubectl.run("create", "-f", "-", input=json.dumps(node), check=False)
    assert proc.stderr.strip() == ('The Node "bad-taint" is invalid: metadata.taints[0].effect: Unsupported value: '
                                   '"Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"')
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "no-source"},
          "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}}
    proc = kubectl.run("create", "-f", "-", input=json.dumps(pv), check=False)
    assert proc.stderr.strip() == 'The PersistentVolume "no-source" is invalid: spec: Required value: must specify ' \
                                  "a volume type"


def test_core_kind_warnings_reach_kubectl(kubectl: Kubectl, ns: str) -> None:
    """GetWarningsForPersistentVolumeClaim and GetWarningsForService (kapi/kinds/corewarnings.py) as kubectl's
    ``Warning:`` lines."""
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": "warned", "annotations": {"volume.beta.kubernetes.io/storage-class": "fast"}},
           "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1500m"}}}}
    proc = kubectl.run("-n", ns, "create", "-f", "-", input=json.dumps(pvc))
    assert proc.stderr.splitlines() == [
        'Warning: metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use '
        '"storageClassName" attribute instead',
        'Warning: spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer']
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "warned"},
           "spec": {"ports": [{"port": 80}], "selector": {"app": "web"}, "externalName": "db.example.com"}}
    proc = kubectl.run("-n", ns, "create", "-f", "-", input=json.dumps(svc))
    assert proc.stderr.splitlines() == ['Warning: spec.externalName is ignored when spec.type is not "ExternalName"']


def test_v1_endpoints_requests_warn_of_the_deprecation(kubectl: Kubectl, ns: str) -> None:
    """KEP-4974 (kube 1.33+): every v1 Endpoints request, a read as a write, warns to use EndpointSlice."""
    warning = "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
    ep = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "warned"},
          "subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]}
    assert kubectl.run("-n", ns, "create", "-f", "-", input=json.dumps(ep)).stderr.splitlines() == [warning]
    assert kubectl.run("-n", ns, "get", "endpoints", "warned").stderr.splitlines() == [warning]
    assert "deprecated" not in kubectl.run("-n", ns, "get", "endpointslices").stderr
