"""kapi's OpenAPI operations against kube 1.37's, as the official Python client 37.x was generated from them.

The client's API classes are kube's OpenAPI tags (``CoreV1Api`` <- ``core_v1``), its method names the
operationIds without the group-version (``listNamespacedConfigMap`` -> ``list_namespaced_config_map``), and each
method's serializer records kube's HTTP method, path, query parameters, Accept types (the operation's
``produces``), Content-Type (``consumes``) and responses. Every operation of a resource kapi serves must be
there with the same facts, and every operation the client has on a served path must be in kapi's document
(bar the subresources kapi does not serve, listed below). The client was generated from a spec without the
deprecated ``/watch/`` paths, so those are checked by name only.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import re

import kubernetes
import pytest

from services.gateway import openapi, openapi_routes

# Operations of kube 1.37 on paths kapi serves that kapi does not have: (path fragment, why).
NOT_SERVED = (
    ("/pods/{name}/ephemeralcontainers", "not implemented (kubectl debug's ephemeral containers)"),
    ("/pods/{name}/resize", "not implemented (in-place resize)"),
    ("/services/{name}/proxy", "no proxy to a Service's endpoints"),
    ("/nodes/{name}/proxy", "no kubelets to proxy to"),
    ("/csinodes/{name}/status", "CSINode status is newer than the sources kapi's CSINode rules come from"),
)
# What kapi does not advertise on purpose: CBOR is an alpha serializer kapi does not have (kube lists it only
# with the CBORServingAndStorage gate on); shardSelector is ListOptions' alpha field of sharded lists.
_NOT_ADVERTISED_MEDIA = {"application/cbor", "application/cbor-seq", "application/apply-patch+cbor"}
_NOT_ADVERTISED_QUERY = {"shardSelector"}


@functools.cache
def client_operations() -> dict[tuple[str, str], dict]:
    """(HTTP method, path) -> {class, name, query, accept, content, responses} from the installed client."""
    base = os.path.join(os.path.dirname(kubernetes.__file__), "client", "api")
    out: dict[tuple[str, str], dict] = {}
    for file in sorted(os.listdir(base)):
        if not file.endswith("_api.py"):
            continue
        tree = ast.parse(open(os.path.join(base, file)).read())
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            responses = {}
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef) and not fn.name.startswith("_"):
                    for node in ast.walk(fn):
                        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "_response_types_map":
                            responses[fn.name] = {k.value: getattr(v, "value", None)
                                                  for k, v in zip(node.value.keys, node.value.values, strict=True)}
            for fn in cls.body:
                if not (isinstance(fn, ast.FunctionDef) and fn.name.startswith("_") and fn.name.endswith("_serialize")):
                    continue
                info: dict = {"class": cls.name, "name": fn.name[1:-len("_serialize")], "query": set(),
                              "accept": [], "content": []}
                for node in ast.walk(fn):
                    if not isinstance(node, ast.Call):
                        continue
                    attr = getattr(node.func, "attr", "")
                    if attr == "param_serialize":
                        for kw in node.keywords:
                            if kw.arg in ("method", "resource_path"):
                                info[kw.arg] = kw.value.value
                    elif attr == "append" and node.args and isinstance(node.args[0], ast.Tuple):
                        if isinstance(node.args[0].elts[0], ast.Constant):
                            info["query"].add(node.args[0].elts[0].value)
                    elif attr == "select_header_accept":
                        info["accept"] = [e.value for e in node.args[0].elts]
                    elif attr == "select_header_content_type":
                        info["content"] = [e.value for e in node.args[0].elts]
                info["responses"] = responses.get(info["name"], {})
                if "resource_path" in info:
                    out[(info["method"], info["resource_path"])] = info
    return out


@functools.cache
def kapi_v2() -> dict:
    return json.loads(openapi.swagger_v2())


def _kapi_operations() -> dict[tuple[str, str], tuple[dict, dict]]:
    out = {}
    for path, item in kapi_v2()["paths"].items():
        for method, op in item.items():
            if method != "parameters":
                out[(method.upper(), path)] = (op, item)
    return out


def _class_of(tag: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in tag.split("_")) + "Api"


def _snake(operation_id: str, cls: str) -> str:
    name = operation_id.replace(cls.removesuffix("Api"), "", 1)
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return re.sub(r"([a-z\d])([A-Z])", r"\1_\2", name).lower()


def _served(path: str) -> bool:
    return not path.split("/")[3:4] == ["watch"] and "/watch/" not in path


def test_every_kapi_operation_is_kube_s_with_the_same_facts():
    client = client_operations()
    checked = 0
    for (method, path), (op, item) in _kapi_operations().items():
        if "/watch/" in path:
            continue
        theirs = client.get((method, path))
        assert theirs is not None, (method, path)  # the registry here holds built-ins only
        cls = _class_of(op["tags"][0])
        assert theirs["class"] == cls, (method, path)
        assert theirs["name"] == _snake(op["operationId"], cls), (method, path, op["operationId"])
        query = {p["name"] for p in (*item.get("parameters", ()), *op.get("parameters", ())) if p["in"] == "query"}
        assert query == theirs["query"] - _NOT_ADVERTISED_QUERY, (method, path)
        assert op["produces"] == [t for t in theirs["accept"] if t not in _NOT_ADVERTISED_MEDIA], (method, path)
        if theirs["content"]:
            assert op["consumes"] == [t for t in theirs["content"] if t not in _NOT_ADVERTISED_MEDIA], (method, path)
        assert set(op["responses"]) == set(theirs["responses"]), (method, path)
        for code, schema in op["responses"].items():
            want = theirs["responses"][code]
            got = schema.get("schema")
            if want is None:
                assert got is None
            elif want in ("object", "str"):
                assert got == {"type": {"str": "string"}.get(want, want)}, (method, path, code, got)
            else:
                assert want.endswith(got["$ref"].rsplit(".", 1)[-1]), (method, path, code, want, got)
        checked += 1
    assert checked > 500


def test_every_kube_operation_on_a_served_path_is_kapi_s():
    ours = _kapi_operations()
    served = {(m, p) for m, p in ours}
    prefixes = {p.split("/{name}")[0] for _, p in served}
    missing = []
    for (method, path), theirs in client_operations().items():
        if (method, path) in served:
            continue
        if path.split("/{name}")[0] not in prefixes:
            continue  # a resource or version kapi does not serve
        missing.append((theirs["class"], theirs["name"], path))
    unexplained = [m for m in missing if not any(fragment in m[2] for fragment, _ in NOT_SERVED)]
    assert unexplained == []


def test_deprecated_watch_paths_are_kube_s():
    ops = _kapi_operations()
    got = {p: (o["operationId"], o["x-kubernetes-action"]) for (m, p), (o, _) in ops.items() if "/watch/" in p}
    assert got["/api/v1/watch/namespaces/{namespace}/configmaps"] == ("watchCoreV1NamespacedConfigMapList", "watchlist")
    assert got["/api/v1/watch/namespaces/{namespace}/configmaps/{name}"] == ("watchCoreV1NamespacedConfigMap", "watch")
    assert got["/api/v1/watch/configmaps"] == ("watchCoreV1ConfigMapListForAllNamespaces", "watchlist")
    assert got["/apis/rbac.authorization.k8s.io/v1/watch/clusterroles/{name}"] == (
        "watchRbacAuthorizationV1ClusterRole", "watch")
    op, _ = ops[("GET", "/api/v1/watch/namespaces/{namespace}/configmaps")]
    assert op["responses"]["200"]["schema"] == {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent"}
    # create-only reviews have no watch routes
    assert not any("tokenreviews" in p for p in got)


@pytest.mark.parametrize(("operation", "path", "want"), [
    ("readNamespacedPod", "/api/v1/namespaces/{namespace}/pods/{name}", ("readCoreV1NamespacedPod", "core_v1")),
    ("listClusterRole", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
     ("listRbacAuthorizationV1ClusterRole", "rbacAuthorization_v1")),
    ("deletecollectionNamespacedCronTab", "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs",
     ("deleteStableExampleComV1CollectionNamespacedCronTab", "stableExampleCom_v1")),
    ("connectGetNamespacedPodExec", "/api/v1/namespaces/{namespace}/pods/{name}/exec",
     ("connectCoreV1GetNamespacedPodExec", "core_v1")),
])
def test_operation_ids_and_tags_follow_get_operation_id_and_tags(operation, path, want):
    route = openapi_routes.Route("GET", path, operation, "get", "", ("", "v1", "X"), (), (), None, "object",
                                 ("200",), (), ())
    assert openapi_routes.operation_id_and_tag(route) == want


def test_custom_resources_follow_the_apiextensions_builder():
    from kapi.resources import Resource
    r = Resource("stable.example.com", "v1", "crontabs", "CronTab", True, subresources=("status", "scale"))
    routes = openapi_routes.routes(r, {}, builtin=False)
    by = {(rt.method, rt.path): rt for rt in routes}
    assert not any("/watch/" in rt.path for rt in routes)
    assert by[("GET", "/apis/stable.example.com/v1/crontabs")].operation == "listCronTabForAllNamespaces"
    read = by[("GET", "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}")]
    assert ("resourceVersion", "string") in read.query and read.produces == ("application/json", "application/yaml")
    patch = by[("PATCH", "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/scale")]
    assert patch.operation == "patchNamespacedCronTabScale" and patch.response == "scale" and patch.codes == ("200",)
    assert "application/strategic-merge-patch+json" not in patch.consumes
