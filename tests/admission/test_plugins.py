"""services.admission.plugins: --enable/--disable-admission-plugins semantics."""

from __future__ import annotations

import pytest

from services.admission import plugins


@pytest.mark.parametrize(("enable", "disable", "expected"), [
    ("", "", ["NamespaceLifecycle"]),
    ("NamespaceLifecycle", "", ["NamespaceLifecycle"]),
    (" NamespaceLifecycle , ", "", ["NamespaceLifecycle"]),
    ("", "NamespaceLifecycle", []),
])
def test_enabled_plugins(enable: str, disable: str, expected: list[str]) -> None:
    assert plugins.enabled_plugins(enable, disable) == expected


@pytest.mark.parametrize(("enable", "disable", "message"), [
    ("Bogus", "", 'enable-admission-plugins plugin "Bogus" is unknown'),
    ("", "Bogus", 'disable-admission-plugins plugin "Bogus" is unknown'),
    ("NamespaceLifecycle", "NamespaceLifecycle",
     "[NamespaceLifecycle] in enable-admission-plugins and disable-admission-plugins overlapped"),
])
def test_bad_plugin_flags(enable: str, disable: str, message: str) -> None:
    with pytest.raises(ValueError) as exc:
        plugins.enabled_plugins(enable, disable)
    assert str(exc.value) == message


def test_server_refuses_to_start_on_unknown_plugin() -> None:
    from services.admission import server

    assert server.main(["--storage-address=127.0.0.1:1", "--enable-admission-plugins=Nope"]) == 1
    assert server.main([]) == 1  # no --storage-address
