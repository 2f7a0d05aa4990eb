"""kube's healthz answers (/livez, /readyz, /healthz): check names and order, verbose, exclude, one check, failure."""

from __future__ import annotations

import pytest

from services.gateway import healthz

ALL_HOOKS = healthz.POST_START_HOOKS
HOOK_LINES = [f"[+]poststarthook/{h} ok" for h in ALL_HOOKS]


class FakeStorage:
    def __init__(self, reason: str = "") -> None:
        self.reason = reason


def named(path: str, etcd: str = "", hooks: tuple[str, ...] = ALL_HOOKS, synced: bool = True,
          shutting_down: bool = False) -> list[tuple[str, healthz.Check]]:
    return healthz.checks(path, FakeStorage(etcd), hooks, lambda: "" if synced else "not synced",  # type: ignore[arg-type]
                          shutting_down)


def test_check_names_in_kube_order() -> None:
    assert [n for n, _ in named("livez")] == ["ping", "log", "etcd", *(f"poststarthook/{h}" for h in ALL_HOOKS)]
    assert [n for n, _ in named("healthz")] == [n for n, _ in named("livez")]
    assert [n for n, _ in named("readyz")] == ["ping", "log", "etcd", "etcd-readiness", "informer-sync",
                                               *(f"poststarthook/{h}" for h in ALL_HOOKS), "shutdown"]


@pytest.mark.parametrize(("path", "kwargs", "query", "exclude", "status", "text"), [
    ("readyz", {}, {}, (), 200, "ok"),
    ("livez", {}, {"verbose": ""}, (), 200,
     "\n".join(["[+]ping ok", "[+]log ok", "[+]etcd ok", *HOOK_LINES]) + "\nlivez check passed\n"),
    ("readyz", {}, {"verbose": ""}, (), 200,
     "\n".join(["[+]ping ok", "[+]log ok", "[+]etcd ok", "[+]etcd-readiness ok", "[+]informer-sync ok",
                *HOOK_LINES, "[+]shutdown ok"]) + "\nreadyz check passed\n"),
    # A failure is always verbose, withholds the reason, and is a 500.
    ("readyz", {"etcd": "storage reports etcd unreachable"}, {}, (), 500,
     "\n".join(["[+]ping ok", "[+]log ok", "[-]etcd failed: reason withheld",
                "[-]etcd-readiness failed: reason withheld", "[+]informer-sync ok", *HOOK_LINES, "[+]shutdown ok"])
     + "\nreadyz check failed\n"),
    ("readyz", {"shutting_down": True}, {}, (), 500,
     "\n".join(["[+]ping ok", "[+]log ok", "[+]etcd ok", "[+]etcd-readiness ok", "[+]informer-sync ok",
                *HOOK_LINES, "[-]shutdown failed: reason withheld"]) + "\nreadyz check failed\n"),
    ("livez", {"shutting_down": True}, {}, (), 200, "ok"),  # shutting down is not dead
    ("livez", {"hooks": ALL_HOOKS[:-1]}, {}, (), 500,
     "\n".join(["[+]ping ok", "[+]log ok", "[+]etcd ok", *HOOK_LINES[:-1],
                f"[-]poststarthook/{ALL_HOOKS[-1]} failed: reason withheld"]) + "\nlivez check failed\n"),
    # Excluded checks pass; names matching nothing are warned about (sorted, quoted).
    ("readyz", {"etcd": "down"}, {"verbose": ""}, ("etcd", "etcd-readiness", "nope", "also-nope"), 200,
     "\n".join(["[+]ping ok", "[+]log ok", "[+]etcd excluded: ok", "[+]etcd-readiness excluded: ok",
                "[+]informer-sync ok", *HOOK_LINES, "[+]shutdown ok",
                'warn: some health checks cannot be excluded: no matches for "also-nope","nope"'])
     + "\nreadyz check passed\n"),
    ("readyz", {"etcd": "down"}, {}, ("etcd", "etcd-readiness"), 200, "ok"),
])
def test_render(path: str, kwargs: dict[str, object], query: dict[str, str], exclude: tuple[str, ...],
                status: int, text: str) -> None:
    answer = healthz.render(path, named(path, **kwargs), query, exclude)  # type: ignore[arg-type]
    assert (answer.status, answer.text) == (status, text)


def test_render_one() -> None:
    checks = named("readyz", etcd="storage is unreachable (UNAVAILABLE)")
    assert healthz.render_one(checks, "ping") == healthz.Answer(200, "ok")
    assert healthz.render_one(checks, "poststarthook/bootstrap-controller") == healthz.Answer(200, "ok")
    assert healthz.render_one(checks, "etcd") == healthz.Answer(
        500, "internal server error: storage is unreachable (UNAVAILABLE)\n")
    assert healthz.render_one(checks, "nope") is None
    assert healthz.render_one(named("livez"), "shutdown") is None  # a readyz check only


def test_filter_paths() -> None:
    from types import SimpleNamespace

    from services.gateway.filters import health

    backends = SimpleNamespace(storage_health=FakeStorage(), post_start_hooks=set(ALL_HOOKS), shutting_down=False,
                               custom_resources=SimpleNamespace(synced=True))
    ok = health.health("/readyz", backends)  # type: ignore[arg-type]
    assert ok is not None and (ok.status, ok.text, ok.headers["X-Content-Type-Options"]) == (200, "ok", "nosniff")
    one = health.health("/livez/poststarthook/bootstrap-controller", backends)  # type: ignore[arg-type]
    assert one is not None and (one.status, one.text) == (200, "ok")
    assert health.health("/readyz/", backends) is None  # type: ignore[arg-type]
    assert health.health("/readyz/nope", backends) is None  # type: ignore[arg-type]
    backends.custom_resources = None
    failing = health.health("/readyz/informer-sync", backends)  # type: ignore[arg-type]
    assert failing is not None and failing.status == 500
