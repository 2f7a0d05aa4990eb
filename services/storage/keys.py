"""etcd key layout and list continue tokens.

Keys follow kube-apiserver's layout under ``--etcd-prefix`` (default
``/registry``): ``<prefix>/<group>/<resource>/<namespace>/<name>``, without the
group segment for the core group and without the namespace segment for
cluster-scoped objects. A collection prefix always ends with "/", so the
namespace "demo" never matches "demo2".

Continue tokens are kube's (k8s.io/apiserver pkg/storage/continue.go):
base64url (no padding) of ``{"v":"meta.k8s.io/v1","rv":<revision>,"start":"<key after the list prefix>"}``;
``rv`` -1 asks for an inconsistent continuation at the latest revision.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
from dataclasses import dataclass

from kapi import errors, jsonutil
from kapi.resources import REGISTRY

# Named groups of the built-in table: a first key segment that is one of these (or has a dot, as every CRD
# group has) is a group, anything else a core resource.
_BUILTIN_GROUPS = frozenset(r.group for r in REGISTRY.static if r.group)

CONTINUE_VERSION = "meta.k8s.io/v1"


@dataclass(frozen=True)
class ObjectKey:
    """Which collection (``name`` "") or object: group ("" = core), plural resource, namespace, name."""

    group: str
    resource: str
    namespace: str = ""
    name: str = ""


def _check_segment(what: str, value: str) -> None:
    if "/" in value or value in (".", "..") or "\x00" in value:
        raise errors.bad_request(f"invalid {what} {value!r}: may not contain '/' or be '.' or '..'")


class KeySpace:
    """Builds etcd keys (bytes) under ``prefix`` (e.g. "/registry")."""

    def __init__(self, prefix: str = "/registry"):
        prefix = "/" + prefix.strip("/") if prefix.strip("/") else ""
        self.prefix = prefix

    def collection(self, key: ObjectKey) -> bytes:
        """``<prefix>/[<group>/]<resource>/[<namespace>/]``; raises 400 for an empty resource or a bad segment."""
        if not key.resource:
            raise errors.bad_request("a resource is required")
        for what, value in (("group", key.group), ("resource", key.resource), ("namespace", key.namespace)):
            _check_segment(what, value)
        parts = [self.prefix]
        if key.group:
            parts.append(key.group)
        parts.append(key.resource)
        if key.namespace:
            parts.append(key.namespace)
        return ("/".join(parts) + "/").encode()

    def type_of(self, key: bytes) -> str:
        """kube's group-resource string of an etcd key or key prefix under the prefix (``pods``,
        ``deployments.apps``; the ``type`` label of ``etcd_request_duration_seconds``); "" for a key outside."""
        head = self.prefix.encode() + b"/"
        if not key.startswith(head):
            return ""
        parts = key[len(head):].split(b"/", 2)
        first = parts[0].decode(errors="replace")
        if len(parts) > 1 and ("." in first or first in _BUILTIN_GROUPS):
            return f"{parts[1].decode(errors='replace')}.{first}"
        return first

    def object(self, key: ObjectKey) -> bytes:
        """The key of one object; raises 400 if ``key.name`` is empty or contains '/'."""
        if not key.name:
            raise errors.bad_request("resource name may not be empty")
        _check_segment("name", key.name)
        return self.collection(key) + key.name.encode()


def encode_continue(next_key: bytes, list_prefix: bytes, revision: int) -> str:
    """The continue token that resumes a list of ``list_prefix`` at ``next_key`` at ``revision``."""
    start = next_key[len(list_prefix):] if next_key.startswith(list_prefix) else next_key
    body = jsonutil.dumps({"v": CONTINUE_VERSION, "rv": revision, "start": start.decode("utf-8", "surrogateescape")})
    return base64.urlsafe_b64encode(body).rstrip(b"=").decode()


def decode_continue(token: str, list_prefix: bytes) -> tuple[bytes, int]:
    """(start key, revision) of a continue token; revision -1 = continue at the latest revision.

    Raises 400 BadRequest ``invalid continue token: ...`` for anything malformed
    (storage.DecodeContinue), including a start key that would leave ``list_prefix``.
    """
    prefix = "invalid continue token: continue key is not valid: "
    try:
        raw = base64.b64decode(token.replace("-", "+").replace("_", "/") + "=" * (-len(token) % 4), validate=True)
    except (binascii.Error, ValueError):  # Go's base64 error names the first bad byte
        bad = next((i for i, c in enumerate(token) if not (c.isascii() and (c.isalnum() or c in "-_=+/"))),
                   len(token))
        raise errors.bad_request(f"{prefix}illegal base64 data at input byte {bad}") from None
    try:
        body = jsonutil.loads(raw)
    except ValueError as exc:
        if not raw:
            raise errors.bad_request(prefix + "unexpected end of JSON input") from None
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as bad_utf8:  # Go's scanner quotes the first bad byte as the rune of that value
            byte = raw[bad_utf8.start]
            char = f"\\u{byte:04x}" if byte < 0xA1 or byte == 0xAD else chr(byte)
            raise errors.bad_request(f"{prefix}invalid character '{char}' looking for beginning of value") from None
        raise errors.bad_request(prefix + jsonutil.syntax_error(raw, exc)) from None
    if not isinstance(body, dict) or body.get("v") != CONTINUE_VERSION:
        raise errors.bad_request(
            "invalid continue token: continue key is not valid: server does not recognize this encoded key")
    rv, start = body.get("rv"), body.get("start")
    if not isinstance(rv, int) or isinstance(rv, bool) or rv == 0 or rv < -1:
        raise errors.bad_request(
            "invalid continue token: continue key is not valid: incorrect encoded start resourceVersion "
            "(version meta.k8s.io/v1)")
    if not isinstance(start, str) or not start:
        raise errors.bad_request("invalid continue token: continue key is not valid: encoded start key empty")
    rooted = start if start.startswith("/") else "/" + start
    if posixpath.normpath(rooted) != rooted or rooted.startswith("//"):
        raise errors.bad_request("invalid continue token: continue key is not valid")
    return list_prefix + rooted[1:].encode("utf-8", "surrogateescape"), rv
