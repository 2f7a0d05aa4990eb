"""pods/ephemeralcontainers: dropNonEphemeralContainerUpdates and ValidatePodEphemeralContainersUpdate."""

from __future__ import annotations

import copy

from kapi.kinds.podsubresources import prepare_ephemeral_containers_update, validate_ephemeral_containers_update

DEBUG = {"name": "debugger", "image": "busybox", "terminationMessagePolicy": "File"}


def pod(**spec: object) -> dict:
    return {"metadata": {"name": "web", "labels": {"app": "web"}, "resourceVersion": "5"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}, "status": {"phase": "Running"}}


def test_only_the_ephemeral_containers_of_the_request_count() -> None:
    old = pod()
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["image"] = "evil"
    new["spec"]["ephemeralContainers"] = [DEBUG]
    new["metadata"]["labels"] = {"app": "changed"}
    new["metadata"]["resourceVersion"] = "5"
    new["status"] = {"phase": "Failed"}
    prepare_ephemeral_containers_update(new, old)
    assert new["spec"] == {"containers": [{"name": "c", "image": "nginx"}], "ephemeralContainers": [DEBUG]}
    assert new["status"] == {"phase": "Running"} and new["metadata"]["labels"] == {"app": "web"}
    assert new["metadata"]["resourceVersion"] == "5"


def test_existing_ephemeral_containers_may_only_stay() -> None:
    old = pod(ephemeralContainers=[DEBUG])
    assert validate_ephemeral_containers_update(pod(ephemeralContainers=[DEBUG, {**DEBUG, "name": "two"}]), old) == []
    (removed,) = validate_ephemeral_containers_update(pod(), old)
    assert (removed.field, removed.message) == (
        "spec.ephemeralContainers", 'Forbidden: existing ephemeral containers "debugger" may not be removed\n')
    (changed,) = validate_ephemeral_containers_update(pod(ephemeralContainers=[{**DEBUG, "image": "alpine"}]), old)
    assert changed.message.startswith('Forbidden: existing ephemeral containers "debugger" may not be changed\n')
    assert '- image: "busybox"' in changed.message and '+ image: "alpine"' in changed.message


def test_static_pods_take_none() -> None:
    old = pod()
    old["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "hash"}
    (cause,) = validate_ephemeral_containers_update(pod(ephemeralContainers=[DEBUG]), old)
    assert (cause.field, cause.message) == ("[]", "Forbidden: static pods do not support ephemeral containers")
