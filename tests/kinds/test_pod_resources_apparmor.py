"""Pod-level resources (PodLevelResources: SetDefaults_Pod's defaultHugePagePodLimits, defaultPodRequests,
defaultPodLimits; validatePodResources) and AppArmor validation (ValidateAppArmorProfileField,
ValidateAppArmorPodAnnotations, validateAppArmorAnnotationsAndFieldsMatchOnCreate)."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.kinds import podspec, strategy_for

POD = strategy_for("", "Pod")
APPARMOR = "container.apparmor.security.beta.kubernetes.io/"


def _pod(resources: Any = None, *containers: dict[str, Any], init: list[dict[str, Any]] | None = None,
         annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": f"c{i}", "image": "nginx", **c} for i, c in enumerate(containers)]
                            or [{"name": "c0", "image": "nginx"}], **spec}
    if resources is not None:
        body["resources"] = resources
    if init:
        body["initContainers"] = [{"name": f"i{i}", "image": "nginx", **c} for i, c in enumerate(init)]
    return {"metadata": {"name": "p", "annotations": annotations or {}}, "spec": body}


def _res(requests: dict[str, str] | None = None, limits: dict[str, str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if requests is not None:
        out["requests"] = requests
    if limits is not None:
        out["limits"] = limits
    return {"resources": out}


def _defaulted(pod: dict[str, Any]) -> dict[str, Any]:
    POD.default(pod)
    return pod["spec"].get("resources")


def _causes(obj: dict[str, Any], strategy: Any = POD) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in strategy.validate(obj)]


# ------------------------------------------------------------ defaults


def test_pod_requests_default_from_the_containers_then_the_pod_limits() -> None:
    """defaultPodRequests: pod limits set; a cpu/memory the containers request requests their sum (in the
    first container's format), the rest the pod limit; resources the pod does not support are not copied."""
    pod = _pod({"limits": {"cpu": "2", "memory": "1Gi", "hugepages-2Mi": "4Mi"}},
               _res({"cpu": "500m", "ephemeral-storage": "1Gi"}), _res({"cpu": "700m", "memory": "100Mi"}))
    assert _defaulted(pod) == {"limits": {"cpu": "2", "memory": "1Gi", "hugepages-2Mi": "4Mi"},
                               "requests": {"cpu": "1200m", "memory": "100Mi", "hugepages-2Mi": "4Mi"}}
    # no container requests: the requests are the limits; a request already set stays
    pod = _pod({"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1"}})
    assert _defaulted(pod) == {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}}
    # decimal memory sums print with kube's largest whole suffix
    pod = _pod({"limits": {"memory": "4G"}}, _res({"memory": "500M"}), _res({"memory": "500M"}))
    assert _defaulted(pod)["requests"] == {"memory": "1G"}


def test_pod_limits_default_only_when_every_container_limits_the_resource() -> None:
    """defaultPodLimits: no pod limits, some pod requests: a cpu/memory every container (and init container)
    limits is limited to their sum; memory that one container leaves unlimited is not."""
    pod = _pod({"requests": {"cpu": "2", "memory": "2Gi"}}, _res(limits={"cpu": "500m", "memory": "1Gi"}),
               _res(limits={"cpu": "700m"}))
    assert _defaulted(pod) == {"requests": {"cpu": "2", "memory": "2Gi"}, "limits": {"cpu": "1200m"}}
    pod = _pod({"requests": {"cpu": "2"}}, _res(limits={"cpu": "1"}), init=[_res(requests={"cpu": "1"})])
    assert "limits" not in _defaulted(pod)  # the init container has no cpu limit


def test_pod_level_defaults_follow_the_sidecar_formula() -> None:
    """AggregateContainerRequests: sidecars (restartPolicy Always init containers) add up with the containers;
    a plain init container counts with the sidecars started before it; the maximum wins."""
    pod = _pod({"limits": {"cpu": "8"}}, _res({"cpu": "1"}),
               init=[{"restartPolicy": "Always", **_res({"cpu": "500m"})}, _res({"cpu": "3"})])
    assert _defaulted(pod)["requests"] == {"cpu": "3500m"}  # max(1 + 0.5, 3 + 0.5)
    assert podspec.aggregate_container_resources(pod["spec"], "requests")["cpu"][1] == "3500m"


