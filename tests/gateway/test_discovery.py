"""Legacy discovery documents (/api) as kube-apiserver serves them."""

from __future__ import annotations

import pytest

from services.gateway import discovery


@pytest.mark.parametrize(("host", "want"), [
    ("127.0.0.1:6443", "127.0.0.1:6443"),
    ("kapi.example.com", "kapi.example.com:443"),
    ("[::1]:6443", "[::1]:6443"),
    ("[::1]", "[::1]:443"),
    ("", ""),
    ("a b:1", ""),
    ("host:port", ""),
    ("user@host:1", ""),
    ("[::1", ""),
    ("[::1]x", ""),
])
def test_server_address_from_host(host: str, want: str) -> None:
    assert discovery.server_address(host) == want


def test_api_versions_names_the_server_for_every_client() -> None:
    assert discovery.api_versions("10.0.0.1:6443") == {
        "kind": "APIVersions", "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "10.0.0.1:6443"}]}


def test_api_resource_fields_in_go_order_and_crd_names() -> None:
    """metav1.APIResource's JSON order (shortNames and categories before storageVersionHash); a CRD's singular
    and listKind come from its names, not from the kind (kube's crdHandler and discovery controller)."""
    from kapi.resources import REGISTRY, Resource

    cm = discovery.api_resource(REGISTRY.get("", "v1", "configmaps"))
    assert list(cm) == ["name", "singularName", "namespaced", "kind", "verbs", "shortNames", "storageVersionHash"]
    row = Resource("mygroup.example.com", "v1alpha1", "resources", "Kind", True, categories=("all",),
                   singular_name="resource", list_kind_name="KindCollection")
    entry = discovery.api_resource(row)
    assert list(entry)[-2:] == ["categories", "storageVersionHash"]
    assert (entry["singularName"], row.list_kind) == ("resource", "KindCollection")
    plain = Resource("g.example.com", "v1", "widgets", "Widget", True)
    assert (plain.singular, plain.list_kind) == ("widget", "WidgetList")


def test_built_in_subresources_are_listed_by_name() -> None:
    """kube's API installer sorts the paths it registers: /api/v1 lists pods/attach ... pods/status."""
    names = [e["name"] for e in discovery.resource_list("", "v1")["resources"] if e["name"].startswith("pods/")]
    assert names == sorted(names) and names[0] == "pods/attach" and names[-1] == "pods/status"
    deploy = [e["name"] for e in discovery.resource_list("apps", "v1")["resources"]
              if e["name"].startswith("deployments")]
    assert deploy == ["deployments", "deployments/scale", "deployments/status"]
