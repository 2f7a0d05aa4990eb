"""kapi.nodeidentity: who a node is (kube's NodeIdentity); references() is covered by tests/authz/test_node.py."""

from __future__ import annotations

import pytest

from kapi.attributes import UserInfo
from kapi.nodeidentity import node_identity


@pytest.mark.parametrize(("user", "expected"), [
    (UserInfo("system:node:n1", "", ("system:nodes",)), ("n1", True)),
    (UserInfo("system:node:n1", "", ()), ("", False)),
    (UserInfo("alice", "", ("system:nodes",)), ("", False)),
])
def test_node_identity(user: UserInfo, expected: tuple[str, bool]) -> None:
    assert node_identity(user) == expected
