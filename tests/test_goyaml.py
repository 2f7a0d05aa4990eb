"""kapi.goyaml: the YAML kube-apiserver writes (sigs.k8s.io/yaml JSONToYAML, go-yaml v2)."""

from __future__ import annotations

import pytest
import yaml

from kapi import goyaml


@pytest.mark.parametrize(("text", "quoted"), [
    ("123", True), ("1.5", True), ("-7", True), ("0x1F", True), ("0o17", True), ("1_000", True), ("09", True),
    ("true", True), ("n", True), ("Off", True), ("~", True), ("", True), (".inf", True), ("1:20", True),
    ("2026-12-03T08:59:31Z", True), ("2026-12-03", True),
    ("hello", False), ("nginx:1.25", False), ("v1", False), ("1.2.3", False), ("no-such", False), ("-x", False),
])
def test_strings_go_yaml_would_read_back_as_something_else(text: str, quoted: bool) -> None:
    assert goyaml.resolves_to_non_string(text) is quoted
    assert goyaml.dumps({"k": text}) == (f'k: "{text}"\n' if quoted else f"k: {text}\n").encode()


def test_keys_in_go_yaml_order() -> None:
    """keyList.Less: a non-letter before a letter, digit runs as numbers."""
    keys = ["b", "a10", "a9", "app.kubernetes.io/name", "app", "A", "_x", "a-b", "ab"]
    assert goyaml.go_key_order(keys) == ["_x", "A", "a-b", "a9", "a10", "ab", "app", "app.kubernetes.io/name", "b"]


def test_a_configmap_as_kube_writes_it() -> None:
    cm = {"kind": "ConfigMap", "apiVersion": "v1",
          "metadata": {"name": "x", "creationTimestamp": "2026-12-03T08:59:31Z",
                       "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:data": {".": {}, "f:a": {}}}}]},
          "data": {"a": "1", "script": "echo hi\necho there\n", "long": "word " * 30}}
    out = goyaml.dumps(cm).decode()
    assert out == (
        "apiVersion: v1\n"
        "data:\n"
        '  a: "1"\n'
        f"  long: '{'word ' * 30}'\n"  # trailing space: not plain; never folded
        "  script: |\n"
        "    echo hi\n"
        "    echo there\n"
        "kind: ConfigMap\n"
        "metadata:\n"
        '  creationTimestamp: "2026-12-03T08:59:31Z"\n'
        "  managedFields:\n"
        "  - fieldsV1:\n"
        "      f:data:\n"
        "        .: {}\n"
        "        f:a: {}\n"
        "    manager: kubectl\n"
        "  name: x\n")
    assert yaml.safe_load(out) == cm


def test_a_value_held_twice_is_written_twice_not_as_an_alias() -> None:
    # go-yaml encodes JSON-shaped data: no anchors. PyYAML alone writes "&id001" / "*id001" for a shared dict.
    shared = {"name": "v1", "version": "v1"}
    assert goyaml.dumps({"a": shared, "b": [shared]}) == (
        b"a:\n  name: v1\n  version: v1\nb:\n- name: v1\n  version: v1\n")
