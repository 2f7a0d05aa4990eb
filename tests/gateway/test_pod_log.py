"""``GET pods/<name>/log`` without kubelets (services/gateway/reviews/pods.py), as kube-apiserver 1.37's LogREST.Get
and LogLocation answer what they know before dialing one."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from multidict import MultiDict

from kapi import errors
from services.gateway.reviews import pods


def pod(name: str = "web", node: str = "", containers: tuple[str, ...] = ("app",), init: tuple[str, ...] = (),
        ephemeral: tuple[str, ...] = ()) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": c} for c in containers]}
    if init:
        spec["initContainers"] = [{"name": c} for c in init]
    if ephemeral:
        spec["ephemeralContainers"] = [{"name": c} for c in ephemeral]
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name}, "spec": spec}


def scope(obj: dict[str, Any] | None, query: dict[str, str] | None = None) -> Any:
    async def get(request: Any, timeout: float, metadata: Any = None) -> Any:
        if obj is None:
            raise errors.not_found("pods", "web")
        return SimpleNamespace(object=json.dumps(obj).encode())

    q: MultiDict[str] = MultiDict(query or {})
    return SimpleNamespace(info=SimpleNamespace(verb="get", name="web", namespace="ns"), query=q,
                           param=lambda key, default="": q.get(key, default), key=lambda: None,
                           backends=SimpleNamespace(storage=SimpleNamespace(Get=get)), timeout=5.0)


async def refused(obj: dict[str, Any] | None, query: dict[str, str] | None = None) -> errors.StatusError:
    with pytest.raises(errors.StatusError) as info:
        await pods.log(scope(obj, query))
    return info.value


async def test_an_unscheduled_pod_is_204_no_content() -> None:
    reply = await pods.log(scope(pod()))
    assert reply.status == 204 and reply.body is None


async def test_a_scheduled_pod_is_still_503() -> None:
    err = await refused(pod(node="node-1"))
    assert err.code == 503


@pytest.mark.parametrize(("obj", "container", "message"), [
    (pod(containers=("a", "b")), "", "a container name must be specified for pod web, choose one of: [a b]"),
    (pod(containers=("a", "b"), init=("i",), ephemeral=("e",)), "",
     "a container name must be specified for pod web, choose one of: [i a b e]"),
    (pod(containers=()), "", "a container name must be specified for pod web"),
    (pod(), "nope", "container nope is not valid for pod web"),
])
async def test_container_checks_are_400(obj: dict[str, Any], container: str, message: str) -> None:
    err = await refused(obj, {"container": container} if container else None)
    assert (err.code, err.reason, err.message) == (400, "BadRequest", message)


@pytest.mark.parametrize("container", ["i", "e"])
async def test_init_and_ephemeral_containers_are_valid(container: str) -> None:
    reply = await pods.log(scope(pod(init=("i",), ephemeral=("e",)), {"container": container}))
    assert reply.status == 204


@pytest.mark.parametrize(("query", "message"), [
    ({"tailLines": "-1"}, "tailLines: Invalid value: -1: must be greater than or equal to 0"),
    ({"limitBytes": "0"}, "limitBytes: Invalid value: 0: must be greater than 0"),
    ({"sinceSeconds": "0"}, "sinceSeconds: Invalid value: 0: must be greater than 0"),
    ({"tailLines": "-1", "limitBytes": "-5"}, "[tailLines: Invalid value: -1: must be greater than or equal to 0, "
                                              "limitBytes: Invalid value: -5: must be greater than 0]"),
])
async def test_bad_options_are_422_before_the_pod_is_read(query: dict[str, str], message: str) -> None:
    err = await refused(None, query)  # no such pod: the options are checked first
    assert (err.code, err.reason) == (422, "Invalid")
    assert err.message == f'PodLogOptions "web" is invalid: {message}'
    assert err.details["kind"] == "PodLogOptions" and err.details["name"] == "web"


async def test_since_seconds_and_since_time_together_is_a_root_forbidden_cause() -> None:
    err = await refused(pod(), {"sinceSeconds": "10", "sinceTime": "2026-01-01T00:00:00Z"})
    assert err.message == ('PodLogOptions "web" is invalid: : Forbidden: at most one of `sinceTime` or '
                           "`sinceSeconds` may be specified")
    assert err.details["causes"] == [{"reason": "FieldValueForbidden", "message": "Forbidden: at most one of "
                                      "`sinceTime` or `sinceSeconds` may be specified"}]


@pytest.mark.parametrize(("value", "message"), [
    ("abc", 'strconv.ParseInt: parsing "abc": invalid syntax'),
    ("", 'strconv.ParseInt: parsing "": invalid syntax'),
])
async def test_a_non_integer_option_is_400(value: str, message: str) -> None:
    err = await refused(pod(), {"tailLines": value})
    assert (err.code, err.message) == (400, message)


async def test_a_missing_pod_is_404() -> None:
    assert (await refused(None)).code == 404
