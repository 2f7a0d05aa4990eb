"""Content negotiation and Table rendering."""

import pytest

from kapi import errors
from kapi.resources import REGISTRY
from services.gateway import columns, negotiation, table

KUBECTL_GET = ("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
               "application/json")


def test_table_negotiated_for_kubectl():
    out = negotiation.negotiate(KUBECTL_GET)
    assert out.table and out.mime == negotiation.JSON


@pytest.mark.parametrize("accept,mime", [("", "application/json"), ("*/*", "application/json"),
                                         ("application/yaml", "application/yaml")])
def test_plain(accept, mime):
    out = negotiation.negotiate(accept)
    assert out.mime == mime and not out.table


@pytest.mark.parametrize("accept", ["text/html", "application/vnd.kubernetes.protobuf",
                                    "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io"])
def test_not_acceptable_lists_only_what_kapi_produces(accept):
    with pytest.raises(errors.StatusError) as info:
        negotiation.negotiate(accept)
    assert info.value.code == 406
    assert info.value.message == "only the following media types are accepted: application/json, application/yaml"


def test_decode_errors():
    with pytest.raises(errors.StatusError) as info:
        negotiation.decode_body(b"{not json", "application/json")
    assert info.value.code == 400
    assert info.value.message == ("couldn't get version/kind; json parse error: invalid character 'n' looking for "
                                  "beginning of object key string")
    with pytest.raises(errors.StatusError) as info:
        negotiation.decode_body(b'{"metadata":', "application/merge-patch+json")
    assert info.value.message == "error decoding patch: unexpected end of JSON input"
    with pytest.raises(errors.StatusError) as info:
        negotiation.decode_body(b"x", "text/plain")
    assert info.value.code == 415
    assert negotiation.decode_body(b"a: 1\n", "application/yaml") == {"a": 1}
    with pytest.raises(errors.StatusError) as info:
        negotiation.decode_body(b"a: 1\nb: c: d\n", "application/yaml")
    assert info.value.message == ("error converting YAML to JSON: yaml: line 2: mapping values are not allowed in "
                                  "this context")


@pytest.mark.parametrize("seconds,text", [(5, "5s"), (119, "119s"), (200, "3m20s"), (600, "10m"),
                                          (3 * 3600 + 120, "3h2m"), (30 * 3600, "30h"), (3 * 86400, "3d"),
                                          (400 * 86400, "400d"), (-5, "<invalid>")])
def test_human_duration(seconds, text):
    assert columns.human_duration(seconds) == text


