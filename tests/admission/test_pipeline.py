"""services.admission.pipeline: plugin order, strategy, validation and fieldValidation in one Admit."""

from __future__ import annotations

import copy
import random
from datetime import UTC, datetime
from typing import Any

import pytest

from kapi import errors, gofmt, jsonutil
from kapi.attributes import Attributes, UserInfo
from services.admission.chain import AdmissionRequest, Chain, MutationInterface, ValidationInterface
from services.admission.pipeline import Admitter

NOW = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
USER = UserInfo("alice")


class AddLabel:
    """A mutator that labels every created object and records what it saw."""

    name = "AddLabel"

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def handles(self, operation: str) -> bool:
        return operation == "CREATE"

    async def admit(self, request: AdmissionRequest) -> None:
        assert request.object is not None
        self.seen.append(dict(request.object.get("metadata") or {}))
        request.object.setdefault("metadata", {}).setdefault("labels", {})["added"] = "yes"
        request.warnings.append("labelled")


class Record:
    """A validator that records the final object and can refuse."""

    name = "Record"

    def __init__(self, refuse: bool = False) -> None:
        self.seen: list[AdmissionRequest] = []
        self.refuse = refuse

    def handles(self, operation: str) -> bool:
        return True

    async def validate(self, request: AdmissionRequest) -> None:
        self.seen.append(request)
        if self.refuse:
            raise errors.forbidden(request.resource.resource, request.name, "no")


def _attrs(verb: str, resource: str = "configmaps", namespace: str = "demo", name: str = "") -> Attributes:
    return Attributes(USER, verb, True, api_version="v1", resource=resource, namespace=namespace, name=name)


def _cm(name: str = "app", **extra: Any) -> bytes:
    return jsonutil.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                           "data": {"k": "v"}, **extra})


@pytest.fixture
def plugins() -> tuple[AddLabel, Record]:
    return AddLabel(), Record()


@pytest.fixture
def admitter(plugins: tuple[AddLabel, Record]) -> Admitter:
    return Admitter(Chain(list(plugins)), now=lambda: NOW, rng=random.Random(3))


def test_chain_sorts_capabilities(plugins: tuple[AddLabel, Record]) -> None:
    chain = Chain(list(plugins))
    assert isinstance(plugins[0], MutationInterface) and not isinstance(plugins[0], ValidationInterface)
    assert chain.mutators == [plugins[0]] and chain.validators == [plugins[1]]
    assert chain.names == ["AddLabel", "Record"]


async def test_create_order(admitter: Admitter, plugins: tuple[AddLabel, Record]) -> None:
    result = await admitter.admit("CREATE", _attrs("create"), "ConfigMap", _cm())
    obj = jsonutil.loads(result.object)
    meta = obj["metadata"]
    assert meta["namespace"] == "demo" and meta["creationTimestamp"] == "2024-01-02T03:04:05Z" and meta["uid"]
    assert meta["labels"] == {"added": "yes"}
    assert "uid" not in plugins[0].seen[0]  # mutators run before the strategy ...
    assert plugins[1].seen[0].object == obj  # ... validators after it, on the final object
    assert result.warnings == ["labelled"]


class DuplicateOwner:
    """A mutator that adds an ownerReference the object already has."""

    name = "DuplicateOwner"

    def handles(self, operation: str) -> bool:
        return True

    async def admit(self, request: AdmissionRequest) -> None:
        assert request.object is not None
        refs = request.object["metadata"].setdefault("ownerReferences", [])
        refs.append(dict(refs[0]))


OWNER = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "u-1"}


def _dup_warning(uids: str, after: bool) -> str:
    when = " after mutating admission happens" if after else ""
    return (f".metadata.ownerReferences contains duplicate entries{when}; API server dedups owner references in "
            f"1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) "
            f"observed: {uids}")


