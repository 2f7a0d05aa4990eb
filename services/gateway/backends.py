"""The gateway's gRPC clients: authn (with a short-lived result cache), authz, admission, storage.

Channels are persistent and shared by all requests of a process; each
address flag may list several replicas (round robin). Every call carries a
deadline in seconds. Failures come back as :class:`kapi.errors.StatusError`
(authn/authz unreachable -> 503: fail closed, DESIGN.md section 4).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from kapi import grpcutil
from kapi.attributes import Attributes, UserInfo
from kapi_proto.kapi.admission.v1 import admission_pb2, admission_pb2_grpc
from kapi_proto.kapi.authn.v1 import authn_pb2, authn_pb2_grpc
from kapi_proto.kapi.authz.v1 import authz_pb2, authz_pb2_grpc
from kapi_proto.kapi.storage.v1 import storage_pb2_grpc

RPC_TIMEOUT = 10.0  # seconds, for calls not bounded by a request timeout


@dataclass(frozen=True)
class Credentials:
    """What a request presents: Authorization header, PEM client chain (direct TLS), trusted XFCC value."""

    authorization: str = ""
    client_certificate_chain: str = ""
    forwarded_client_cert: str = ""


class AuthnClient:
    """Authenticate requests via the authn service, caching answers for their TTL (max 10 s, 10k entries)."""

    def __init__(self, channel: object, max_entries: int = 10_000, clock: Any = time):
        self._stub = authn_pb2_grpc.AuthenticationStub(channel)
        self._cache: OrderedDict[Credentials, tuple[float, UserInfo]] = OrderedDict()
        self._max = max_entries
        self._clock = clock

    async def authenticate(self, creds: Credentials, timeout: float = RPC_TIMEOUT) -> UserInfo:
        """The user behind ``creds``; raises 401 for bad credentials, 503 if authn is unreachable."""
        now = self._clock.monotonic()
        hit = self._cache.get(creds)
        if hit is not None and hit[0] > now:
            return hit[1]
        reply = await grpcutil.call("authentication", self._stub.Authenticate, authn_pb2.AuthenticateRequest(
            authorization=creds.authorization, client_certificate_chain=creds.client_certificate_chain,
            forwarded_client_cert=creds.forwarded_client_cert), timeout=timeout)
        user = UserInfo.from_proto(reply.user)  # type: ignore[attr-defined]
        ttl = min(int(reply.cache_ttl_seconds), 10)  # type: ignore[attr-defined]
        if ttl > 0:
            self._cache[creds] = (now + ttl, user)
            self._cache.move_to_end(creds)
            while len(self._cache) > self._max:
                self._cache.popitem(last=False)
        return user


class AuthzClient:
    """Ask the authz service for a decision (Allow / Deny / NoOpinion)."""

    def __init__(self, channel: object):
        self._stub = authz_pb2_grpc.AuthorizationStub(channel)

    async def authorize(self, attrs: Attributes, timeout: float = RPC_TIMEOUT) -> tuple[bool, str]:
        """(allowed, reason). Raises 503 when authz is unreachable (fail closed)."""
        reply = await grpcutil.call("authorization", self._stub.Authorize,
                                    authz_pb2.AuthorizeRequest(attributes=attrs.to_proto()), timeout=timeout)
        return reply.decision == authz_pb2.DECISION_ALLOW, reply.reason  # type: ignore[attr-defined]


class AdmissionClient:
    """Run the admission chain for one write."""

    def __init__(self, channel: object):
        self._stub = admission_pb2_grpc.AdmissionStub(channel)

    async def admit(self, operation: str, attrs: Attributes, kind: str, obj: bytes, old: bytes, dry_run: bool,
                    field_validation: str, timeout: float = RPC_TIMEOUT) -> tuple[bytes, list[str]]:
        """(final object JSON, warnings); raises the refusal's StatusError, 503 if admission is unreachable."""
        reply = await grpcutil.call("admission", self._stub.Admit, admission_pb2.AdmitRequest(
            operation=operation, attributes=attrs.to_proto(), kind=kind, object=obj, old_object=old,
            dry_run=dry_run, field_validation=field_validation), timeout=timeout)
        return reply.object, list(reply.warnings)  # type: ignore[attr-defined]


def storage_stub(channel: object) -> storage_pb2_grpc.StorageStub:
    """A Storage stub over ``channel``."""
    return storage_pb2_grpc.StorageStub(channel)

