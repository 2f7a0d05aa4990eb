"""Watch options as kube-apiserver 1.37 serves them (WatchList on): sendInitialEvents given or defaulted.

- ``sendInitialEvents=false&resourceVersionMatch=NotOlderThan`` from "" or "0": no initial events, a watch from
  now (cacher.go getWatchCacheResourceVersion; watch_cache.go getAllEventsSinceLocked: "start watching from Any
  resourceVersion").
- ``sendInitialEvents=true`` at a resourceVersion not reached: one ERROR event, 504 Too large resource version,
  no initial event first (waitUntilWatchCacheFreshAndForceAllEvents).
- A watch from "" or "0" with neither sendInitialEvents nor a match is defaulted to sendInitialEvents=true +
  NotOlderThan (SetListOptionsDefaults, get.go ListResource), so allowWatchBookmarks gets the
  ``k8s.io/initial-events-end`` bookmark after the initial events.
"""

from __future__ import annotations

import json
import threading
import time

from kapi.local.launcher import Stack
from tests.e2e.test_grpc_api import configmap, rest

FROM_NOW = ("", "&resourceVersion=0")  # no resourceVersion, resourceVersion=0
ONE = "fieldSelector=metadata.name%3Done"  # not kube-root-ca.crt, which the controllers publish meanwhile


def _base(stack: Stack, namespace: str) -> str:
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    assert rest(stack, "POST", base, json.loads(configmap(namespace, "one", {"a": "b"})))[0] == 201
    return base


def test_wlist_false_no_initial(stack: Stack, namespace: str) -> None:
    """sendInitialEvents=false from "" or "0": the existing object is not sent."""
    base = _base(stack, namespace)
    for rv in FROM_NOW:
        status, body = rest(stack, "GET", f"{base}?{ONE}&watch=1&sendInitialEvents=false"
                                          f"&resourceVersionMatch=NotOlderThan{rv}&timeoutSeconds=1")
        assert (status, body) == (200, b""), rv


def test_wlist_future_rv_too_large(stack: Stack, namespace: str) -> None:
    base = _base(stack, namespace)
    future = int(json.loads(rest(stack, "GET", base)[1])["metadata"]["resourceVersion"]) + 100000
    status, body = rest(stack, "GET", f"{base}?{ONE}&watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                                      f"&resourceVersion={future}&allowWatchBookmarks=true&timeoutSeconds=10")
    events = [json.loads(line) for line in body.splitlines()]
    assert status == 200 and [e["type"] for e in events] == ["ERROR"]
    err = events[0]["object"]
    assert (err["code"], err["reason"]) == (504, "Timeout")
    assert err["message"].startswith(f"Timeout: Too large resource version: {future}, current: ")
    assert err["details"]["retryAfterSeconds"] == 1
    assert err["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
    # the same event a plain watch from that resourceVersion gets
    plain = rest(stack, "GET", f"{base}?{ONE}&watch=1&resourceVersion={future}&timeoutSeconds=10")[1]
    assert {k: v for k, v in json.loads(plain)["object"].items() if k != "message"} == \
        {k: v for k, v in err.items() if k != "message"}


def test_wlist_defaulted_end_bookmark(stack: Stack, namespace: str) -> None:
    """A watch from ""/"0" with allowWatchBookmarks ends its initial events with the initial-events-end bookmark."""
    base = _base(stack, namespace)
    for rv in FROM_NOW:
        status, body = rest(stack, "GET", f"{base}?{ONE}&watch=1&allowWatchBookmarks=true{rv}&timeoutSeconds=1")
        events = [json.loads(line) for line in body.splitlines()]
        assert status == 200 and [e["type"] for e in events][:2] == ["ADDED", "BOOKMARK"], rv
        assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
        status, body = rest(stack, "GET", f"{base}?{ONE}&watch=1{rv}&timeoutSeconds=1")  # no bookmarks asked for
        assert status == 200 and [json.loads(line)["type"] for line in body.splitlines()] == ["ADDED"], rv


def _watch_while_creating(stack: Stack, base: str, query: str) -> tuple[list[dict], int]:
    """Watch ``base?query`` (5 s) while a second ConfigMap is created after 0.5 s; (events, its resourceVersion)."""
    created: list[int] = []

    def create() -> None:
        status, body = rest(stack, "POST", base, json.loads(configmap(base.split("/")[4], "two", {"a": "b"})))
        assert status == 201
        created.append(int(json.loads(body)["metadata"]["resourceVersion"]))

    timer = threading.Timer(0.5, create)
    timer.start()
    started = time.monotonic()
    status, body = rest(stack, "GET", f"{base}?watch=1&allowWatchBookmarks=true&timeoutSeconds=5&{query}")
    elapsed = time.monotonic() - started
    timer.join()
    assert status == 200 and elapsed >= 4.5
    return [json.loads(line) for line in body.splitlines()], created[0]


def test_wlist_pre_timeout_bookmark_shared(stack: Stack, namespace: str) -> None:
    """A watch from a resourceVersion (shared upstream) gets a bookmark 2 s before its deadline, at least at
    the change it saw (cache_watcher.go nextBookmarkTime), long before any periodic one."""
    base = _base(stack, namespace)
    rv = json.loads(rest(stack, "GET", base)[1])["metadata"]["resourceVersion"]
    events, two = _watch_while_creating(stack, base, f"resourceVersion={rv}")
    events = [e for e in events if e["object"]["metadata"].get("name") != "kube-root-ca.crt"]
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK"]
    assert int(events[1]["object"]["metadata"]["resourceVersion"]) >= two


def test_wlist_pre_timeout_bookmark_own(stack: Stack, namespace: str) -> None:
    """The same for a watch with initial events (a storage watch of its own): after the initial-events-end
    bookmark and the change, the pre-timeout bookmark."""
    base = _base(stack, namespace)
    events, two = _watch_while_creating(stack, base, "sendInitialEvents=true&resourceVersionMatch=NotOlderThan")
    # the namespace's kube-root-ca.crt comes whenever its publisher gets to it (seconds late on a loaded machine)
    events = [e for e in events if e["object"]["metadata"].get("name") != "kube-root-ca.crt"]
    names = [(e["type"], e["object"]["metadata"].get("name")) for e in events if e["type"] != "BOOKMARK"]
    assert [n for _, n in names] == ["one", "two"]
    assert [e["type"] for e in events][-1] == "BOOKMARK"
    last = events[-1]["object"]["metadata"]
    assert int(last["resourceVersion"]) >= two and "annotations" not in last


def test_wlist_negative_timeout_ends_at_once(stack: Stack, namespace: str) -> None:
    """timeoutSeconds=-1: ListResource's context deadline is already past and serveWatch's timer fires at once:
    an empty 200, not a watch that never ends."""
    base = _base(stack, namespace)
    started = time.monotonic()
    status, body = rest(stack, "GET", f"{base}?watch=1&resourceVersion=0&timeoutSeconds=-1")
    elapsed = time.monotonic() - started
    assert (status, body) == (200, b"")
    assert elapsed < 5