@pytest.mark.parametrize("patch_type", ["", "application/merge-patch+json"])
async def test_duplicate_owner_references_are_dropped_with_a_warning(patch_type: str) -> None:
    """dedupOwnerReferencesAndAddWarning: POST/PUT before and after mutating admission, a PATCH only after;
    an entry that differs in any field (here ``controller``) is no duplicate."""
    admitter = Admitter(Chain([DuplicateOwner()]), now=lambda: NOW, rng=random.Random(3))
    other = {"apiVersion": "v1", "kind": "ConfigMap", "name": "o2", "uid": "u-2"}
    refs = [OWNER, dict(OWNER), other, dict(other), {**OWNER, "controller": False}]
    result = await admitter.admit("CREATE", _attrs("create"), "ConfigMap", _cm(
        metadata={"name": "app", "ownerReferences": refs}), patch_type=patch_type)
    kept = jsonutil.loads(result.object)["metadata"]["ownerReferences"]
    assert kept == [OWNER, other, {**OWNER, "controller": False}]
    if patch_type:  # the body's duplicates and the mutator's copy, all found after mutating admission
        assert result.warnings == [_dup_warning("u-1, u-2, u-1", after=True)]
    else:
        assert result.warnings == [_dup_warning("u-1, u-2", after=False), _dup_warning("u-1", after=True)]


async def test_dry_run_same_result(admitter: Admitter) -> None:
    result = await admitter.admit("CREATE", _attrs("create"), "ConfigMap", _cm(), dry_run=True)
    assert jsonutil.loads(result.object)["metadata"]["labels"] == {"added": "yes"}


async def test_invalid_name_is_422_before_validators(admitter: Admitter, plugins: tuple[AddLabel, Record]) -> None:
    with pytest.raises(errors.StatusError) as exc:
        await admitter.admit("CREATE", _attrs("create"), "ConfigMap", _cm(
            "Bad_Name", metadata={"name": "Bad_Name", "labels": {"bad key!": "x"}}))
    assert exc.value.code == 422 and exc.value.reason == "Invalid"
    assert exc.value.message.startswith('ConfigMap "Bad_Name" is invalid: [metadata.name: Invalid value: "Bad_Name"')
    assert [c["field"] for c in exc.value.details["causes"]] == ["metadata.name", "metadata.labels"]
    assert plugins[1].seen == []


async def test_wrong_json_type_is_400_like_the_decoder(admitter: Admitter) -> None:
    with pytest.raises(errors.StatusError) as exc:
        await admitter.admit("CREATE", _attrs("create"), "ConfigMap", _cm("good", data={"k": 1}))
    assert exc.value.code == 400 and exc.value.reason == "BadRequest"
    assert exc.value.message == ('ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal '
                                 "number into Go struct field ConfigMap.data of type string")


@pytest.mark.parametrize(("directive", "warnings", "code"), [  # unknown fields warn at decoding: before mutation
    ("", ['unknown field "spec"', "labelled"], None),
    ("Warn", ['unknown field "spec"', "labelled"], None),
    ("Ignore", ["labelled"], None),
    ("Strict", None, 400),
])
async def test_field_validation(admitter: Admitter, directive: str, warnings: list[str] | None,
                                code: int | None) -> None:
    body = _cm(spec={"x": 1})
    if code is None:
        result = await admitter.admit("CREATE", _attrs("create"), "ConfigMap", body, field_validation=directive)
        assert result.warnings == warnings
        assert "spec" not in jsonutil.loads(result.object)  # dropped in every mode
    else:
        with pytest.raises(errors.StatusError) as exc:
            await admitter.admit("CREATE", _attrs("create"), "ConfigMap", body, field_validation=directive)
        assert (exc.value.code, exc.value.message) == (code, 'ConfigMap in version "v1" cannot be handled as a '
                                                       'ConfigMap: strict decoding error: unknown field "spec"')


async def test_strict_patch_has_no_decode_prefix(admitter: Admitter) -> None:
    created = jsonutil.loads((await admitter.admit("CREATE", _attrs("create"), "ConfigMap", _cm())).object)
    with pytest.raises(errors.StatusError) as exc:
        await admitter.admit("UPDATE", _attrs("patch", name="app"), "ConfigMap", _cm(spec={"x": 1}),
                             jsonutil.dumps(created), field_validation="Strict")
    assert exc.value.message == 'strict decoding error: unknown field "spec"'


async def test_update_keeps_system_fields(admitter: Admitter) -> None:
    created = await admitter.admit("CREATE", _attrs("create"), "ConfigMap", _cm())
    old = jsonutil.loads(created.object)
    old["metadata"]["resourceVersion"] = "7"
    new = {"metadata": {"name": "app", "namespace": "demo"}, "data": {"k": "w"}}
    result = await admitter.admit("UPDATE", _attrs("update", name="app"), "ConfigMap", jsonutil.dumps(new),
                                  jsonutil.dumps(old))
    obj = jsonutil.loads(result.object)
    assert obj["metadata"]["uid"] == old["metadata"]["uid"]
    assert obj["metadata"]["creationTimestamp"] == old["metadata"]["creationTimestamp"]
    assert obj["data"] == {"k": "w"} and obj["kind"] == "ConfigMap"
    new["metadata"]["uid"] = "other"
    with pytest.raises(errors.StatusError) as exc:
        await admitter.admit("UPDATE", _attrs("update", name="app"), "ConfigMap", jsonutil.dumps(new),
                             jsonutil.dumps(old))
    assert exc.value.message == 'ConfigMap "app" is invalid: metadata.uid: Invalid value: "other": field is immutable'