def test_hugepage_pod_limits_default_from_the_containers() -> None:
    """defaultHugePagePodLimits: a hugepages limit of the containers becomes the pod's unless the pod requests
    it; then defaultPodRequests requests the limit."""
    pod = _pod({"limits": {"memory": "1Gi"}}, _res(limits={"hugepages-2Mi": "4Mi", "memory": "100Mi"}))
    assert _defaulted(pod) == {"limits": {"memory": "1Gi", "hugepages-2Mi": "4Mi"},
                               "requests": {"memory": "100Mi", "hugepages-2Mi": "4Mi"}}
    pod = _pod({"requests": {"hugepages-2Mi": "2Mi"}}, _res(limits={"hugepages-2Mi": "4Mi"}))
    assert "hugepages-2Mi" not in _defaulted(pod).get("limits", {})


@pytest.mark.parametrize("kind", ["Deployment", "PodTemplate"])
def test_pod_level_defaults_are_pod_only(kind: str) -> None:
    """SetDefaults_Pod, not SetDefaults_PodSpec: a template's pod-level resources stay as written."""
    spec = _pod({"limits": {"cpu": "1"}})["spec"]
    obj: dict[str, Any] = ({"spec": {"template": {"spec": spec}}} if kind == "Deployment"
                           else {"template": {"spec": spec}})
    group = "apps" if kind == "Deployment" else ""
    strategy_for(group, kind).default(obj)
    assert spec["resources"] == {"limits": {"cpu": "1"}}
    pod = _pod({"limits": {"cpu": "1"}})
    assert _defaulted(pod) == {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}
    assert _pod(None) and _defaulted(_pod(None)) is None  # no pod-level resources: nothing added


# ------------------------------------------------------------ validatePodResources


def test_pod_level_resource_names_and_quantities() -> None:
    """Only cpu, memory and hugepages- at pod level; claims forbidden; requests <= limits."""
    pod = _pod({"limits": {"cpu": "1", "ephemeral-storage": "1Gi", "gpu": "1"}, "requests": {"cpu": "2"},
                "claims": [{"name": "c"}]})
    assert _causes(pod) == [
        ("spec.resources.claims", "Forbidden: claims cannot be set for Resources at pod-level"),
        ("spec.resources.limits[ephemeral-storage]",
         'Unsupported value: "ephemeral-storage": supported values: "cpu", "hugepages-", "memory"'),
        ("spec.resources.limits[gpu]", 'Invalid value: "gpu": must be a standard resource type or fully qualified'),
        ("spec.resources.requests[cpu]", 'Invalid value: "2": must be less than or equal to cpu limit of 1'),
    ]
    assert _causes(_pod({"limits": {"example.com/dev": "1", "cpu": "1"}})) == [
        ("spec.resources.limits[example.com/dev]",
         'Unsupported value: "example.com/dev": supported values: "cpu", "hugepages-", "memory"')]
    assert _causes(_pod({"limits": {"hugepages-2Mi": "2Mi"}, "requests": {"hugepages-2Mi": "2Mi"}})) == [
        ("spec.resources", "Forbidden: HugePages require cpu or memory")]


