"""The kapi pytest plugin (entry point ``pytest11: kapi``): a real API server as fixtures.

Installing the kapi package registers it; nothing starts unless a test asks for a fixture:

- ``kapi_cluster`` (session; one per xdist worker): :class:`kapi.testing.Cluster`,
  the whole stack on free 127.0.0.1 ports in a temporary state directory,
  stopped at the end of the session (also after Ctrl-C or a failing fixture);
- ``kapi_namespace`` (function): a fresh namespace named after the test, deleted afterwards;
- ``kapi_cluster_flags`` (session): the ``kapi up`` flags of ``kapi_cluster``; override it
  in the root conftest.py to set them in code;
- ``kapi_cluster_factory`` (session): ``kapi_cluster_factory(flags)`` starts (once per
  distinct flag list) another cluster, for the tests that need other flags.

While ``kapi_cluster`` runs, ``KUBECONFIG`` names its admin kubeconfig (ini
``kapi_export_kubeconfig = false`` turns that off).

Options: ini ``kapi_flags`` (shell words), ``--kapi-flag=FLAG`` (repeatable, after the ini's),
``--kapi-keep-state`` (keep the state directory, with every process's log, when a test
failed), ``--kapi-kubeconfig=PATH`` (use the running cluster of that admin kubeconfig
instead of starting one). docs/testing.md has examples.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # kapi.testing imports grpc and the launcher: only when a fixture is used
    from kapi.testing import Cluster

_KEPT = pytest.StashKey[list[Path]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``kapi_flags`` ini value and the ``--kapi-*`` command-line options."""
    group = parser.getgroup("kapi", "kapi test cluster (kapi.testing)")
    group.addoption("--kapi-flag", action="append", default=[], dest="kapi_flag", metavar="FLAG",
                    help="a `kapi up` flag for kapi_cluster, e.g. --kapi-flag=--authorization-mode=RBAC "
                         "(repeatable; after the ini's kapi_flags)")
    group.addoption("--kapi-keep-state", action="store_true", dest="kapi_keep_state",
                    help="keep kapi_cluster's state directory (etcd data, PKI, logs/) when a test failed")
    group.addoption("--kapi-kubeconfig", default=None, dest="kapi_kubeconfig", metavar="PATH",
                    help="use the running cluster of this admin kubeconfig instead of starting one")
    parser.addini("kapi_flags", type="args", default=[], help="`kapi up` flags for kapi_cluster (shell words)")
    parser.addini("kapi_export_kubeconfig", type="bool", default=True,
                  help="set KUBECONFIG to kapi_cluster's admin kubeconfig while it runs (default true)")


def pytest_configure(config: pytest.Config) -> None:
    """Prepare the list of kept state directories reported at the end."""
    config.stash[_KEPT] = []


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int,
                            config: pytest.Config) -> None:
    """Name the state directories kept for inspection."""
    for path in config.stash.get(_KEPT, []):
        terminalreporter.write_line(f"kapi: state directory kept for inspection: {path} (logs in {path / 'logs'})")


def _state_dir(prefix: str) -> Path:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    from kapi.testing.harness import temporary_state_dir

    return temporary_state_dir(f"kapi-{prefix}-{worker + '-' if worker else ''}")


def _finish(request: pytest.FixtureRequest, state: Path) -> None:
    """Remove ``state`` unless --kapi-keep-state and a test failed (then report it)."""
    if request.config.getoption("kapi_keep_state") and request.session.testsfailed:
        request.config.stash[_KEPT].append(state)
    else:
        shutil.rmtree(state, ignore_errors=True)


def _started(request: pytest.FixtureRequest, kapi_flags: Sequence[str], what: str) -> Iterator[Cluster]:
    from kapi import testing

    state = _state_dir(what)
    try:
        c = testing.start(kapi_flags, state)
    except BaseException:
        if request.config.getoption("kapi_keep_state"):
            request.config.stash[_KEPT].append(state)
        else:
            shutil.rmtree(state, ignore_errors=True)
        raise
    try:
        yield c
    finally:
        c.stop()
        _finish(request, state)


@pytest.fixture(scope="session")
def kapi_cluster_flags(pytestconfig: pytest.Config) -> list[str]:
    """``kapi up`` flags of ``kapi_cluster``: the ini's ``kapi_flags``, then every ``--kapi-flag``."""
    return [*pytestconfig.getini("kapi_flags"), *pytestconfig.getoption("kapi_flag")]


@contextlib.contextmanager
def exported(kubeconfig: Path) -> Iterator[None]:
    """``KUBECONFIG=<kubeconfig>`` for the block, then the previous value.

    Also the official client's default location, which ``kubernetes.config`` reads from the
    environment once, when first imported (kopf's default login and ``load_kube_config()`` use it).
    """
    previous = os.environ.get("KUBECONFIG")
    os.environ["KUBECONFIG"] = str(kubeconfig)
    module = sys.modules.get("kubernetes.config.kube_config")
    default = getattr(module, "KUBE_CONFIG_DEFAULT_LOCATION", None)
    if module is not None:
        module.KUBE_CONFIG_DEFAULT_LOCATION = str(kubeconfig)  # type: ignore[attr-defined]
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("KUBECONFIG", None)
        else:
            os.environ["KUBECONFIG"] = previous
        if module is not None:
            module.KUBE_CONFIG_DEFAULT_LOCATION = default  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def kapi_cluster(request: pytest.FixtureRequest, kapi_cluster_flags: list[str]) -> Iterator[Cluster]:
    """A whole kapi stack for the session (per xdist worker), as the admin; see :class:`kapi.testing.Cluster`.

    While it runs, ``KUBECONFIG`` names its admin kubeconfig (ini ``kapi_export_kubeconfig = false``
    turns that off), so kubectl, kopf, kr8s, lightkube and ``kubernetes.config.load_kube_config()``
    reach it, never the cluster of ~/.kube/config.
    """
    from kapi import testing

    kubeconfig = request.config.getoption("kapi_kubeconfig")
    export = request.config.getini("kapi_export_kubeconfig")
    if kubeconfig:
        manager: contextlib.AbstractContextManager[Cluster] = testing.cluster(kubeconfig=kubeconfig)
    else:
        manager = contextlib.contextmanager(_started)(request, kapi_cluster_flags, "session")
    with manager as c, (exported(c.kubeconfig) if export else contextlib.nullcontext()):
        yield c


@pytest.fixture(scope="session")
def kapi_cluster_factory(request: pytest.FixtureRequest) -> Iterator[Callable[[Sequence[str]], Cluster]]:
    """``kapi_cluster_factory(flags)``: a cluster started with those ``kapi up`` flags, one per distinct list,
    stopped at the end of the session."""
    made: dict[tuple[str, ...], Cluster] = {}
    generators: list[Iterator[Cluster]] = []

    def make(kapi_flags: Sequence[str]) -> Cluster:
        key = tuple(kapi_flags)
        if key not in made:
            gen = _started(request, key, "factory")
            made[key] = next(gen)
            generators.append(gen)
        return made[key]

    try:
        yield make
    finally:
        for gen in reversed(generators):
            for _ in gen:  # runs each cluster's stop and state-directory cleanup
                pass


@pytest.fixture
def kapi_namespace(kapi_cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace named after the test (``test-foo-x1y2z``), with its ``default`` ServiceAccount;
    deleted (not waited for) afterwards."""
    name = kapi_cluster.create_namespace(re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()))
    try:
        yield name
    finally:
        kapi_cluster.delete_namespace(name)
