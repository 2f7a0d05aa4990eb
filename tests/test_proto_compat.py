"""The protos' compatibility promise (docs/grpc-services.md): versioned packages, and buf's breaking-change check.

buf is the one ``make check-proto-breaking`` installs from npm into
``.tools/buf`` (``make buf``; a no-op when present, as it is in CI, where
.ci/run runs the check before the tests). Each case changes a copy of
protos/ and runs buf against the tree as it is: what the promise forbids
must fail, what it allows must pass.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROTOS = ROOT / "protos"
BUF = ROOT / ".tools" / "buf" / "node_modules" / ".bin" / "buf"
# Packages whose names their owners fix (etcd's wire API, gnostic's OpenAPI v2), excluded from lint in buf.yaml.
FOREIGN = {"etcdserverpb"}


@pytest.fixture(scope="module")
def buf() -> Path:
    if not BUF.exists():
        subprocess.run(["make", "-s", "buf"], cwd=ROOT, check=True, timeout=300)
    return BUF


def run_buf(buf: Path, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(buf), *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def changed(tmp_path: Path, path: str, edit: Callable[[str], str]) -> Path:
    """A copy of protos/ (buf.yaml included) with ``edit`` applied to ``path``; asserts the edit changed it."""
    copy = tmp_path / "protos"
    shutil.copytree(PROTOS, copy)
    target = copy / path
    before = target.read_text()
    after = edit(before)
    assert after != before
    target.write_text(after)
    return copy


def test_every_kapi_package_has_its_version_in_the_name() -> None:
    packages = {}
    for proto in PROTOS.rglob("*.proto"):
        match = re.search(r"^package\s+([\w.]+);", proto.read_text(), re.M)
        assert match, proto
        packages[str(proto.relative_to(PROTOS))] = match.group(1)
    assert "kapi/storage/v1/storage.proto" in packages
    for path, package in packages.items():
        if package in FOREIGN:
            continue
        assert re.fullmatch(r"[a-z][a-z0-9]*(\.[a-z][a-z0-9]*)*\.v\d+", package), (path, package)
        assert path.rsplit("/", 1)[0] == package.replace(".", "/"), (path, package)  # directory = package


def test_the_protos_pass_lint_and_the_check_against_the_previous_release(buf: Path) -> None:
    lint = run_buf(buf, "lint", "protos")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    check = subprocess.run(["make", "-s", "check-proto-breaking"], cwd=ROOT, capture_output=True, text=True,
                           timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize(("path", "edit", "message"), [
    # a field number changed: the old number's field is gone, its number and name not reserved
    ("kapi/storage/v1/storage.proto", lambda s: s.replace("ResourceKey key = 1;", "ResourceKey key = 15;", 1),
     'Previously present field "1" with name "key"'),
    # a field removed without reserving it
    ("kapi/flowcontrol/v1/flowcontrol.proto", lambda s: re.sub(r"\n\s*int64 list_limit = 5;[^\n]*", "", s),
     'without reserving the number "5"'),
    # a field's type changed
    ("kapi/flowcontrol/v1/flowcontrol.proto", lambda s: s.replace("int64 list_limit = 5;", "string list_limit = 5;"),
     "changed type"),
    # an RPC removed
    ("kapi/authz/v1/authz.proto", lambda s: re.sub(r"\n\s*rpc RulesReview\([^;]*;", "", s),
     'Previously present RPC "RulesReview"'),
    # a package renamed (a new version is a new package next to the old one, never a rename)
    ("kapi/authn/v1/authn.proto", lambda s: s.replace("package kapi.authn.v1;", "package kapi.authn.v2;"),
     "kapi.authn.v1"),
])
def test_a_breaking_change_fails_the_check(buf: Path, tmp_path: Path, path: str, edit: Callable[[str], str],
                                           message: str) -> None:
    copy = changed(tmp_path, path, edit)
    result = run_buf(buf, "breaking", str(copy), "--against", str(PROTOS))
    assert result.returncode != 0, result.stdout + result.stderr
    assert message in result.stdout + result.stderr


def test_a_removed_field_with_its_number_and_name_reserved_passes(buf: Path, tmp_path: Path) -> None:
    copy = changed(tmp_path, "kapi/flowcontrol/v1/flowcontrol.proto",
                   lambda s: re.sub(r"int64 list_limit = 5;[^\n]*", 'reserved 5;\n  reserved "list_limit";', s))
    result = run_buf(buf, "breaking", str(copy), "--against", str(PROTOS))
    assert result.returncode == 0, result.stdout + result.stderr
    assert run_buf(buf, "lint", str(copy)).returncode == 0


def test_an_added_field_passes(buf: Path, tmp_path: Path) -> None:
    copy = changed(tmp_path, "kapi/flowcontrol/v1/flowcontrol.proto", lambda s: s.replace(
        "message DumpResponse {\n  string text = 1;\n",
        "message DumpResponse {\n  string text = 1;\n  string format = 2;\n"))
    result = run_buf(buf, "breaking", str(copy), "--against", str(PROTOS))
    assert result.returncode == 0, result.stdout + result.stderr
