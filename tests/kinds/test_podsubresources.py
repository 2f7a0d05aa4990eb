"""pods/ephemeralcontainers (dropNonEphemeralContainerUpdates, ValidatePodEphemeralContainersUpdate) and pods/resize
(dropNonResizeUpdates, ValidatePodResize)."""

from __future__ import annotations

import copy

from kapi.errors import Cause
from kapi.kinds.core import PodStrategy
from kapi.kinds.podsubresources import (
    prepare_ephemeral_containers_update,
    prepare_resize_update,
    validate_ephemeral_containers_update,
    validate_resize_update,
)

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


def sized(cpu: str = "500m", memory: str = "128Mi", **container: object) -> dict:
    return {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu, "memory": memory},
                                                          "limits": {"cpu": "1", "memory": "256Mi"}}, **container}


def resize_pod(*containers: dict, **spec: object) -> dict:
    return {"metadata": {"name": "web", "labels": {"app": "web"}, "resourceVersion": "5"},
            "spec": {"containers": list(containers) or [sized()], **spec},
            "status": {"phase": "Running", "qosClass": "Burstable"}}


def resize(new: dict, old: dict) -> list[Cause]:
    prepare_resize_update(new, old)
    return validate_resize_update(new, old, [])


def causes(found: list[Cause]) -> list[tuple[str | None, str]]:
    return [(c.field, c.message) for c in found]


def test_resize_takes_only_resources_and_resize_policy() -> None:
    old = resize_pod(sized(), {"name": "side", "image": "x"})
    new = copy.deepcopy(old)
    new["spec"]["containers"][0] = sized(cpu="800m", image="evil", resizePolicy=[
        {"resourceName": "cpu", "restartPolicy": "NotRequired"}])
    new["spec"]["containers"][1]["image"] = "evil"
    new["spec"]["nodeName"] = "elsewhere"
    new["spec"]["resources"] = {"requests": {"cpu": "2"}}  # pod-level: InPlacePodLevelResourcesVerticalScaling off
    new["metadata"]["labels"] = {"app": "changed"}
    new["status"] = {"phase": "Failed"}
    prepare_resize_update(new, old)
    assert new["spec"] == {"containers": [sized(cpu="800m", resizePolicy=[
        {"resourceName": "cpu", "restartPolicy": "NotRequired"}]), {"name": "side", "image": "x"}]}
    assert new["status"] == old["status"] and new["metadata"]["labels"] == {"app": "web"}


def test_resize_keeps_a_request_that_adds_or_renames_containers() -> None:
    old = resize_pod()
    added = resize_pod(sized(), {"name": "two", "image": "x"})
    added["metadata"]["labels"] = {"app": "changed"}
    prepare_resize_update(added, old)
    assert len(added["spec"]["containers"]) == 2 and added["metadata"]["labels"] == {"app": "changed"}
    renamed = resize_pod(sized(name="other"))
    renamed["spec"]["nodeName"] = "n"
    prepare_resize_update(renamed, old)
    assert renamed["spec"] == {"containers": [sized(name="other")]}  # the request's list, the stored rest
    assert causes(validate_resize_update(renamed, old, [])) == [
        ("spec", "Forbidden: only cpu and memory resources are mutable")]


def test_a_cpu_resize_is_valid_and_bumps_the_generation() -> None:
    old = resize_pod()
    assert resize(resize_pod(sized(cpu="800m")), old) == []
    assert PodStrategy().validate_update(resize_pod(sized(cpu="800m")), old, "resize") == []
    assert "resize" in PodStrategy.generation_subresources


def test_resize_refusals_in_kube_order() -> None:
    old = resize_pod()
    new = resize_pod(sized())
    new["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1", "memory": "256Mi"},
                                                 "limits": {"cpu": "1", "memory": "256Mi"}}
    assert causes(resize(new, old)) == [
        ("spec", 'Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing')]
    removed = resize_pod(sized())
    del removed["spec"]["containers"][0]["resources"]["limits"]["memory"]
    assert causes(resize(removed, old)) == [
        ("spec.containers[0].resources.limits", "Forbidden: resource limits cannot be removed")]
    storage = resize_pod(sized())
    storage["spec"]["containers"][0]["resources"]["requests"]["ephemeral-storage"] = "1Gi"
    assert causes(resize(storage, old)) == [("spec", "Forbidden: only cpu and memory resources are mutable")]
    policy = resize_pod(sized(resizePolicy=[{"resourceName": "memory", "restartPolicy": "RestartContainer"}]))
    assert causes(resize(policy, old)) == [("spec", "Forbidden: only cpu and memory resources are mutable")]
    # memory limits may go down since 1.34, whatever the resize policy
    lower = resize_pod(sized())
    lower["spec"]["containers"][0]["resources"]["limits"]["memory"] = "200Mi"
    assert resize(lower, old) == []


def test_init_containers_and_node_support() -> None:
    init = {"name": "init", "image": "x", "resources": {"requests": {"cpu": "100m"}}}
    old = resize_pod(initContainers=[init, {**copy.deepcopy(init), "name": "side", "restartPolicy": "Always"}])
    sidecar = copy.deepcopy(old)
    sidecar["spec"]["initContainers"][1]["resources"]["requests"]["cpu"] = "200m"
    assert resize(sidecar, old) == []
    plain = copy.deepcopy(old)
    plain["spec"]["initContainers"][0]["resources"]["requests"]["cpu"] = "200m"
    assert causes(resize(plain, old)) == [
        ("spec", "Forbidden: resources for non-sidecar init containers are immutable")]
    running = resize_pod()
    running["status"]["containerStatuses"] = [{"name": "c", "state": {"running": {}}}]
    assert causes(resize(resize_pod(sized(cpu="800m")), running)) == [
        ("spec", "Forbidden: Pod running on node without support for resize")]


def test_pods_that_cannot_be_resized_say_so_alone() -> None:
    spec_cause = Cause("FieldValueRequired", "Required value", "spec.containers[0].image")
    pod_level = resize_pod(resources={"limits": {"cpu": "1"}})
    assert causes(validate_resize_update(copy.deepcopy(pod_level), pod_level, [spec_cause])) == [
        ("[]", "Forbidden: pods with pod-level resources cannot be resized")]
    mirror = resize_pod()
    mirror["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "hash"}
    assert causes(validate_resize_update(copy.deepcopy(mirror), mirror, [spec_cause])) == [
        ("[]", "Forbidden: static pods cannot be resized")]
    windows = resize_pod(os={"name": "windows"})
    assert causes(validate_resize_update(copy.deepcopy(windows), windows, [])) == [
        ("[]", "Forbidden: windows pods cannot be resized")]
    assert validate_resize_update(resize_pod(), resize_pod(), [spec_cause]) == [spec_cause]
