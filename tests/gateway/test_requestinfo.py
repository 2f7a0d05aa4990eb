"""RequestInfo resolution, table-driven against kube-apiserver's RequestInfoFactory behaviour."""

import pytest

from services.gateway.requestinfo import resolve

CASES = [
    # method, path, query, (resource_request, verb, group, version, namespace, resource, name, subresource)
    ("GET", "/api/v1/namespaces", {}, (True, "list", "", "v1", "", "namespaces", "", "")),
    ("GET", "/api/v1/namespaces/demo", {}, (True, "get", "", "v1", "demo", "namespaces", "demo", "")),
    ("GET", "/api/v1/namespaces/demo/configmaps", {}, (True, "list", "", "v1", "demo", "configmaps", "", "")),
    ("GET", "/api/v1/namespaces/demo/configmaps", {"watch": "true"},
     (True, "watch", "", "v1", "demo", "configmaps", "", "")),
    ("GET", "/api/v1/watch/namespaces/demo/configmaps", {},
     (True, "watch", "", "v1", "demo", "configmaps", "", "")),
    ("POST", "/api/v1/namespaces/demo/configmaps", {}, (True, "create", "", "v1", "demo", "configmaps", "", "")),
    ("PUT", "/api/v1/namespaces/demo/pods/p/status", {}, (True, "update", "", "v1", "demo", "pods", "p", "status")),
    ("PATCH", "/apis/apps/v1/namespaces/d/deployments/x", {},
     (True, "patch", "apps", "v1", "d", "deployments", "x", "")),
    ("DELETE", "/api/v1/namespaces/demo/configmaps", {},
     (True, "deletecollection", "", "v1", "demo", "configmaps", "", "")),
    ("DELETE", "/api/v1/namespaces/demo/configmaps/a", {}, (True, "delete", "", "v1", "demo", "configmaps", "a", "")),
    ("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {},
     (True, "list", "rbac.authorization.k8s.io", "v1", "", "clusterroles", "", "")),
    ("PUT", "/api/v1/namespaces/demo/finalize", {},
     (True, "update", "", "v1", "demo", "namespaces", "demo", "finalize")),
    ("GET", "/api", {}, (False, "get", "", "", "", "", "", "")),
    ("GET", "/api/v1", {}, (False, "get", "", "", "", "", "", "")),
    ("GET", "/apis/apps/v1", {}, (False, "get", "", "", "", "", "", "")),
    ("GET", "/version", {}, (False, "get", "", "", "", "", "", "")),
    ("POST", "/healthz", {}, (False, "post", "", "", "", "", "", "")),
]


@pytest.mark.parametrize("method,path,query,expected", CASES)
def test_resolve(method, path, query, expected):
    info = resolve(method, path, query)
    got = (info.is_resource_request, info.verb, info.api_group, info.api_version, info.namespace, info.resource,
           info.name, info.subresource)
    assert got == expected


def test_long_running():
    assert resolve("GET", "/api/v1/namespaces/a/pods", {"watch": "1"}).long_running
    assert not resolve("GET", "/api/v1/namespaces/a/pods", {}).long_running


@pytest.mark.parametrize(("value", "verb"), [
    (None, "list"), ("false", "list"), ("False", "list"), ("0", "list"),
    ("true", "watch"), ("1", "watch"), ("yes", "watch"), ("maybe", "watch"), ("", "watch"),
])
def test_watch_parameter_reads_as_metav1_converts_booleans(value, verb):
    query = {} if value is None else {"watch": value}
    assert resolve("GET", "/api/v1/namespaces/a/pods", query).verb == verb
