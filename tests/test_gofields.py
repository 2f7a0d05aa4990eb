"""The Go field facts table (kapi/k8sproto/gofields.json) against the kubectl binary it is read from.

Every message of schema.json has an entry or is named as not a linked Go struct; the committed table is what
scripts/gen_gofields.py reads from the pinned kubectl today (a kubectl bump regenerates it); spot checks pin
facts from k8s.io/api's types.go.
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


def _generator():
    spec = importlib.util.spec_from_file_location("gen_gofields", ROOT / "scripts" / "gen_gofields.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_schema_message_has_facts_or_is_named_missing() -> None:
    doc = json.loads(Path(gotypes.GOFIELDS_PATH).read_text())
    schema = json.loads(Path(decoder.SCHEMA_PATH).read_text())["messages"]
    missing = set(doc["notGoStructs"])
    for message, entry in schema.items():
        if message in missing:
            assert message not in doc["messages"]
            continue
        names = {spec[0] for spec in entry["fields"].values()}
        assert set(doc["messages"][message]) == names, message
        assert all(set(flags) <= set("poi") or flags == "?" for flags in doc["messages"][message].values())
    # no Go field of the name: schema fields newer than kubectl 1.37 and the wire fields of hand-written marshallers
    unknown = {(m.rsplit(".", 1)[1], f) for m, row in doc["messages"].items()
               for f, flags in row.items() if flags == "?"}
    assert unknown == {
        ("DeploymentSpec", "podReplacementPolicy"), ("NodeFeatures", "containerUlimits"), ("PodSpec", "workloadRef"),
        ("SecurityContext", "ulimits"), ("PodDisruptionBudgetSpec", "availabilityMode"),
        ("Quantity", "string"), ("FieldsV1", "Raw"), ("MicroTime", "seconds"), ("MicroTime", "nanos"),
        ("Time", "seconds"), ("Time", "nanos"), ("RawExtension", "raw"), ("Unknown", "raw")}


def test_committed_table_is_what_the_pinned_kubectl_says(tmp_path: Path) -> None:
    assert os.access(KUBECTL, os.X_OK), "the pinned kubectl is installed by make install"
    out = tmp_path / "gofields.json"
    _generator().main(str(KUBECTL), str(out))
    assert json.loads(out.read_text()) == json.loads(Path(gotypes.GOFIELDS_PATH).read_text())


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
])
def test_spot_checks_from_types_go(message: str, field: str, flags: str) -> None:
    assert gotypes.flags(message, field) == flags


def test_unknown_fields_have_no_flags() -> None:
    assert gotypes.flags("k8s.io.apimachinery.pkg.apis.meta.v1.Time", "seconds") is None  # hand-written marshaller
    assert gotypes.flags("k8s.io.api.core.v1.NoSuchMessage", "x") is None