async def test_delete_runs_validators_only(admitter: Admitter, plugins: tuple[AddLabel, Record]) -> None:
    result = await admitter.admit("DELETE", _attrs("delete", name="app"), "ConfigMap", b"", _cm())
    assert result.object == b""
    assert plugins[0].seen == [] and plugins[1].seen[0].name == "app"


async def test_validator_refusal(plugins: tuple[AddLabel, Record]) -> None:
    admitter = Admitter(Chain([plugins[0], Record(refuse=True)]), now=lambda: NOW)
    with pytest.raises(errors.StatusError) as exc:
        await admitter.admit("CREATE", _attrs("create"), "ConfigMap", _cm())
    assert exc.value.code == 403 and exc.value.message == 'configmaps "app" is forbidden: no'


@pytest.mark.parametrize(("operation", "body", "old", "message"), [
    ("PATCH", _cm(), b"", "unknown admission operation 'PATCH'"),
    ("CREATE", b"{not json", b"", None),
    ("CREATE", b"[1]", b"", "the object must be a JSON object"),
    ("UPDATE", _cm(), b"", "an UPDATE needs the stored object (old_object)"),
])
async def test_bad_requests(admitter: Admitter, operation: str, body: bytes, old: bytes, message: str | None) -> None:
    with pytest.raises(errors.StatusError) as exc:
        await admitter.admit(operation, _attrs("create"), "ConfigMap", body, old)
    assert exc.value.code == 400
    if message:
        assert exc.value.message == message


async def test_subresource_of_another_kind_skips_strategy(admitter: Admitter) -> None:
    attrs = Attributes(USER, "create", True, api_version="v1", resource="pods", subresource="eviction",
                       namespace="demo", name="web")
    result = await admitter.admit("CREATE", attrs, "Eviction", jsonutil.dumps({"metadata": {"name": "web"}}))
    assert jsonutil.loads(result.object)["metadata"] == {"name": "web", "labels": {"added": "yes"}}


def _cronjob(name: str, schedule: str, **spec: Any) -> dict[str, Any]:
    template = {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}}
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": name, "namespace": "demo", "uid": "u1", "resourceVersion": "7",
                         "creationTimestamp": "2024-01-01T00:00:00Z"},
            "spec": {"schedule": schedule, "jobTemplate": template, **spec}}


async def test_cronjob_create_only_rules_are_skipped_on_update(admitter: Admitter) -> None:
    """ValidateCronJobUpdate skips the 52-character name limit and lets a stored TZ schedule stay (kube lets
    CronJobs from before those rules be updated), but not with timeZone; a create gets both rules."""
    def attrs(verb: str, name: str) -> Attributes:
        return Attributes(USER, verb, True, api_group="batch", api_version="v1", resource="cronjobs",
                          namespace="demo", name=name)

    long_name = "c" * 60
    old = _cronjob(long_name, "TZ=UTC 0 * * * *")
    new = _cronjob(long_name, "TZ=UTC 5 * * * *")
    result = await admitter.admit("UPDATE", attrs("update", long_name), "CronJob", jsonutil.dumps(new),
                                  jsonutil.dumps(old))
    assert jsonutil.loads(result.object)["spec"]["schedule"] == "TZ=UTC 5 * * * *"
    with pytest.raises(errors.StatusError) as exc:
        await admitter.admit("UPDATE", attrs("update", long_name), "CronJob",
                             jsonutil.dumps(_cronjob(long_name, "TZ=UTC 5 * * * *", timeZone="UTC")),
                             jsonutil.dumps(old))
    assert exc.value.message == (f'CronJob.batch "{long_name}" is invalid: spec.schedule: Invalid value: '
                                 '"TZ=UTC 5 * * * *": cannot use both timeZone field and TZ or CRON_TZ in schedule')
    with pytest.raises(errors.StatusError) as exc:  # a stored schedule without TZ: no TZ added on update
        await admitter.admit("UPDATE", attrs("update", long_name), "CronJob", jsonutil.dumps(new),
                             jsonutil.dumps(_cronjob(long_name, "0 * * * *")))
    assert exc.value.message == (f'CronJob.batch "{long_name}" is invalid: spec.schedule: Invalid value: '
                                 '"TZ=UTC 5 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead')
    created = _cronjob(long_name, "TZ=UTC 0 * * * *")
    for key in ("uid", "resourceVersion", "creationTimestamp"):
        del created["metadata"][key]
    with pytest.raises(errors.StatusError) as exc:
        await admitter.admit("CREATE", attrs("create", ""), "CronJob", jsonutil.dumps(created))
    assert exc.value.message == (
        f'CronJob.batch "{long_name}" is invalid: [spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or '
        f'CRON_TZ in schedule, use timeZone field instead, metadata.name: Invalid value: "{long_name}": must be no '
        'more than 52 characters]')


