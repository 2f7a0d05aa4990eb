"""resourceVersion text as an etcd revision: the one parser the gateway and storage share.

kube's ``APIObjectVersioner.ParseResourceVersion``
(``staging/src/k8s.io/apiserver/pkg/storage/api_object_versioner.go``) reads a resourceVersion with
``strconv.ParseUint(s, 10, 64)``: decimal ASCII digits only, no sign, no spaces. etcd revisions are int64,
so a number past ``2^63 - 1`` can name no state of the store; kapi treats it as malformed. Each caller raises
its own message (kube's differ by path: object updates, list options, watch), so this module only decides.
"""

from __future__ import annotations

#: etcd's largest revision (int64), and so the largest resourceVersion any object or list can carry.
MAX_REVISION = (1 << 63) - 1


def as_revision(text: str) -> int | None:
    """``text`` as a revision (0 .. :data:`MAX_REVISION`), or None when it is not decimal ASCII digits within
    int64. ``""`` is None too; callers that mean "unset" check for it first."""
    if text.isascii() and text.isdigit():
        value = int(text)
        if value <= MAX_REVISION:
            return value
    return None


def out_of_range(text: str) -> bool:
    """True when ``text`` is decimal digits but past int64 (Go's ``value out of range``, not ``invalid syntax``)."""
    return text.isascii() and text.isdigit() and as_revision(text) is None
