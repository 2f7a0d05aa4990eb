"""Request data resolved once at the gateway and carried in proto fields.

:class:`UserInfo` follows k8s.io/apiserver ``user.Info``; :class:`Attributes`
follows ``authorizer.Attributes`` (verb, resource, subresource, namespace,
name, API group and version, path, resource vs non-resource). Services never
re-parse URLs: they read these.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from kapi_proto.kapi.common.v1 import common_pb2

# Well-known names (k8s.io/apiserver pkg/authentication/user).
ANONYMOUS = "system:anonymous"
ALL_AUTHENTICATED = "system:authenticated"
ALL_UNAUTHENTICATED = "system:unauthenticated"
SYSTEM_PRIVILEGED_GROUP = "system:masters"
APISERVER_USER = "system:apiserver"

MUTATING_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"


def split_service_account(username: str) -> tuple[str, str] | None:
    """(namespace, name) of a ``system:serviceaccount:<ns>:<name>`` user name, or None for any other name
    (k8s.io/apiserver pkg/authentication/serviceaccount SplitUsername)."""
    if not username.startswith(SERVICE_ACCOUNT_PREFIX):
        return None
    namespace, sep, name = username[len(SERVICE_ACCOUNT_PREFIX):].partition(":")
    if not sep or not namespace or not name or ":" in name:
        return None
    return namespace, name


@dataclass(frozen=True)
class UserInfo:
    """An authenticated user: name, uid, groups and extra (key -> values)."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def to_proto(self) -> common_pb2.UserInfo:
        """Encode as ``kapi.common.v1.UserInfo``."""
        msg = common_pb2.UserInfo(username=self.username, uid=self.uid, groups=list(self.groups))
        for key, values in self.extra:
            msg.extra[key].values.extend(values)
        return msg

    @classmethod
    def from_proto(cls, msg: common_pb2.UserInfo) -> UserInfo:
        """Decode from ``kapi.common.v1.UserInfo``."""
        extra = tuple(sorted((k, tuple(v.values)) for k, v in msg.extra.items()))
        return cls(msg.username, msg.uid, tuple(msg.groups), extra)


# The user of kube-apiserver's loopback client, which its registry calls itself through (pods/eviction's
# PodDisruptionBudget UpdateStatus): k8s.io/apiserver server/config.go AuthorizeClientBearerToken maps the loopback
# token to system:apiserver, a uid made once per server process, groups system:authenticated and system:masters.
LOOPBACK_USER = UserInfo(APISERVER_USER, str(uuid.uuid4()), (ALL_AUTHENTICATED, SYSTEM_PRIVILEGED_GROUP))


@dataclass(frozen=True)
class Attributes:
    """Authorization attributes of one request (authorizer.AttributesRecord)."""

    user: UserInfo
    verb: str
    resource_request: bool
    path: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    extra_fields: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def mutating(self) -> bool:
        """True for verbs that change state (create, update, patch, delete, deletecollection)."""
        return self.verb in MUTATING_VERBS

    def to_proto(self) -> common_pb2.RequestAttributes:
        """Encode as ``kapi.common.v1.RequestAttributes``."""
        return common_pb2.RequestAttributes(
            user=self.user.to_proto(), verb=self.verb, resource_request=self.resource_request,
            api_group=self.api_group, api_version=self.api_version, resource=self.resource,
            subresource=self.subresource, namespace=self.namespace, name=self.name, path=self.path,
        )

    @classmethod
    def from_proto(cls, msg: common_pb2.RequestAttributes) -> Attributes:
        """Decode from ``kapi.common.v1.RequestAttributes``."""
        return cls(
            user=UserInfo.from_proto(msg.user), verb=msg.verb, resource_request=msg.resource_request,
            path=msg.path, api_group=msg.api_group, api_version=msg.api_version, resource=msg.resource,
            subresource=msg.subresource, namespace=msg.namespace, name=msg.name,
        )


# Serialized RequestAttributes -> the Attributes they decode to. A gateway's requests repeat the same user and
# request over and over; decoding one costs ~15 us, serializing the parsed message for the key ~0.5 us.
# Attributes are immutable and from_proto a pure function of the message (deterministic serialization: equal
# bytes, equal message), so a shared answer is the same answer. Bounded: cleared when full.
_DECODED: dict[bytes, Attributes] = {}
_DECODED_MAX = 4096


def decode(msg: common_pb2.RequestAttributes) -> Attributes:
    """``Attributes.from_proto(msg)``, remembered per distinct message (flowcontrol's Starts, admission's Admits,
    authz's Authorizes: every service that decodes a request's attributes per call)."""
    key = msg.SerializeToString(deterministic=True)
    attrs = _DECODED.get(key)
    if attrs is None:
        attrs = Attributes.from_proto(msg)
        if len(_DECODED) >= _DECODED_MAX:
            _DECODED.clear()
        _DECODED[key] = attrs
    return attrs
