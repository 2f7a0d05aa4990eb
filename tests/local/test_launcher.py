"""kapi.local.launcher: service command lines, flag forwarding, ports, startup failure and shutdown."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kapi import flags
from kapi.local import launcher
from kapi.local.launcher import Peers, Process, Stack, StartupError, service_args

PKI = "/state/pki"
PEERS = Peers(storage="127.0.0.1:1,127.0.0.1:2", authn="127.0.0.1:3", authz="127.0.0.1:4",
              flowcontrol="127.0.0.1:5", admission="127.0.0.1:6", etcd_servers="http://127.0.0.1:2379")


def value(args: list[str], name: str) -> str | None:
    """The value of ``--name`` in ``args`` (``--name v`` or ``--name=v``); the last one wins, None if absent."""
    found = None
    for i, a in enumerate(args):
        if a == f"--{name}":
            found = args[i + 1]
        elif a.startswith(f"--{name}="):
            found = a.split("=", 1)[1]
    return found


@pytest.mark.parametrize("service", flags.SERVICES)
def test_every_command_line_parses_with_the_services_own_flags(service: str) -> None:
    forwarded = flags.forward(launcher.parse_service_flags(
        ["--authorization-mode=AlwaysAllow", "--max-requests-inflight=7", "--anonymous-auth=false",
         "--watch-cache-sizes=pods#100", "--enable-admission-plugins=NamespaceLifecycle"]), service)
    args = service_args(service, listen="127.0.0.1:0", peers=PEERS, pki_dir=PKI, forwarded=forwarded,
                        port_file="/run/x.port")
    assert args[0] == service
    parsed = flags.parse(service, args[1:])  # SystemExit if the service does not accept one of them
    assert parsed.grpc_cert_file == f"{PKI}/kapi-{service}.crt"
    assert parsed.grpc_key_file == f"{PKI}/kapi-{service}.key"
    assert parsed.grpc_ca_file == f"{PKI}/ca.crt"
    assert parsed.port_file == "/run/x.port"


@pytest.mark.parametrize(("service", "name", "want"), [
    ("storage", "listen-address", "127.0.0.1:0"),
    ("storage", "etcd-servers", "http://127.0.0.1:2379"),
    ("storage", "storage-address", None),
    ("authn", "storage-address", "127.0.0.1:1,127.0.0.1:2"),
    ("authn", "client-ca-file", f"{PKI}/ca.crt"),
    ("authn", "service-account-key-file", f"{PKI}/sa.pub"),
    ("authz", "storage-address", "127.0.0.1:1,127.0.0.1:2"),
    ("authz", "authorization-mode", "AlwaysAllow"),
    ("authn", "authorization-mode", "AlwaysAllow"),  # AlwaysAllow turns anonymous auth off
    ("flowcontrol", "max-requests-inflight", "7"),
    ("admission", "storage-address", "127.0.0.1:1,127.0.0.1:2"),
    ("gateway", "bind-address", "127.0.0.1"),
    ("gateway", "secure-port", "0"),
    ("gateway", "listen-address", None),
    ("gateway", "tls-cert-file", f"{PKI}/gateway.crt"),
    ("gateway", "tls-private-key-file", f"{PKI}/gateway.key"),
    ("gateway", "client-ca-file", f"{PKI}/ca.crt"),
    ("gateway", "authn-address", "127.0.0.1:3"),
    ("gateway", "authz-address", "127.0.0.1:4"),
    ("gateway", "flowcontrol-address", "127.0.0.1:5"),
    ("gateway", "admission-address", "127.0.0.1:6"),
    ("gateway", "max-requests-inflight", "7"),
    ("gateway", "authorization-mode", None),
])
def test_service_gets_its_peers_files_and_flags(service: str, name: str, want: str | None) -> None:
    forwarded = flags.forward(launcher.parse_service_flags(
        ["--authorization-mode=AlwaysAllow", "--max-requests-inflight=7"]), service)
    args = service_args(service, listen="127.0.0.1:0", peers=PEERS, pki_dir=PKI, forwarded=forwarded)
    assert value(args, name) == want


def test_forwarded_flag_replaces_the_launchers_default() -> None:
    forwarded = flags.forward(launcher.parse_service_flags(["--service-account-key-file=/keys/sa.pub"]), "authn")
    args = service_args("authn", listen="127.0.0.1:0", peers=PEERS, pki_dir=PKI, forwarded=forwarded)
    assert [a for a in args if "service-account-key-file" in a] == ["--service-account-key-file=/keys/sa.pub"]


def test_unknown_service_flag_is_refused() -> None:
    with pytest.raises(ValueError, match="--no-such-flag"):
        launcher.parse_service_flags(["--no-such-flag=1"])
    with pytest.raises(ValueError):
        Stack("/tmp/unused", extra_flags=["--listen-address=1.2.3.4:5"])


def test_up_help_lists_every_passthrough_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        launcher.build_parser().parse_args(["--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for flag in flags.FLAGS:
        if flag.passthrough:
            assert f"--{flag.name}" in text, flag.name
    for name in ("--state-dir", "--port", "--bind-address", "--advertise-address", "--gateways", "--storage-replicas"):
        assert name in text


def test_passthrough_argv_round_trips() -> None:
    args = launcher.build_parser().parse_args(["--anonymous-auth=false", "--authorization-mode", "RBAC"])
    argv = launcher._passthrough_argv(args)
    assert argv == ["--anonymous-auth=false", "--authorization-mode=RBAC"]
    assert flags.forward(launcher.parse_service_flags(argv), "authn") == argv
    assert flags.forward(launcher.parse_service_flags(argv), "authz") == ["--authorization-mode=RBAC"]


def test_etcd_ports_are_remembered_and_replaced_when_taken(tmp_path: Path) -> None:
    stack = Stack(tmp_path)
    first = stack._etcd_ports()
    assert first[0] != first[1]
    assert json.loads((tmp_path / "ports.json").read_text()) == {"etcd-client": first[0], "etcd-peer": first[1]}
    assert stack._etcd_ports() == first
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", first[0]))
        busy.listen()
        again = stack._etcd_ports()
    assert again[0] != first[0] and again[1] == first[1]


def test_startup_failure_reports_the_log_tail_and_leaves_nothing_running(tmp_path: Path) -> None:
    (tmp_path / "etcd").write_text("not a directory")  # etcd's data dir: etcd exits at once
    stack = Stack(tmp_path, timeout=30)
    with pytest.raises(StartupError) as err:
        stack.start()
    assert "etcd exited with code" in str(err.value)
    assert "not a directory" in str(err.value)  # from etcd's own log
    assert all(p.poll() is not None for p in stack.processes.values())
    assert launcher.main(["--state-dir", str(tmp_path), "--port", "0"]) == 1


def sleeper(tmp_path: Path, name: str, tier: int, ignore_term: bool = False) -> Process:
    code = "import signal, time\n"
    if ignore_term:
        code += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    code += "print('sleep' + 'ing', flush=True)\ntime.sleep(600)\n"  # the log's header line holds the code
    return Process(name, tier, lambda _listen: [sys.executable, "-c", code], tmp_path / f"{name}.log")


def test_stop_goes_in_reverse_tier_order_and_escalates_to_sigkill(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launcher, "STOP_GRACE_SECONDS", 1.0)
    stack = Stack(tmp_path)
    low = stack._add(sleeper(tmp_path, "low", 0))
    high = stack._add(sleeper(tmp_path, "high", 3, ignore_term=True))
    for p in (low, high):
        stack._spawn(p, "")
    deadline = time.monotonic() + 20
    while not all("sleeping" in p.log_path.read_text() for p in (low, high)) and time.monotonic() < deadline:
        time.sleep(0.05)
    started = time.monotonic()
    stack.stop()
    assert high.popen is not None and low.popen is not None
    assert high.popen.returncode == -signal.SIGKILL  # ignored SIGTERM, killed after the grace period
    assert low.popen.returncode == -signal.SIGTERM
    assert time.monotonic() - started < 5
    stack.stop()  # idempotent


def test_kill_and_restart_process(tmp_path: Path) -> None:
    stack = Stack(tmp_path)
    p = stack._add(sleeper(tmp_path, "gateway-9", 3))
    p.address = "127.0.0.1:1"
    stack._spawn(p, "")
    first = stack.processes["gateway-9"].pid
    stack.kill_process("gateway-9")
    assert stack.processes["gateway-9"].returncode == -signal.SIGKILL
    assert stack.exited() == []  # a kill asked for is not reported as a crash
    stack._spawn(p, p.address)
    assert stack.processes["gateway-9"].pid != first
    stack.processes["gateway-9"].send_signal(signal.SIGTERM)
    stack.processes["gateway-9"].wait(10)
    assert stack.exited() == [("gateway-9", -signal.SIGTERM)]
    assert stack.exited() == []
    stack.stop()


def test_health_command_fails_when_nothing_listens(tmp_path: Path) -> None:
    port = launcher.free_port()
    assert launcher.health_main(["--url", f"https://127.0.0.1:{port}/readyz", "--timeout", "0.5"]) == 1
    with pytest.raises(SystemExit):
        launcher.health_main([])


def test_kapi_health_is_a_cli_command() -> None:
    result = subprocess.run([sys.executable, "-m", "kapi.local.cli", "health", "--help"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0 and "--grpc-address" in result.stdout