class WarnAndRefuse:
    """A validator that warns, then refuses (a webhook answering ``allowed: false`` with ``warnings``)."""

    name = "WarnAndRefuse"

    def handles(self, operation: str) -> bool:
        return True

    async def validate(self, request: AdmissionRequest) -> None:
        request.warnings.append("about to refuse")
        raise errors.forbidden(request.resource.resource, request.name, "no")


class RefuseInMutation:
    """A mutator that refuses (a mutating webhook answering ``allowed: false``)."""

    name = "RefuseInMutation"

    def handles(self, operation: str) -> bool:
        return True

    async def admit(self, request: AdmissionRequest) -> None:
        raise errors.forbidden(request.resource.resource, request.name, "no")


async def test_a_mutating_refusal_carries_the_decoders_warnings() -> None:
    admitter = Admitter(Chain([RefuseInMutation()]), now=lambda: NOW)
    with pytest.raises(errors.StatusError) as exc:
        await admitter.admit("CREATE", _attrs("create"), "ConfigMap", _cm(spec={"x": 1}))
    assert exc.value.code == 403 and exc.value.warnings == ['unknown field "spec"']
    with pytest.raises(errors.StatusError) as exc:  # Strict: the decoder's 400 comes before any plugin
        await admitter.admit("CREATE", _attrs("create"), "ConfigMap", _cm(spec={"x": 1}), field_validation="Strict")
    assert exc.value.code == 400 and exc.value.message == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "spec"')


async def test_a_refusal_carries_the_warnings_gathered_before_it() -> None:
    # kube's recorder keeps every warning added before the refusal: the mutators', WarningsOnCreate's (validation
    # passed) and the refusing validator's own, and sends them with the 403.
    admitter = Admitter(Chain([AddLabel(), WarnAndRefuse()]), now=lambda: NOW, rng=random.Random(3))
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "my.pod"},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    with pytest.raises(errors.StatusError) as exc:
        await admitter.admit("CREATE", _attrs("create", "pods"), "Pod", jsonutil.dumps(pod))
    assert exc.value.code == 403
    assert exc.value.warnings == [
        "labelled", "metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; "
        "a DNS label is recommended: [must not contain dots]", "about to refuse"]
    assert "warnings" not in exc.value.status()  # beside the Status, never in it


async def test_an_invalid_create_carries_prepare_for_create_warnings_but_not_warnings_on_create(
        admitter: Admitter, plugins: tuple[AddLabel, Record]) -> None:
    # rest.BeforeCreate: PrepareForCreate (the AppArmor annotation's deprecation warning) runs before Validate, and
    # WarningsOnCreate (the name's) only once validation passed; unknown fields warn at decoding, first of all.
    annotation = "container.apparmor.security.beta.kubernetes.io/c"
    pod = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"name": "c"}]}, "extra": 1,
           "metadata": {"name": "my.pod", "annotations": {annotation: "runtime/default"}}}
    with pytest.raises(errors.StatusError) as exc:
        await admitter.admit("CREATE", _attrs("create", "pods"), "Pod", jsonutil.dumps(pod))
    assert exc.value.code == 422 and exc.value.message == (
        'Pod "my.pod" is invalid: spec.containers[0].image: Required value')
    assert exc.value.warnings == [
        'unknown field "extra"', "labelled",
        f'metadata.annotations[{annotation}]: deprecated since v1.30; use the "appArmorProfile" field instead']
    assert plugins[1].seen == []


