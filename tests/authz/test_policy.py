"""The subject-indexed policy index: events, re-lists, revisions, and equivalence with a full scan."""

from __future__ import annotations

import random

from kapi.attributes import UserInfo
from services.authz.policy import PolicyIndex
from services.authz.rbac import Binding, applies_to

from .objects import binding, role, rule, subject


def synced_index() -> PolicyIndex:
    index = PolicyIndex()
    for resource in ("roles", "clusterroles", "rolebindings", "clusterrolebindings"):
        index.replace(resource, [], 5)
    return index


ALICE = UserInfo("alice", "", ("dev",))


def names(pairs: list) -> list[str]:
    return [b.name for b, _ in pairs]


def test_events_update_the_index_and_revision() -> None:
    index = synced_index()
    assert index.synced and index.revision == 5
    index.apply("clusterrolebindings", "ADDED", binding("b1", "ClusterRole", "r", [subject("User", "alice")]), 7)
    index.apply("rolebindings", "ADDED", binding("b2", "Role", "r", [subject("Group", "dev")], namespace="ns"), 8)
    assert names(index.cluster_role_bindings_for(ALICE)) == ["b1"]
    assert names(index.role_bindings_for(ALICE, "ns")) == ["b2"]
    assert index.role_bindings_for(ALICE, "other") == []
    assert index.revision == 8
    # MODIFIED moves the grant to another subject.
    index.apply("clusterrolebindings", "MODIFIED", binding("b1", "ClusterRole", "r", [subject("User", "bob")]), 9)
    assert index.cluster_role_bindings_for(ALICE) == []
    assert names(index.cluster_role_bindings_for(UserInfo("bob"))) == ["b1"]
    # DELETED removes it; BOOKMARK changes nothing, not even the revision.
    index.apply("rolebindings", "DELETED", binding("b2", "Role", "r", [], namespace="ns"), 10)
    assert index.role_bindings_for(ALICE, "ns") == []
    index.apply("rolebindings", "BOOKMARK", {"metadata": {"resourceVersion": "50"}}, 50)
    assert index.revision == 10
    # Roles.
    index.apply("roles", "ADDED", role("r", [rule(["get"], [""], ["pods"])], namespace="ns"), 11)
    index.apply("clusterroles", "ADDED", role("r", [rule(["list"], [""], ["pods"])]), 12)
    assert index.role("ns", "r") is not None and index.cluster_role("r") is not None
    assert index.role("other", "r") is None
    index.apply("roles", "DELETED", role("r", [], namespace="ns"), 13)
    assert index.role("ns", "r") is None
    assert index.revision == 13


def test_replace_drops_objects_missing_from_the_new_list() -> None:
    index = synced_index()
    index.apply("clusterrolebindings", "ADDED", binding("old", "ClusterRole", "r", [subject("User", "alice")]), 6)
    index.replace("clusterrolebindings", [binding("new", "ClusterRole", "r", [subject("Group", "dev")])], 20)
    assert names(index.cluster_role_bindings_for(ALICE)) == ["new"]
    assert index.revision == 20


def test_malformed_objects_are_ignored() -> None:
    index = synced_index()
    index.apply("clusterrolebindings", "ADDED", {"metadata": {"name": "x"}}, 6)  # no roleRef
    index.apply("clusterroles", "ADDED", {"metadata": {}}, 7)  # no name
    index.apply("rolebindings", "ADDED", {"metadata": {"name": "y", "namespace": "n"}, "roleRef": {"name": "r"},
                                          "subjects": "not-a-list"}, 8)
    assert index.cluster_role_bindings_for(ALICE) == []
    assert [b.name for b in index.bindings()] == ["y"]


def test_first_matching_subject_is_reported() -> None:
    index = synced_index()
    index.apply("clusterrolebindings", "ADDED", binding("b", "ClusterRole", "r", [
        subject("Group", "other"), subject("Group", "dev"), subject("User", "alice")]), 6)
    [(_, found)] = index.cluster_role_bindings_for(ALICE)
    assert (found.kind, found.name) == ("Group", "dev")


def test_index_agrees_with_a_full_scan() -> None:
    """Random bindings and users: the index returns exactly the bindings kube's appliesTo would visit."""
    rng = random.Random(7)
    namespaces = ["a", "b", ""]
    users = ["u1", "u2", "system:serviceaccount:a:sa1", "system:serviceaccount:b:sa1", "system:serviceaccount:a:sa2"]
    groups = ["g1", "g2", "system:authenticated"]

    def random_subject() -> dict:
        kind = rng.choice(["User", "Group", "ServiceAccount", "Bogus"])
        if kind == "User":
            return subject("User", rng.choice(users))
        if kind == "Group":
            return subject("Group", rng.choice(groups))
        if kind == "ServiceAccount":
            return subject("ServiceAccount", rng.choice(["sa1", "sa2"]), rng.choice(namespaces))
        return subject("Bogus", "u1")

    index = synced_index()
    live: dict[tuple[str, str], dict] = {}
    for step in range(600):
        ns = rng.choice(namespaces)
        name = f"b{rng.randrange(40)}"
        resource = "rolebindings" if ns else "clusterrolebindings"
        if rng.random() < 0.25 and (ns, name) in live:
            index.apply(resource, "DELETED", live.pop((ns, name)), step + 10)
            continue
        obj = binding(name, "ClusterRole", "r", [random_subject() for _ in range(rng.randrange(4))], namespace=ns)
        live[(ns, name)] = obj
        index.apply(resource, "MODIFIED", obj, step + 10)

    all_bindings = [Binding.from_json(o) for o in live.values()]
    matches = 0
    for username in users:
        for k in range(len(groups) + 1):
            user = UserInfo(username, "", tuple(groups[:k]))
            expected_crbs = []
            for b in sorted((b for b in all_bindings if not b.namespace), key=lambda b: b.name):
                first = next((s for s in b.subjects if applies_to(user, s, "")), None)
                if first is not None:
                    expected_crbs.append((b.name, first))
            got = [(b.name, s) for b, s in index.cluster_role_bindings_for(user)]
            assert got == expected_crbs, (user, got, expected_crbs)
            matches += len(got)
            for ns in ("a", "b"):
                expected = []
                for b in sorted((b for b in all_bindings if b.namespace == ns), key=lambda b: b.name):
                    first = next((s for s in b.subjects if applies_to(user, s, ns)), None)
                    if first is not None:
                        expected.append((b.name, first))
                got = [(b.name, s) for b, s in index.role_bindings_for(user, ns)]
                assert got == expected, (user, ns, got, expected)
                matches += len(got)
    assert matches > 50
