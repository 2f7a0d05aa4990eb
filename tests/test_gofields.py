"""The Go field facts tables against what they are read from.

kapi/k8sproto/gofields.json is what scripts/gen_gofields.py reads from the pinned kubectl today (a kubectl bump
regenerates it); kapi/k8sproto/gofields_source.json (scripts/gen_gofields_source.py, from the groups' types.go)
covers the schema.json messages that table lacks, and agrees with kubectl wherever kubectl links the struct too.
Every message of schema.json has facts in one of them or is named as no Go struct in both; spot checks pin facts
from types.go.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from kapi.k8sproto import decoder, gotypes

ROOT = Path(__file__).resolve().parent.parent
KUBECTL = ROOT / ".venv" / "bin" / "kubectl"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _generator():
    return _load("gen_gofields", ROOT / "scripts" / "gen_gofields.py")


def _source_generator():
    return _load("gen_gofields_source", ROOT / "scripts" / "gen_gofields_source.py")


@pytest.fixture(scope="module")
def kubectl_says(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """What scripts/gen_gofields.py reads from the pinned kubectl for today's schema.json."""
    assert os.access(KUBECTL, os.X_OK), "the pinned kubectl is installed by make install"
    out = tmp_path_factory.mktemp("gofields") / "gofields.json"
    _generator().main(str(KUBECTL), str(out))
    return json.loads(out.read_text())


def test_every_schema_message_has_facts_or_is_named_missing() -> None:
    doc = json.loads(Path(gotypes.GOFIELDS_PATH).read_text())
    source = json.loads(Path(gotypes.GOFIELDS_SOURCE_PATH).read_text())
    schema = json.loads(Path(decoder.SCHEMA_PATH).read_text())["messages"]
    missing = set(doc["notGoStructs"])
    assert not set(source["messages"]) & set(doc["messages"])  # the types.go table has only what kubectl's lacks
    for message, entry in schema.items():
        row = doc["messages"].get(message, source["messages"].get(message))
        if row is None:
            assert message in missing and message in source["notGoStructs"], message
            continue
        names = {spec[0] for spec in entry["fields"].values()}
        assert set(row) == names, message
        assert all(set(flags) <= set("poi") or flags == "?" for flags in row.values())
    # the groups scripts/gen_k8sproto_schema.py --merge added have facts, every message of them
    for package in ("k8s.io.api.admissionregistration.v1", "k8s.io.api.flowcontrol.v1", "k8s.io.api.resource.v1",
                    "k8s.io.kube_aggregator.pkg.apis.apiregistration.v1"):
        names = [m for m in schema if m.rsplit(".", 1)[0] == package]
        assert names and all(m in gotypes.table() for m in names), package
    # no Go field of the name: schema fields newer than kubectl 1.37 and the wire fields of hand-written marshallers
    unknown = {(m.rsplit(".", 1)[1], f) for m, row in gotypes.table().items()
               for f, flags in row.items() if flags == "?"}
    assert unknown == {
        ("DeploymentSpec", "podReplacementPolicy"), ("NodeFeatures", "containerUlimits"), ("PodSpec", "workloadRef"),
        ("SecurityContext", "ulimits"), ("PodDisruptionBudgetSpec", "availabilityMode"),
        ("Quantity", "string"), ("FieldsV1", "Raw"), ("MicroTime", "seconds"), ("MicroTime", "nanos"),
        ("Time", "seconds"), ("Time", "nanos"), ("RawExtension", "raw"), ("Unknown", "raw")}


def test_committed_table_is_what_the_pinned_kubectl_says(kubectl_says: dict) -> None:
    assert kubectl_says == json.loads(Path(gotypes.GOFIELDS_PATH).read_text()), (
        "kapi/k8sproto/gofields.json is stale for today's schema.json: run scripts/gen_gofields.py, then "
        "scripts/gen_gofields_source.py (its table keeps only the messages kubectl's lacks)")


def test_types_go_table_agrees_with_kubectl_where_both_have_a_struct(kubectl_says: dict) -> None:
    source = json.loads(Path(gotypes.GOFIELDS_SOURCE_PATH).read_text())
    both = set(source["messages"]) & set(kubectl_says["messages"])
    assert {m: source["messages"][m] for m in both} == {m: kubectl_says["messages"][m] for m in both}
    # kube-aggregator's types are in no kubectl: the types.go table is their only source
    aggregator = "k8s.io.kube_aggregator.pkg.apis.apiregistration.v1"
    assert f"{aggregator}.APIServiceSpec" in source["messages"]
    assert f"{aggregator}.APIServiceSpec" not in kubectl_says["messages"]


def test_types_go_table_names_its_upstream_files() -> None:
    source = json.loads(Path(gotypes.GOFIELDS_SOURCE_PATH).read_text())
    files = {s["file"]: s["note"] for s in source["source"]}
    assert set(files) == {"k8s.io/api/admissionregistration/v1/types.go", "k8s.io/api/flowcontrol/v1/types.go",
                          "k8s.io/api/resource/v1/types.go",
                          "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/types.go"}
    assert all("commit" in note and len(note.split("commit", 1)[1].split()[0].strip(",.")) == 40
               for note in files.values()), files


GO_TYPES = """
// A transcription header naming its source.
package v1

type Thing struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec *ThingSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	Count int32 `json:"count,omitempty" protobuf:"varint,3,opt,name=count"`
	When metav1.Time `json:"when,omitzero" protobuf:"bytes,4,opt,name=when"`
	Hidden string `json:"-"`
	Config `json:"" protobuf:"bytes,5,name=config"`
	RuleWithOps `json:",inline" protobuf:"bytes,6,opt,name=ruleWithOps"`
	Items []string `json:"items" protobuf:"bytes,7,rep,name=items"` // trailing comment
}
"""


