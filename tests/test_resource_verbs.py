"""Discovery verbs of every built-in as kube-apiserver 1.3x lists them (`kubectl api-resources -o wide`)."""

from __future__ import annotations

from kapi.resources import RESOURCES

ALL = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
NO_DELETECOLLECTION = ["create", "delete", "get", "list", "patch", "update", "watch"]
CREATE = ["create"]

# Built-ins whose verbs are not the full set; every other stored built-in serves ALL.
KUBE_VERBS = {
    ("", "bindings"): CREATE,
    ("", "componentstatuses"): ["get", "list"],
    ("", "namespaces"): NO_DELETECOLLECTION,
    ("authentication.k8s.io", "selfsubjectreviews"): CREATE,
    ("authentication.k8s.io", "tokenreviews"): CREATE,
    ("authorization.k8s.io", "localsubjectaccessreviews"): CREATE,
    ("authorization.k8s.io", "selfsubjectaccessreviews"): CREATE,
    ("authorization.k8s.io", "selfsubjectrulesreviews"): CREATE,
    ("authorization.k8s.io", "subjectaccessreviews"): CREATE,
}


def test_verbs_as_kube() -> None:
    got = {(r.group, r.resource): sorted(r.verbs) for r in RESOURCES}
    want = {key: KUBE_VERBS.get(key, ALL) for key in got}
    assert got == want


def test_nodes_and_persistentvolumes_keep_deletecollection() -> None:
    verbs = {(r.group, r.resource): r.verbs for r in RESOURCES}
    assert "deletecollection" in verbs[("", "nodes")]
    assert "deletecollection" in verbs[("", "persistentvolumes")]
    assert "deletecollection" not in verbs[("", "namespaces")]
