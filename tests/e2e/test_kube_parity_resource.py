"""resource.k8s.io/v1 (Dynamic Resource Allocation) served as kube-apiserver has since 1.34 (issue #17 item 6).

Discovery (legacy and aggregated), OpenAPI v3, the APIService, kubectl's columns, the strategies (ResourceClaim
status reset on create and kept on update, spec immutable, generation on DeviceClass/ResourceSlice only, request
defaults), kube's validation messages, and the admin/edit/view aggregation.
"""

from __future__ import annotations

import json

from tests.e2e.conftest import Kubectl, wait_for

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
GROUP = "resource.k8s.io"


def test_discovery_openapi_and_api_resources(kubectl: Kubectl) -> None:
    out = kubectl.run("api-resources", "--api-group", GROUP).stdout.splitlines()
    assert [line.split() for line in out] == [
        ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"],
        ["deviceclasses", "resource.k8s.io/v1", "false", "DeviceClass"],
        ["resourceclaims", "resource.k8s.io/v1", "true", "ResourceClaim"],
        ["resourceclaimtemplates", "resource.k8s.io/v1", "true", "ResourceClaimTemplate"],
        ["resourceslices", "resource.k8s.io/v1", "false", "ResourceSlice"]]
    assert kubectl.run("get", "--raw", "/apis/resource.k8s.io").stdout == (
        '{"kind":"APIGroup","apiVersion":"v1","name":"resource.k8s.io","versions":[{"groupVersion":'
        '"resource.k8s.io/v1","version":"v1"}],"preferredVersion":{"groupVersion":"resource.k8s.io/v1",'
        '"version":"v1"}}\n')
    groups = [g["name"] for g in json.loads(kubectl.run("get", "--raw", "/apis").stdout)["groups"]]
    # kube's order: groupPriorityMinimum 16200 shared with discovery.k8s.io, then flowcontrol (16100)
    assert groups.index("discovery.k8s.io") + 1 == groups.index(GROUP) == groups.index(
        "flowcontrol.apiserver.k8s.io") - 1
    resources = json.loads(kubectl.run("get", "--raw", "/apis/resource.k8s.io/v1").stdout)["resources"]
    claims = {r["name"]: r for r in resources}
    assert sorted(claims) == ["deviceclasses", "resourceclaims", "resourceclaims/status", "resourceclaimtemplates",
                              "resourceslices"]
    assert claims["resourceclaims/status"]["verbs"] == ["get", "patch", "update"]
    assert claims["deviceclasses"]["singularName"] == "deviceclass" and not claims["deviceclasses"]["namespaced"]
    assert "apis/resource.k8s.io/v1" in json.loads(kubectl.run("get", "--raw", "/openapi/v3").stdout)["paths"]
    spec = json.loads(kubectl.run("get", "--raw", "/openapi/v3/apis/resource.k8s.io/v1").stdout)
    assert "io.k8s.api.resource.v1.ResourceClaim" in spec["components"]["schemas"]
    apiservice = json.loads(wait_for(lambda: kubectl.run("get", "apiservice", "v1.resource.k8s.io", "-o", "json",
                                                         check=False).stdout, timeout=30))
    assert (apiservice["spec"]["groupPriorityMinimum"], apiservice["spec"]["versionPriority"]) == (16200, 21)


def test_aggregated_discovery_lists_the_group(kubectl: Kubectl, stack) -> None:
    from tests.e2e.test_apiservices import gateway_get

    doc = gateway_get(stack, "gateway-1", "/apis", AGGREGATED)
    entry = next(g for g in doc["items"] if g["metadata"]["name"] == GROUP)
    version = entry["versions"][0]
    assert version["version"] == "v1" and version["freshness"] == "Current"
    by_name = {r["resource"]: r for r in version["resources"]}
    assert sorted(by_name) == ["deviceclasses", "resourceclaims", "resourceclaimtemplates", "resourceslices"]
    assert by_name["resourceclaims"]["scope"] == "Namespaced"
    assert by_name["resourceclaims"]["subresources"][0]["subresource"] == "status"
    assert by_name["resourceslices"]["scope"] == "Cluster"


def _claim(name: str, **extra) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
            **extra}