def test_source_generator_reads_go_struct_tags(tmp_path: Path) -> None:
    gen = _source_generator()
    assert gen.parse(GO_TYPES)["Thing"] == {
        "typeMeta": "i", "metadata": "o", "spec": "p", "count": "o", "when": "o", "config": "i", "ruleWithOps": "i",
        "items": ""}
    assert gen.proto_package("k8s.io/kube-aggregator/pkg/apis/apiregistration/v1") == (
        "k8s.io.kube_aggregator.pkg.apis.apiregistration.v1")
    src = tmp_path / "src" / "k8s.io" / "api" / "things" / "v1"
    src.mkdir(parents=True)
    (src / "types.go").write_text(GO_TYPES)
    schema = {"messages": {
        "k8s.io.api.things.v1.Thing": {"fields": {"1": ["metadata", "x", ""], "2": ["spec", "y", ""],
                                                  "9": ["newer", "string", ""]}},
        "k8s.io.api.things.v1.Other": {"fields": {}},
        "k8s.io.api.core.v1.Pod": {"fields": {}}}}
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    (tmp_path / "kubectl.json").write_text(json.dumps({"messages": {"k8s.io.api.core.v1.Pod": {}}}))
    out = tmp_path / "out.json"
    assert gen.main([str(tmp_path / "src"), "-o", str(out), "--schema", str(tmp_path / "schema.json"),
                     "--kubectl-table", str(tmp_path / "kubectl.json")]) == 0
    doc = json.loads(out.read_text())
    assert doc["messages"] == {"k8s.io.api.things.v1.Thing": {"metadata": "o", "spec": "p", "newer": "?"}}
    assert doc["notGoStructs"] == ["k8s.io.api.things.v1.Other"]
    assert doc["source"] == [{"file": "k8s.io/api/things/v1/types.go",
                              "note": "A transcription header naming its source."}]
    with pytest.raises(gen.GoSyntaxError):
        gen.parse("type Broken struct {\n\tName string\n}\n", "broken.go")


@pytest.mark.parametrize(("message", "field", "flags"), [
    ("k8s.io.api.core.v1.PodSpec", "hostNetwork", "o"),                    # bool `json:",omitempty"`
    ("k8s.io.api.core.v1.PodSpec", "automountServiceAccountToken", "po"),  # *bool
    ("k8s.io.api.core.v1.PodSpec", "containers", ""),                      # required list
    ("k8s.io.api.apps.v1.DeploymentSpec", "replicas", "po"),
    ("k8s.io.api.apps.v1.DeploymentSpec", "template", ""),
    ("k8s.io.api.apps.v1.DeploymentStrategy", "rollingUpdate", "po"),
    ("k8s.io.api.core.v1.Container", "name", ""),
    ("k8s.io.api.core.v1.ServicePort", "targetPort", "o"),                 # intstr.IntOrString by value
    ("k8s.io.api.core.v1.HTTPGetAction", "port", ""),
    ("k8s.io.api.core.v1.PersistentVolumeClaimSpec", "storageClassName", "po"),
    ("k8s.io.api.core.v1.Volume", "volumeSource", "i"),
    ("k8s.io.api.core.v1.Probe", "handler", "i"),
    ("k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta", "generation", "o"),
    ("k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta", "deletionTimestamp", "po"),
    # the groups added with gen_k8sproto_schema.py --merge (types.go of admissionregistration, flowcontrol,
    # resource and kube-aggregator)
    ("k8s.io.api.admissionregistration.v1.ValidatingWebhook", "sideEffects", "p"),  # *SideEffectClass, no omitempty
    ("k8s.io.api.admissionregistration.v1.ValidatingWebhook", "clientConfig", ""),
    ("k8s.io.api.admissionregistration.v1.MutatingWebhook", "timeoutSeconds", "po"),
    ("k8s.io.api.admissionregistration.v1.RuleWithOperations", "rule", "i"),
    ("k8s.io.api.admissionregistration.v1.MutatingAdmissionPolicySpec", "reinvocationPolicy", "o"),
    ("k8s.io.api.flowcontrol.v1.FlowSchemaSpec", "distinguisherMethod", "po"),
    ("k8s.io.api.flowcontrol.v1.FlowSchemaSpec", "matchingPrecedence", ""),
    ("k8s.io.api.flowcontrol.v1.LimitedPriorityLevelConfiguration", "nominalConcurrencyShares", "p"),
    ("k8s.io.api.resource.v1.ResourceClaimSpec", "devices", ""),
    ("k8s.io.api.resource.v1.DeviceClaimConfiguration", "deviceConfiguration", "i"),  # embedded, json:""
    ("k8s.io.api.resource.v1.ExactDeviceRequest", "count", "o"),
    ("k8s.io.api.resource.v1.DeviceTaintRuleSpec", "taint", "o"),
    ("k8s.io.kube_aggregator.pkg.apis.apiregistration.v1.APIServiceSpec", "service", "p"),  # json:"service"
    ("k8s.io.kube_aggregator.pkg.apis.apiregistration.v1.APIServiceSpec", "groupPriorityMinimum", ""),
    ("k8s.io.kube_aggregator.pkg.apis.apiregistration.v1.APIServiceSpec", "insecureSkipTLSVerify", "o"),
])
def test_spot_checks_from_types_go(message: str, field: str, flags: str) -> None:
    assert gotypes.flags(message, field) == flags


def test_unknown_fields_have_no_flags() -> None:
    assert gotypes.flags("k8s.io.apimachinery.pkg.apis.meta.v1.Time", "seconds") is None  # hand-written marshaller
    assert gotypes.flags("k8s.io.api.core.v1.NoSuchMessage", "x") is None
