"""kapi.testing's pure parts, without a cluster: kapi up flags, kubeconfig reading, what reset() deletes."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest
import yaml

from kapi.testing import reset as resetting
from kapi.testing import stack_options
from kapi.testing.rest import read_kubeconfig


@pytest.mark.parametrize(("flags", "expected"), [
    ([], {"extra_flags": [], "gateways": 1, "storage_replicas": 1}),
    (["--gateways=2", "--storage-replicas=2"], {"extra_flags": [], "gateways": 2, "storage_replicas": 2}),
    (["--authorization-mode", "Node,RBAC", "--token-auth-file=/x.csv"],
     {"extra_flags": ["--authorization-mode=Node,RBAC", "--token-auth-file=/x.csv"]}),
    (["--log-level=DEBUG", "--restart-policy=no"], {"log_level": "DEBUG", "restart_policy": "no"}),
    (["--etcd-members=3", "--advertise-address=a,b"], {"etcd_members": 3, "advertise": ["a", "b"]}),
])
def test_stack_options(flags: list[str], expected: dict[str, object]) -> None:
    options = stack_options(flags)
    options["extra_flags"] = sorted(options["extra_flags"])  # in kapi.flags' order
    assert {k: options[k] for k in expected} == expected


@pytest.mark.parametrize(("flags", "message"), [
    (["--no-such-flag=1"], "unknown kapi up flags: --no-such-flag=1"),
    (["--gateways=two"], "invalid int value"),
    (["--port=6443"], "chosen by kapi.testing"),
    (["--state-dir=/tmp/x"], "chosen by kapi.testing"),
])
def test_stack_options_refuses(flags: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        stack_options(flags)


def _kubeconfig(tmp_path: Path, user: dict[str, str]) -> Path:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:1/", "certificate-authority": "ca.crt"}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}]}))
    (tmp_path / "ca.crt").write_bytes(b"CA")
    return path


def test_read_kubeconfig_data_files_and_tokens(tmp_path: Path) -> None:
    (tmp_path / "tok").write_text("file-token\n")
    data = read_kubeconfig(_kubeconfig(tmp_path, {"client-certificate-data": base64.b64encode(b"C").decode(),
                                                  "client-key-data": base64.b64encode(b"K").decode()}))
    assert (data.server, data.ca_pem, data.cert_pem, data.key_pem, data.token) == (
        "https://127.0.0.1:1", b"CA", b"C", b"K", None)
    assert read_kubeconfig(_kubeconfig(tmp_path, {"token": "t"})).token == "t"
    assert read_kubeconfig(_kubeconfig(tmp_path, {"tokenFile": "tok"})).token == "file-token"
    with pytest.raises(ValueError, match="neither a client certificate nor a token"):
        read_kubeconfig(_kubeconfig(tmp_path, {"exec": "x"}))


CORE, RBAC = "/api/v1", "/apis/rbac.authorization.k8s.io/v1"
NAMESPACES = resetting.Resource(CORE, "namespaces", False)
CONFIGMAPS = resetting.Resource(CORE, "configmaps", True)
SERVICEACCOUNTS = resetting.Resource(CORE, "serviceaccounts", True)
CLUSTERROLES = resetting.Resource(RBAC, "clusterroles", False)
APISERVICES = resetting.Resource("/apis/apiregistration.k8s.io/v1", "apiservices", False)


def _ref(resource: resetting.Resource, namespace: str, name: str, uid: str,
         labels: tuple[tuple[str, str], ...] = ()) -> resetting.ObjectRef:
    return resetting.ObjectRef(resource, namespace, name, uid, labels)


def test_created_since_deletes_new_objects_in_order_and_keeps_managed_ones() -> None:
    baseline = resetting.Snapshot(frozenset({"ns-default", "cr-admin"}), frozenset({"default"}))
    objects = {o.uid: o for o in [
        _ref(NAMESPACES, "", "default", "ns-default"),
        _ref(CLUSTERROLES, "", "admin", "cr-admin"),
        _ref(NAMESPACES, "", "scratch", "ns-scratch"),
        _ref(CONFIGMAPS, "scratch", "inside", "cm-inside"),  # goes with its namespace
        _ref(CONFIGMAPS, "default", "leftover", "cm-leftover"),
        _ref(CLUSTERROLES, "", "leftover", "cr-leftover"),
        _ref(CONFIGMAPS, "default", "kube-root-ca.crt", "cm-root-ca"),  # the controllers'
        _ref(SERVICEACCOUNTS, "default", "default", "sa-default"),
        _ref(APISERVICES, "", "v1.example.com", "as-auto", (("kube-aggregator.kubernetes.io/automanaged", "true"),)),
        _ref(APISERVICES, "", "v1.wardle.example.com", "as-user"),
    ]}
    order = [(r.resource.name, r.namespace, r.name) for r in resetting.created_since(baseline, objects)]
    assert order == [("configmaps", "default", "leftover"), ("clusterroles", "", "leftover"),
                     ("apiservices", "", "v1.wardle.example.com"), ("namespaces", "", "scratch")]
    assert resetting.ObjectRef(CONFIGMAPS, "default", "x", "u").path == "/api/v1/namespaces/default/configmaps/x"
    assert resetting.ObjectRef(CLUSTERROLES, "", "x", "u").path == f"{RBAC}/clusterroles/x"


def test_abandoned_state_dirs_are_removed_and_live_ones_kept(tmp_path: Path) -> None:
    import subprocess
    import sys

    from kapi.testing import harness

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    abandoned, live, foreign = tmp_path / "kapi-session-a", tmp_path / "kapi-session-b", tmp_path / "kapi-other"
    for directory in (abandoned, live, foreign):
        directory.mkdir()
    (abandoned / harness.OWNER_FILE).write_text(gone.stdout.strip())  # a SIGKILLed session's
    (live / harness.OWNER_FILE).write_text(str(os.getpid()))
    (foreign / "ca.key").write_text("not ours: no owner file")
    assert harness.remove_abandoned_state_dirs(tmp_path) == [abandoned]
    assert not abandoned.exists() and live.exists() and foreign.exists()
