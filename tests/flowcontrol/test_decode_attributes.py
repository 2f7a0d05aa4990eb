"""kapi.attributes.decode: a request's attributes decoded once per distinct message, the same answers as
Attributes.from_proto (flowcontrol's Starts, admission's Admits, authz's Authorizes)."""

from __future__ import annotations

from kapi import attributes as servicer
from kapi.attributes import Attributes, UserInfo


def test_decoded_attributes_equal_from_proto_and_distinct_messages_stay_distinct() -> None:
    alice = UserInfo("alice", "u1", ("dev", "system:authenticated"), (("team", ("a", "b")), ("zone", ("z",))))
    bob = UserInfo("bob", "u2", ("system:authenticated",))
    cases = [
        Attributes(alice, "get", True, "/api/v1/namespaces/a/configmaps/x", "", "v1", "configmaps", "", "a", "x"),
        Attributes(alice, "get", True, "/api/v1/namespaces/b/configmaps/x", "", "v1", "configmaps", "", "b", "x"),
        Attributes(bob, "get", True, "/api/v1/namespaces/a/configmaps/x", "", "v1", "configmaps", "", "a", "x"),
        Attributes(bob, "list", True, "/apis/apps/v1/deployments", "apps", "v1", "deployments"),
        Attributes(bob, "get", False, "/healthz"),
    ]
    for _ in range(2):
        for attrs in cases:
            msg = attrs.to_proto()
            decoded = servicer.decode(msg)
            assert decoded == Attributes.from_proto(msg) == attrs
            assert decoded.user == attrs.user  # extra and groups included
            assert servicer.decode(attrs.to_proto()) is decoded  # remembered
    # the extra map filled in another order decodes to the same (sorted) attributes
    msg = cases[0].to_proto()
    msg.user.ClearField("extra")
    msg.user.extra["zone"].values.extend(["z"])
    msg.user.extra["team"].values.extend(["a", "b"])
    assert servicer.decode(msg) == cases[0]


def test_the_memory_is_bounded() -> None:
    for i in range(servicer._DECODED_MAX + 10):
        servicer.decode(Attributes(UserInfo(f"user-{i}"), "get", False, "/version").to_proto())
        assert len(servicer._DECODED) <= servicer._DECODED_MAX