def test_resource_claims_strategy_columns_and_validation(kubectl: Kubectl, namespace: str) -> None:
    claim = json.loads(kubectl.run("-n", namespace, "create", "-o", "json", "-f", "-", input=json.dumps(_claim(
        "one-gpu", status={"reservedFor": [{"resource": "pods", "name": "p", "uid": "1"}]}))).stdout)
    assert claim["status"] == {}  # PrepareForCreate: ResourceClaimStatus{}
    assert "generation" not in claim["metadata"]
    assert claim["spec"]["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}
    out = kubectl.run("-n", namespace, "get", "resourceclaims").stdout.splitlines()
    assert out[0].split() == ["NAME", "STATE", "AGE"] and out[1].split()[:2] == ["one-gpu", "pending"]

    allocation = {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "node1",
                                           "device": "gpu-0"}]}}
    kubectl.run("-n", namespace, "patch", "resourceclaim", "one-gpu", "--subresource=status", "--type=merge", "-p",
                json.dumps({"status": {"allocation": allocation,
                                       "reservedFor": [{"resource": "pods", "name": "p", "uid": "1"}]}}))
    out = kubectl.run("-n", namespace, "get", "resourceclaims").stdout.splitlines()
    assert out[1].split()[:2] == ["one-gpu", "allocated,reserved"]
    # the main resource keeps the stored status
    kubectl.run("-n", namespace, "patch", "resourceclaim", "one-gpu", "--type=merge", "-p",
                '{"metadata":{"labels":{"a":"b"}},"status":{"reservedFor":null}}')
    kept = json.loads(kubectl.run("-n", namespace, "get", "resourceclaim", "one-gpu", "-o", "json").stdout)
    assert kept["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": "1"}]

    changed = kubectl.run("-n", namespace, "patch", "resourceclaim", "one-gpu", "--type=json", "-p",
                          '[{"op":"replace","path":"/spec/devices/requests/0/exactly/deviceClassName",'
                          '"value":"other"}]', check=False)
    assert changed.returncode == 1
    assert changed.stderr.startswith('The ResourceClaim "one-gpu" is invalid: spec: Invalid value: ')
    assert changed.stderr.rstrip().endswith(": field is immutable")

    bad = _claim("bad")
    bad["spec"]["devices"]["requests"] = [{"name": "Bad_Name"}, {"name": "two", "exactly": {
        "allocationMode": "All", "count": 2}}, {"name": "three", "exactly": {"deviceClassName": "c",
                                                                           "allocationMode": "Some"}}]
    refused = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(bad), check=False)
    assert refused.stderr == (
        'The ResourceClaim "bad" is invalid: \n'
        '* spec.devices.requests[0].name: Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of '
        "lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. "
        "'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')\n"
        '* spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required\n'
        '* spec.devices.requests[1].exactly.deviceClassName: Required value\n'
        "* spec.devices.requests[1].exactly.count: Invalid value: 2: must not be specified when allocationMode is "
        "'All'\n"
        '* spec.devices.requests[2].exactly.allocationMode: Unsupported value: "Some": supported values: "All", '
        '"ExactCount"\n')


def test_device_classes_and_slices_with_kubectl(kubectl: Kubectl, namespace: str) -> None:
    name = f"{namespace}.example.com"
    kubectl.run("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{name}"'}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{namespace}-slice"},
         "spec": {"driver": name, "nodeName": "node-1", "pool": {"name": "pool-a", "generation": 1,
                                                                 "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0"}]}}]}))
    try:
        out = kubectl.run("get", "deviceclasses", name).stdout.splitlines()
        assert out[0].split() == ["NAME", "AGE"] and out[1].split()[0] == name
        out = kubectl.run("get", "resourceslices", f"{namespace}-slice").stdout.splitlines()
        assert out[0].split() == ["NAME", "NODE", "DRIVER", "POOL", "AGE"]
        assert out[1].split()[:4] == [f"{namespace}-slice", "node-1", name, "pool-a"]
        selected = kubectl.run("get", "resourceslices", f"--field-selector=spec.driver={name}", "-o", "name").stdout
        assert selected == f"resourceslice.resource.k8s.io/{namespace}-slice\n"
        dc = json.loads(kubectl.run("get", "deviceclass", name, "-o", "json").stdout)
        assert dc["metadata"]["generation"] == 1
        kubectl.run("patch", "deviceclass", name, "--type=merge", "-p", '{"spec":{"config":[{"opaque":{'
                    '"driver":"x.example.com","parameters":{"a":1}}}]}}')
        dc = json.loads(kubectl.run("get", "deviceclass", name, "-o", "json").stdout)
        assert dc["metadata"]["generation"] == 2
        bad = kubectl.run("create", "-f", "-", check=False, input=json.dumps({
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": f"bad-{name}"},
            "spec": {"selectors": [{}], "config": [{}]}}))
        assert bad.stderr == (f'The DeviceClass "bad-{name}" is invalid: \n'
                              '* spec.selectors[0].cel: Required value\n'
                              '* spec.config[0].opaque: Required value\n')
    finally:
        kubectl.run("delete", "deviceclass", name, "--ignore-not-found")
        kubectl.run("delete", "resourceslice", f"{namespace}-slice", "--ignore-not-found")


def test_edit_and_view_roles_aggregate_claims(kubectl: Kubectl, alice: Kubectl, namespace: str) -> None:
    for verb, resource, role, allowed in (("create", "resourceclaims", "edit", "yes"),
                                          ("delete", "resourceclaimtemplates", "admin", "yes"),
                                          ("get", "resourceclaims/status", "view", "yes"),
                                          ("list", "resourceclaimtemplates", "view", "yes")):
        binding = f"{role}-{verb}"
        kubectl.run("-n", namespace, "create", "rolebinding", binding, f"--clusterrole={role}", "--user=alice")
        name, _, sub = resource.partition("/")
        args = [verb, f"{name}.{GROUP}", *([f"--subresource={sub}"] if sub else [])]
        try:
            def answer(args: list[str] = args, allowed: str = allowed) -> str:
                proc = alice.run("-n", namespace, "auth", "can-i", *args, check=False)
                return proc.stdout.strip() if proc.stdout.strip() == allowed else ""
            assert wait_for(answer) == allowed, (verb, resource, role)
            if role == "view":  # view reads, never writes
                assert alice.run("-n", namespace, "auth", "can-i", "create", f"resourceclaims.{GROUP}",
                                 check=False).stdout.strip() == "no"
        finally:
            kubectl.run("-n", namespace, "delete", "rolebinding", binding)
    node = json.loads(kubectl.run("get", "clusterrole", "system:node", "-o", "json").stdout)["rules"]
    assert {"apiGroups": [GROUP], "resources": ["resourceclaims"], "verbs": ["get"]} in node
    rules = json.loads(kubectl.run("get", "clusterrole", "system:aggregate-to-view", "-o", "json").stdout)["rules"]
    assert {"apiGroups": [GROUP], "resources": ["resourceclaims", "resourceclaims/status", "resourceclaimtemplates"],
            "verbs": ["get", "list", "watch"]} in rules
