"""Methods no route serves: kube's go-restful 405 through serviceErrorHandler.

kube's API installer registers a route only for the verbs a storage implements (installer.go); a request
whose path matches routes but whose method none of them takes is go-restful's ServiceError 405, which
serviceErrorHandler (apiserver pkg/server/handler.go) answers as NewGenericServerResponse(405):
``the server does not allow this method on the requested resource``, ``details: {}``.
"""

from __future__ import annotations

import json

import pytest

from kapi.local.launcher import Stack
from tests.e2e.test_grpc_api import rest

NS = "reqmsg-routes"
NO_ROUTE = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "the server does not allow this method on the requested resource",
            "reason": "MethodNotAllowed", "details": {}, "code": 405}


@pytest.fixture(scope="module")
def pod(stack: Stack) -> None:
    rest(stack, "POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
    rest(stack, "POST", f"/api/v1/namespaces/{NS}/pods",
         {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}})


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/apis/authentication.k8s.io/v1/tokenreviews"),  # a Creater only: just the POST route
    ("GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"),
    ("PUT", f"/api/v1/namespaces/{NS}/configmaps"),  # a collection has GET, POST, DELETE
    ("PATCH", f"/api/v1/namespaces/{NS}/configmaps"),
    ("POST", f"/api/v1/namespaces/{NS}/configmaps/c"),  # an item has GET, PUT, PATCH, DELETE
    ("POST", f"/api/v1/namespaces/{NS}/pods/p/log"),  # log: a Getter
    ("GET", f"/api/v1/namespaces/{NS}/pods/p/eviction"),  # eviction, binding: Creaters
    ("GET", f"/api/v1/namespaces/{NS}/pods/p/binding"),
    ("GET", f"/api/v1/namespaces/{NS}/serviceaccounts/default/token"),
    ("POST", f"/apis/apps/v1/namespaces/{NS}/deployments/d/scale"),  # scale: get, update, patch
    ("DELETE", "/api/v1/namespaces"),  # the namespace REST has no DeleteCollection
])
def test_no_route_is_the_generic_405(stack: Stack, pod: None, method: str, path: str) -> None:
    status, body = rest(stack, method, path, {} if method in ("PUT", "PATCH", "POST") else None,
                        content_type="application/merge-patch+json" if method == "PATCH" else "application/json")
    assert (status, json.loads(body)) == (405, NO_ROUTE)


def test_a_review_item_path_has_no_route_at_all(stack: Stack) -> None:
    status, body = rest(stack, "GET", "/apis/authentication.k8s.io/v1/tokenreviews/x")
    assert status == 404
    assert json.loads(body)["message"] == "the server could not find the requested resource"