async def test_pod_and_claim_updates_validate_the_new_object_before_the_update_rules(admitter: Admitter) -> None:
    """ValidatePodUpdate runs validatePodMetadataAndSpec before the spec immutability rule, and the PVC strategy's
    ValidateUpdate ValidatePersistentVolumeClaim before ValidatePersistentVolumeClaimUpdate: the new object's
    causes come first."""
    def attrs(resource: str, name: str) -> Attributes:
        return Attributes(USER, "update", True, api_version="v1", resource=resource, namespace="demo", name=name)

    meta = {"namespace": "demo", "uid": "u1", "resourceVersion": "7", "creationTimestamp": "2024-01-01T00:00:00Z"}
    old_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", **meta},
               "spec": {"restartPolicy": "Always", "containers": [{"name": "c", "image": "x"}]}}
    new_pod = copy.deepcopy(old_pod)
    new_pod["spec"]["restartPolicy"] = "Sometimes"
    with pytest.raises(errors.StatusError) as exc:
        await admitter.admit("UPDATE", attrs("pods", "p"), "Pod", jsonutil.dumps(new_pod), jsonutil.dumps(old_pod))
    fields = [c["field"] for c in exc.value.details["causes"]]
    assert fields == ["spec.restartPolicy", "spec"], exc.value.message
    old_claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c", **meta},
                 "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                          "storageClassName": "a", "volumeMode": "Filesystem"}}
    new_claim = copy.deepcopy(old_claim)
    new_claim["spec"]["storageClassName"] = "b"
    new_claim["spec"]["accessModes"] = ["Sometimes"]
    with pytest.raises(errors.StatusError) as exc:
        await admitter.admit("UPDATE", attrs("persistentvolumeclaims", "c"), "PersistentVolumeClaim",
                             jsonutil.dumps(new_claim), jsonutil.dumps(old_claim))
    fields = [c["field"] for c in exc.value.details["causes"]]
    assert fields == ["spec.accessModes", "spec"], exc.value.message


@pytest.mark.parametrize(("patch_type", "patch_value", "shown"), [
    ("application/merge-patch+json", "", None),  # the patched object's JSON
    ("application/json-patch+json", "", None),
    ("application/strategic-merge-patch+json", "map[spec:map[x:1]]", "map[spec:map[x:1]]"),
])
async def test_a_patched_object_that_does_not_decode_is_the_patchers_422(
        admitter: Admitter, patch_type: str, patch_value: str, shown: str | None) -> None:
    """apiserver handlers/patch.go: the JSON and merge patchers show the patched object's JSON, the strategic merge
    patcher the patch map; unknown fields under Strict and wrong types alike (server-side apply is not one)."""
    created = jsonutil.loads((await admitter.admit("CREATE", _attrs("create"), "ConfigMap", _cm())).object)
    body = _cm(spec={"x": 1})
    with pytest.raises(errors.StatusError) as exc:
        await admitter.admit("UPDATE", _attrs("patch", name="app"), "ConfigMap", body, jsonutil.dumps(created),
                             field_validation="Strict", patch_type=patch_type, patch_value=patch_value)
    value = shown if shown is not None else body.decode()
    detail = 'strict decoding error: unknown field "spec"'
    assert (exc.value.code, exc.value.reason) == (422, "Invalid")
    assert exc.value.message == f' "" is invalid: patch: Invalid value: {gofmt.go_quote(value)}: {detail}'
    assert exc.value.details["causes"] == [{"reason": "FieldValueInvalid", "field": "patch",
                                            "message": f"Invalid value: {gofmt.go_quote(value)}: {detail}"}]
    wrong = _cm(data={"a": True})
    with pytest.raises(errors.StatusError) as exc:
        await admitter.admit("UPDATE", _attrs("patch", name="app"), "ConfigMap", wrong, jsonutil.dumps(created),
                             patch_type=patch_type, patch_value=patch_value)
    value = shown if shown is not None else wrong.decode()
    assert exc.value.message == (f' "" is invalid: patch: Invalid value: {gofmt.go_quote(value)}: json: cannot '
                                 "unmarshal bool into Go struct field ConfigMap.data of type string")
    with pytest.raises(errors.StatusError) as exc:  # server-side apply keeps its own error
        await admitter.admit("UPDATE", _attrs("patch", name="app"), "ConfigMap", body, jsonutil.dumps(created),
                             field_validation="Strict", patch_type="application/apply-patch+yaml")
    assert (exc.value.code, exc.value.message) == (400, 'strict decoding error: unknown field "spec"')