def test_pod_level_resources_must_cover_the_containers() -> None:
    """validatePodResourceConsistency: each pod request >= the containers' aggregate request (a resource the pod
    does not request, memory here, is not compared), each regular container's limit <= the pod limit (kube's
    path: containers[i][name].limits)."""
    pod = _pod({"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}, _res({"cpu": "600m", "memory": "1Gi"}),
               _res({"cpu": "600m"}, {"cpu": "3"}))
    assert _causes(pod) == [
        ("spec.resources.requests[cpu]",
         'Invalid value: "1": must be greater than or equal to aggregate container requests of 1200m'),
        ("spec.resources.containers[1][cpu].limits", 'Invalid value: "3": must be less than or equal to pod '
         "limits of 2"),
    ]
    fits = _pod({"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "2"}}, _res({"cpu": "1"}))
    assert _causes(fits) == []
    # templates are validated too (ValidatePodSpec), under their own path
    deployment = {"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
        "metadata": {"labels": {"a": "b"}}, "spec": pod["spec"]}}}
    fields = [f for f, _m in _causes(deployment, strategy_for("apps", "Deployment"))]
    assert "spec.template.spec.resources.requests[cpu]" in fields
    assert "spec.template.spec.resources.containers[1][cpu].limits" in fields


# ------------------------------------------------------------ AppArmor


@pytest.mark.parametrize(("profile", "causes"), [
    ({"type": "RuntimeDefault"}, []),
    ({"type": "Localhost", "localhostProfile": "p"}, []),
    ({"type": "Localhost"}, [("localhostProfile", "Required value: must be set when AppArmor type is Localhost")]),
    ({"type": "Localhost", "localhostProfile": ""},
     [("localhostProfile", "Required value: must be set when AppArmor type is Localhost")]),
    ({"type": "Localhost", "localhostProfile": " p"},
     [("localhostProfile", 'Invalid value: " p": must not be padded with whitespace')]),
    ({"type": "Localhost", "localhostProfile": "x" * 4096},
     [("localhostProfile", "Too long: may not be more than 4095 bytes")]),
    ({"type": "Unconfined", "localhostProfile": "p"},
     [("localhostProfile", 'Invalid value: "p": can only be set when AppArmor type is Localhost')]),
    ({}, [("type", "Required value: type is required when appArmorProfile is set")]),
    ({"type": "Bogus"},
     [("type", 'Unsupported value: "Bogus": supported values: "Localhost", "RuntimeDefault", "Unconfined"')]),
])
def test_apparmor_profile_fields(profile: dict[str, Any], causes: list[tuple[str, str]]) -> None:
    """ValidateAppArmorProfileField on the pod's and each container's securityContext.appArmorProfile."""
    pod = _pod(None, {"securityContext": {"appArmorProfile": profile}}, securityContext={"appArmorProfile": profile})
    expected = [(f"spec.containers[0].securityContext.appArmorProfile.{f}", m) for f, m in causes]
    expected += [(f"spec.securityContext.appArmorProfile.{f}", m) for f, m in causes]
    assert _causes(pod) == expected


def test_apparmor_annotation_values_and_container_names() -> None:
    """ValidateAppArmorPodAnnotations: a known container and a valid profile name (``localhost/<anything>``)."""
    good = {APPARMOR + "c0": "unconfined", APPARMOR + "i0": "localhost/x"}
    assert _causes(_pod(None, init=[{}], annotations=good)) == []
    pod = _pod(None, annotations={APPARMOR + "c0": "bogus", APPARMOR + "gone": "runtime/default"})
    assert _causes(pod) == [
        (f"metadata.annotations[{APPARMOR}c0]", 'Invalid value: "bogus": invalid AppArmor profile name: "bogus"'),
        (f"metadata.annotations[{APPARMOR}gone]", 'Invalid value: "gone": container not found'),
    ]
    template = {"template": {"metadata": {"annotations": {APPARMOR + "c0": "x"}}, "spec": pod["spec"]}}
    assert _causes(template, strategy_for("", "PodTemplate")) == [
        (f"template.metadata.annotations[{APPARMOR}c0]", 'Invalid value: "x": invalid AppArmor profile name: "x"')]


def test_apparmor_fields_must_match_their_annotations_on_create() -> None:
    """validateAppArmorAnnotationsAndFieldsMatchOnCreate: the container's profile (else the Pod's) against its
    annotation; Pods only (a template with both disagreeing is valid)."""
    pod = _pod(None, {"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}}},
               {"securityContext": {"appArmorProfile": {"type": "Localhost", "localhostProfile": "a"}}}, {},
               annotations={APPARMOR + "c0": "unconfined", APPARMOR + "c1": "localhost/b",
                            APPARMOR + "c2": "localhost/a"},
               securityContext={"appArmorProfile": {"type": "Unconfined"}})
    path = "spec.containers[{}].securityContext.appArmorProfile"
    assert _causes(pod) == [
        (f"{path.format(0)}.type", "Forbidden: apparmor type in annotation and field must match"),
        (f"{path.format(1)}.localhostProfile", "Forbidden: apparmor profile in annotation and field must match"),
        (f"{path.format(2)}.type", "Forbidden: apparmor type in annotation and field must match"),
    ]
    windows = {**pod, "spec": {**pod["spec"], "os": {"name": "windows"}}}
    assert not any("must match" in m for _f, m in _causes(windows))
    template = {"template": {"metadata": pod["metadata"], "spec": pod["spec"]}}
    assert _causes(template, strategy_for("", "PodTemplate")) == []
    # after PrepareForCreate copied an annotation into the field, they agree
    skewed = _pod(None, annotations={APPARMOR + "c0": "localhost/p"})
    POD.prepare_for_create(skewed)
    assert _causes(skewed) == []
