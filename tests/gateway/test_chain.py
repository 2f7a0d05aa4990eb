"""Pure pieces of the handler chain: forbidden messages, durations, attributes."""

import pytest

from kapi import errors
from kapi.attributes import Attributes, UserInfo
from services.gateway.apifilters.authorization import attributes, forbidden
from services.gateway.apifilters.requestinfo import parse_go_duration
from services.gateway.requestinfo import resolve

ALICE = UserInfo("alice", groups=("system:authenticated",))


def test_forbidden_namespaced_message():
    attrs = Attributes(ALICE, "create", True, api_group="", resource="configmaps", namespace="demo")
    err = forbidden(attrs, "")
    assert err.code == 403 and err.reason == "Forbidden"
    assert err.message == ('configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" '
                           'in the namespace "demo"')


def test_forbidden_named_cluster_scope_with_reason():
    attrs = Attributes(ALICE, "get", True, api_group="rbac.authorization.k8s.io", resource="clusterroles",
                       name="admin")
    err = forbidden(attrs, "no RBAC policy matched")
    assert err.message == ('clusterroles.rbac.authorization.k8s.io "admin" is forbidden: User "alice" cannot get '
                           'resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope: '
                           "no RBAC policy matched")


def test_forbidden_non_resource():
    err = forbidden(Attributes(ALICE, "get", False, path="/metrics"), "")
    assert err.message == 'forbidden: User "alice" cannot get path "/metrics"'


@pytest.mark.parametrize("text,seconds", [("32s", 32), ("1m30s", 90), ("500ms", 0.5), ("1h", 3600)])
def test_go_duration(text, seconds):
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "abc", "10", "5x"])
def test_go_duration_bad(text):
    with pytest.raises(errors.StatusError) as info:
        parse_go_duration(text)
    assert info.value.code == 400


def test_field_selector_names_object_for_authorization():
    info = resolve("GET", "/api/v1/namespaces/d/configmaps", {"fieldSelector": "metadata.name=app"})
    attrs = attributes(info, ALICE, {"fieldSelector": "metadata.name=app"})
    assert attrs.verb == "list" and attrs.name == "app"


@pytest.mark.parametrize(("selector", "name"), [
    ("metadata.name=a,metadata.name=b", "a"),  # kube's RequiresExactMatch: the first term (was: the last)
    ("metadata.name==b,metadata.namespace=d", "b"),
    ("metadata.name!=a", ""),
    ("metadata.namespace=d", ""),
])
def test_field_selector_name_is_the_first_exact_term(selector: str, name: str) -> None:
    info = resolve("GET", "/api/v1/namespaces/d/configmaps", {"fieldSelector": selector})
    assert attributes(info, ALICE, {"fieldSelector": selector}).name == name