def test_configmap_table_row():
    cm = REGISTRY.get("", "v1", "configmaps")
    out = table.table(cm, [{"metadata": {"name": "app"}, "data": {"k": "v", "x": "y"}}], {"resourceVersion": "5"},
                      "Metadata")
    assert [c["name"] for c in out["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert out["rows"][0]["cells"][:2] == ["app", 2]
    assert out["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_pod_printer_columns_and_wide_priority():
    pods = REGISTRY.get("", "v1", "pods")
    pod = {"metadata": {"name": "web"}, "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n1"},
           "status": {"phase": "Running", "podIP": "10.0.0.5",
                      "containerStatuses": [{"ready": True, "restartCount": 2}, {"ready": False, "restartCount": 1}]}}
    out = table.table(pods, [pod], {}, "None")
    names = [(c["name"], c["priority"]) for c in out["columnDefinitions"]]
    # kube's order: Age after the priority-0 columns, before the -o wide ones.
    assert names[:6] == [("Name", 0), ("Ready", 0), ("Status", 0), ("Restarts", 0), ("Age", 0), ("IP", 1)]
    cells = out["rows"][0]["cells"]
    assert cells[:4] + cells[5:7] == ["web", "1/2", "Running", "3", "10.0.0.5", "n1"]
    assert cells[4] == "<unknown>"
    assert "object" not in out["rows"][0]


def test_default_table_is_name_and_created_at():
    roles = REGISTRY.get("rbac.authorization.k8s.io", "v1", "roles")
    out = table.table(roles, [{"metadata": {"name": "r", "creationTimestamp": "2026-01-01T00:00:00Z"}}], {}, "None")
    assert [c["name"] for c in out["columnDefinitions"]] == ["Name", "Created At"]
    assert out["rows"][0]["cells"] == ["r", "2026-01-01T00:00:00Z"]


def test_deployment_ready_column():
    deploy = REGISTRY.get("apps", "v1", "deployments")
    obj = {"metadata": {"name": "d"}, "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "d"}},
                                              "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
           "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}}
    cells = table.table(deploy, [obj], {}, "None")["rows"][0]["cells"]
    assert cells[:4] + cells[5:8] == ["d", "2/3", 3, 2, "c", "i", "app=d"]


def test_node_age_before_version():
    nodes = REGISTRY.get("", "v1", "nodes")
    names = [c["name"] for c in table.table(nodes, [], {}, "None")["columnDefinitions"]]
    assert names[:5] == ["Name", "Status", "Roles", "Age", "Version"]


def test_flowschema_and_priority_level_columns():
    fs = REGISTRY.get("flowcontrol.apiserver.k8s.io", "v1", "flowschemas")
    obj = {"metadata": {"name": "probes"}, "spec": {"priorityLevelConfiguration": {"name": "exempt"},
                                                     "matchingPrecedence": 2, "distinguisherMethod": None},
           "status": {"conditions": [{"type": "Dangling", "status": "False"}]}}
    out = table.table(fs, [obj], {}, "None")
    assert [c["name"] for c in out["columnDefinitions"]] == [
        "Name", "PriorityLevel", "MatchingPrecedence", "DistinguisherMethod", "Age", "MissingPL"]
    cells = out["rows"][0]["cells"]
    assert cells[:4] == ["probes", "exempt", 2, "<none>"] and cells[-1] == "False"
    plc = REGISTRY.get("flowcontrol.apiserver.k8s.io", "v1", "prioritylevelconfigurations")
    level = {"metadata": {"name": "global-default"}, "spec": {"type": "Limited", "limited": {
        "nominalConcurrencyShares": 20, "limitResponse": {"type": "Queue", "queuing": {
            "queues": 128, "handSize": 6, "queueLengthLimit": 50}}}}}
    assert table.table(plc, [level], {}, "None")["rows"][0]["cells"][:6] == [
        "global-default", "Limited", 20, 128, 6, 50]


def test_discovery_names_subresource_kinds_and_verbs():
    from services.gateway import discovery

    token = discovery.subresource_entries(REGISTRY.get("", "v1", "serviceaccounts"))[0]
    assert (token["name"], token["kind"], token["verbs"], token["group"]) == (
        "serviceaccounts/token", "TokenRequest", ["create"], "authentication.k8s.io")
    scale = [e for e in discovery.subresource_entries(REGISTRY.get("apps", "v1", "deployments"))
             if e["name"] == "deployments/scale"][0]
    assert (scale["kind"], scale["group"], scale["verbs"]) == ("Scale", "autoscaling", ["get", "patch", "update"])
    status = [e for e in discovery.subresource_entries(REGISTRY.get("", "v1", "pods")) if e["name"] == "pods/status"]
    assert status[0]["kind"] == "Pod" and "group" not in status[0]


@pytest.mark.parametrize("body,paths", [
    (b'{"data": {"a": "1", "a": "2"}}', ["data.a"]),
    (b'{"a": 1, "b": [{"x": 1, "x": 2}], "a": 3}', ["b[0].x", "a"]),
    (b'{"a": 1}', []),
    (b"not json", []),
])
def test_duplicate_fields(body, paths):
    assert negotiation.duplicate_fields(body, "application/json") == paths


def test_duplicate_fields_only_for_json():
    assert negotiation.duplicate_fields(b"a: 1\na: 2\n", "application/yaml") == []


def test_openapi_type_meta_has_no_enum():
    import json

    from services.gateway import openapi

    pod = json.loads(openapi.group_version_document("", "v1"))["components"]["schemas"]["io.k8s.api.core.v1.Pod"]
    assert "enum" not in pod["properties"]["apiVersion"] and "enum" not in pod["properties"]["kind"]


@pytest.mark.parametrize(("body", "content_type", "message"), [
    ("a0: &a0 [x,x,x,x,x,x,x,x,x]\n" + "".join(f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]\n"
                                                 for i in range(1, 10)),
     "application/yaml", "error converting YAML to JSON: yaml: document contains excessive aliasing"),
    ("a: &a [*a]", "application/apply-patch+yaml",
     "error converting YAML to JSON: yaml: anchor 'a' value contains itself"),
    ("[" * 100_000, "application/yaml",
     "error converting YAML to JSON: yaml: line 1: exceeded maximum nesting depth"),
    ("[" * 300 + "]" * 300, "application/json",
     "couldn't get version/kind; json parse error: invalid character '[' exceeded max depth"),
    ('{"a":' * 2000 + "1" + "}" * 2000, "application/merge-patch+json",
     "error decoding patch: invalid character '{' exceeded max depth"),
])
def test_decode_limits_are_bad_requests(body: str, content_type: str, message: str):
    with pytest.raises(errors.StatusError) as info:
        negotiation.decode_body(body.encode(), content_type)
    assert info.value.code == 400 and info.value.message == message


@pytest.mark.parametrize("accept,mime", [
    ("application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf"),
    ("application/vnd.kubernetes.protobuf, application/json", "application/vnd.kubernetes.protobuf"),
    ("application/vnd.kubernetes.protobuf;stream=watch", "application/vnd.kubernetes.protobuf"),
    ("application/json, application/vnd.kubernetes.protobuf", "application/json"),
    ("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, application/json", "application/json"),
])
def test_protobuf_negotiated_for_kinds_with_a_message(accept, mime):
    assert negotiation.negotiate(accept, protobuf=True).mime == mime
    assert negotiation.prefers_protobuf(accept) == (mime == "application/vnd.kubernetes.protobuf")


def test_protobuf_406_names_protobuf_only_when_the_kind_has_it():
    with pytest.raises(errors.StatusError) as info:
        negotiation.negotiate("text/html", protobuf=True)
    assert info.value.message == ("only the following media types are accepted: application/json, application/yaml, "
                                  "application/vnd.kubernetes.protobuf")
    with pytest.raises(errors.StatusError) as info:
        negotiation.negotiate("application/vnd.kubernetes.protobuf, text/html", protobuf=False)
    assert info.value.message == "only the following media types are accepted: application/json, application/yaml"


def test_protobuf_encode_falls_back_to_json_for_kinds_without_a_message():
    out = negotiation.Output(negotiation.PROTOBUF)
    body, ctype = negotiation.encode({"kind": "ConfigMap", "apiVersion": "v1", "data": {"a": "b"}}, out)
    assert ctype == negotiation.PROTOBUF and body.startswith(b"k8s\x00")
    body, ctype = negotiation.encode({"kind": "Scale", "apiVersion": "autoscaling/v1", "spec": {"replicas": 1}}, out)
    assert ctype == negotiation.JSON and body == b'{"kind":"Scale","apiVersion":"autoscaling/v1","spec":{"replicas":1}}'


def test_protobuf_partial_object_metadata_for_every_resource():
    accept = ("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
              "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json")
    for protobuf in (True, False):
        out = negotiation.negotiate(accept, protobuf=protobuf)
        assert (out.mime, out.partial_metadata) == (negotiation.PROTOBUF, True)
    assert not negotiation.prefers_protobuf(accept)  # an error is negotiated without as=: JSON
    body, ctype = negotiation.encode({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                                      "metadata": {"resourceVersion": "5"}, "items": [{"metadata": {"name": "a"}}]},
                                     negotiation.Output(negotiation.PROTOBUF, partial_metadata=True))
    assert ctype == negotiation.PROTOBUF
    from kapi import k8sproto
    assert k8sproto.decode(body)["items"] == [{"metadata": {"name": "a"}}]


@pytest.mark.parametrize("accept", ["application/json;as=Table;v=v1beta1;g=meta.k8s.io",
                                    "application/json;as=PartialObjectMetadataList;v=v1beta1;g=meta.k8s.io",
                                    "application/json;as=PartialObjectMetadata;v=v1beta1;g=meta.k8s.io"])
def test_meta_v1beta1_table_and_partial_metadata_are_served(accept):
    out = negotiation.negotiate(accept)
    assert (out.mime, out.version, out.meta_api_version) == ("application/json", "v1beta1", "meta.k8s.io/v1beta1")
    assert out.table == ("as=Table" in accept) and out.partial_metadata == ("as=Table" not in accept)


def test_v1beta1_table_rows_carry_v1beta1_partial_object_metadata():
    cm = REGISTRY.get("", "v1", "configmaps")
    out = table.table(cm, [{"metadata": {"name": "app"}}], {}, "Metadata", "v1beta1")
    assert out["apiVersion"] == "meta.k8s.io/v1beta1"
    assert out["rows"][0]["object"] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1beta1",
                                        "metadata": {"name": "app"}}


@pytest.mark.parametrize("accept", [
    "application/json;as=Foo;v=v1;g=meta.k8s.io",
    "application/json;v=v1;g=meta.k8s.io",  # g/v without as= still asks for a conversion (to no kind)
    "application/json;g=meta.k8s.io",
    "application/json;as=Table;g=meta.k8s.io",  # no v
    "application/json;as=Table;v=v2;g=meta.k8s.io",
    "application/json;as=PartialObjectMetadata;v=v2;g=meta.k8s.io",
    "application/json;as=PartialObjectMetadata;v=v1;g=example.com",
    "application/json;stream=other",
    "application/json;sv=v2",
    "text/yaml",  # only application/yaml is kube's YAML media type
    "application/json;q=0",
])
def test_unservable_entries_are_406_with_kubes_message(accept):
    with pytest.raises(errors.StatusError) as info:
        negotiation.negotiate(accept, protobuf=True)
    assert (info.value.code, info.value.reason) == (406, "NotAcceptable")
    assert info.value.message == ("only the following media types are accepted: application/json, application/yaml, "
                                  "application/vnd.kubernetes.protobuf")


@pytest.mark.parametrize("accept", ["application/json;as=Foo;v=v1;g=meta.k8s.io, application/json",
                                    "application/json;v=v1;g=meta.k8s.io,application/json",
                                    "application/yaml;stream=watch, application/json",
                                    "application/json;stream=watch",
                                    "application/json;as="])  # goautoneg drops a parameter without a value
def test_an_unservable_entry_falls_through_to_plain_json(accept):
    out = negotiation.negotiate(accept)
    assert (out.mime, out.table, out.partial_metadata) == ("application/json", False, False)


@pytest.mark.parametrize("accept,mime", [
    ("application/yaml;q=0.5, application/json", "application/json"),  # goautoneg sorts by q
    ("*/*, application/yaml", "application/yaml"),  # a concrete type before a wildcard
    ("application/json;q=0, */*", "application/yaml"),  # q=0 refuses JSON even through */*
    ("application/*", "application/json"),
    ("application/vnd.kubernetes.protobuf;q=0.9, application/yaml", "application/yaml"),
])
def test_accept_order_is_goautonegs(accept, mime):
    assert negotiation.negotiate(accept, protobuf=True).mime == mime


def test_table_and_partial_metadata_in_yaml():
    out = negotiation.negotiate("application/yaml;as=Table;v=v1;g=meta.k8s.io")
    assert (out.mime, out.table) == ("application/yaml", True)
    out = negotiation.negotiate("application/yaml;as=PartialObjectMetadata;v=v1;g=meta.k8s.io")
    assert (out.mime, out.partial_metadata) == ("application/yaml", True)
    body, ctype = negotiation.encode({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "rows": []}, out)
    assert (body, ctype) == (b"apiVersion: meta.k8s.io/v1\nkind: Table\nrows: []\n", "application/yaml")  # go-yaml


def test_a_yaml_watch_is_406_naming_the_stream_media_types():
    with pytest.raises(errors.StatusError) as info:
        negotiation.check_watch(negotiation.negotiate("application/yaml", protobuf=True))
    assert info.value.code == 406
    assert info.value.message == ("only the following media types are accepted: application/json;stream=watch, "
                                  "application/vnd.kubernetes.protobuf;stream=watch")
    with pytest.raises(errors.StatusError) as info:
        negotiation.check_watch(negotiation.negotiate("application/yaml;as=Table;v=v1;g=meta.k8s.io"))
    assert info.value.message == "only the following media types are accepted: application/json;stream=watch"
    negotiation.check_watch(negotiation.negotiate("application/json;as=Table;v=v1;g=meta.k8s.io"))  # streams


@pytest.mark.parametrize("value,expected", [("", "Metadata"), ("None", "None"), ("Metadata", "Metadata"),
                                            ("Object", "Object")])
def test_include_object_values(value, expected):
    assert negotiation.include_object(value) == expected


@pytest.mark.parametrize("value", ["X", "object", "none"])
def test_include_object_other_values_are_kubes_400(value):
    with pytest.raises(errors.StatusError) as info:
        negotiation.include_object(value)
    assert (info.value.code, info.value.reason) == (400, "BadRequest")
    assert info.value.message == (f'Unable to convert to Table as requested: includeObject: Invalid value: "{value}": '
                                  "must be 'Metadata', 'Object', 'None', or empty")


def test_errors_negotiate_without_conversions():
    assert negotiation.prefers_protobuf("application/json;q=0.5, application/vnd.kubernetes.protobuf")
    assert not negotiation.prefers_protobuf("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, "
                                            "application/json")
    assert not negotiation.prefers_protobuf("application/yaml, application/vnd.kubernetes.protobuf")


def test_scale_table_is_kubes_print_scale():
    scale = {"kind": "Scale", "apiVersion": "autoscaling/v1",
             "metadata": {"name": "web", "namespace": "ns", "resourceVersion": "7"},
             "spec": {"replicas": 3}, "status": {"replicas": 2, "selector": "app=web"}}
    out = table.scale_table(scale, "Metadata")
    assert [(c["name"], c["type"], c["format"]) for c in out["columnDefinitions"]] == [
        ("Name", "string", ""), ("Desired", "integer", ""), ("Available", "integer", ""), ("Age", "string", "")]
    assert out["metadata"] == {"resourceVersion": "7"}
    assert out["rows"][0]["cells"] == ["web", 3, 2, "<unknown>"]
    assert out["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    assert table.scale_table(scale, "Object")["rows"][0]["object"] == scale
    assert "object" not in table.scale_table(scale, "None")["rows"][0]


@pytest.mark.parametrize(("accept", "mime"), [
    ("application/yaml", "application/yaml"), ("application/json", "application/json"),
    ("application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf"),
    ("text/html", None),  # nothing acceptable: a failure is still written, as raw JSON (WriteRawJSON)
    ("application/yaml;as=Table;v=v1;g=meta.k8s.io", None),  # conversions never apply to errors: raw JSON
    ("application/yaml;as=Table;v=v1;g=meta.k8s.io, application/yaml", "application/yaml"),
])
def test_errors_are_negotiated_without_conversions(accept: str, mime: str | None) -> None:
    out = negotiation.error_output(accept)
    assert (out.mime if out is not None else None) == mime


@pytest.mark.parametrize(("body", "value"), [
    (b'{"a": "\\ud800"}', {"a": "\ufffd"}),  # a lone surrogate escape
    (b'{"a": "x\xffy"}', {"a": "x\ufffdy"}),  # a byte that is no UTF-8
    (b'{"a": "\\ud83d\\ude00"}', {"a": "\U0001f600"}),  # a surrogate pair is one character
])
def test_json_bodies_decode_bad_utf8_as_go_does(body: bytes, value: dict) -> None:
    """Go's encoding/json replaces what is no valid UTF-8 by U+FFFD instead of refusing the document."""
    assert negotiation.decode_body(body, "application/json") == value


def test_a_json_syntax_error_keeps_gos_words() -> None:
    with pytest.raises(errors.StatusError) as info:
        negotiation.decode_body(b'{"a": "\xff", }', "application/json")
    assert info.value.code == 400 and "invalid character" in info.value.message
