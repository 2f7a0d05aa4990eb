"""A service's start is mostly its imports (bench/startup.py): the heavy libraries it does not need stay unloaded.

Each check runs a fresh interpreter, imports the service's entry module as ``kapi <service>`` does, and lists
which of the heavy modules were loaded: the CEL package's command line (prompt_toolkit, typer, rich; about
0.23 CPU s, kapi/cel/engine.py) in no service, and aiohttp (about 0.3 CPU s) only where a request always needs
it (the gateway serves HTTP; the controller manager is an HTTP client). Webhook clients import it when one is
configured.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("prompt_toolkit", "typer", "rich", "aiohttp")
EXPECTED = {
    "storage": set(),
    "authn": set(),
    "authz": set(),
    "flowcontrol": set(),
    "admission": set(),
    "gateway": {"aiohttp"},
    "controllers": {"aiohttp"},
}


def loaded(code: str) -> set[str]:
    """The modules of HEAVY that ``code`` (run in a fresh interpreter) leaves in sys.modules."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("service", sorted(EXPECTED))
def test_service_imports_only_what_it_needs(service: str) -> None:
    code = f"import kapi.flags, services.{service}.server"
    if service == "admission":  # its plugins are imported when the chain is built, not with the module
        code += "\nfrom services.admission import plugins\nplugins._factories()"
    assert loaded(code) == EXPECTED[service]


def test_cel_engine_works_without_its_command_line() -> None:
    code = ("from kapi.cel.engine import cel\n"
            "assert cel.evaluate('1 + 2') == 3\n"
            "assert cel.compile('x * 2').execute(cel.Context({'x': 21})) == 42\n")
    assert loaded(code) == set()


def test_the_scan_sees_a_heavy_import() -> None:
    assert loaded("import cel") >= {"prompt_toolkit"}  # the package alone loads its CLI: what engine.py avoids
