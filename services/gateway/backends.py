"""The gateway's gRPC clients: authn (with a short-lived result cache), authz, admission, storage.

Channels are persistent and shared by all requests of a process; each
address flag may list several replicas (round robin). Every call carries a
deadline in seconds. Failures come back as :class:`kapi.errors.StatusError`
(authn/authz unreachable -> 503: fail closed, docs/architecture.md, "Failure policy").
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import grpc

from kapi import errors, grpcmux, grpcutil
from kapi.attributes import Attributes, UserInfo
from kapi_proto.kapi.admission.v1 import admission_pb2, admission_pb2_grpc
from kapi_proto.kapi.authn.v1 import authn_pb2, authn_pb2_grpc
from kapi_proto.kapi.authz.v1 import authz_pb2, authz_pb2_grpc

if TYPE_CHECKING:  # the handler chain's view of its peers; none of these import this module's users
    from services.gateway.aggregation import Aggregator
    from services.gateway.audit import Auditor
    from services.gateway.dynamic import CustomResourceRegistry
    from services.gateway.flowcontrol import FlowControlClient
    from services.gateway.healthz import StorageHealth
    from services.gateway.registry.ipallocator import ServiceAllocations

log = logging.getLogger(__name__)

RPC_TIMEOUT = 10.0  # seconds, for calls not bounded by a request timeout


@dataclass(frozen=True)
class Credentials:
    """What a request presents: Authorization header, PEM client chain (direct TLS), trusted XFCC value."""

    authorization: str = ""
    client_certificate_chain: str = ""
    forwarded_client_cert: str = ""


class AuthnClient:
    """Authenticate requests via the authn service, caching positive and negative answers
    (docs/architecture.md, "The request path").

    Entries are keyed by a SHA-256 digest of the credentials (no raw token
    is kept as a key) and hold either the user (for the TTL authn gives,
    at most ``max_ttl`` seconds; authn never gives one past the token's
    expiry) or the 401 refusal (for ``negative_ttl`` seconds, like
    kube-apiserver's token failure cache). Unavailability (503) is never
    cached. At most ``max_entries`` entries are kept (least recently used
    dropped). ``clock`` has ``monotonic()`` in seconds, injectable for tests.
    The issuer discovery documents are fetched once and kept
    ``DISCOVERY_TTL`` seconds.
    """

    DISCOVERY_TTL = 60.0

    def __init__(self, channel: object, max_entries: int = 10_000, clock: Any = time, max_ttl: float = 10.0,
                 negative_ttl: float = 2.0):
        self._stub = authn_pb2_grpc.AuthenticationStub(channel)
        self._cache: OrderedDict[bytes, tuple[float, UserInfo | errors.StatusError]] = OrderedDict()
        self._max = max_entries
        self._clock = clock
        self._max_ttl = max_ttl
        self._negative_ttl = negative_ttl
        self._discovery: tuple[float, Any] | None = None
        self.hits = 0
        self.misses = 0

    @staticmethod
    def _key(creds: Credentials) -> bytes:
        digest = hashlib.sha256()
        for part in (creds.authorization, creds.client_certificate_chain, creds.forwarded_client_cert):
            data = part.encode()
            digest.update(len(data).to_bytes(8, "big"))
            digest.update(data)
        return digest.digest()

    def _remember(self, key: bytes, expires: float, value: UserInfo | errors.StatusError) -> None:
        self._cache[key] = (expires, value)
        self._cache.move_to_end(key)
        while len(self._cache) > self._max:
            self._cache.popitem(last=False)

    async def authenticate(self, creds: Credentials, timeout: float = RPC_TIMEOUT) -> UserInfo:
        """The user behind ``creds``; raises 401 for bad credentials, 503 if authn is unreachable."""
        now = self._clock.monotonic()
        key = self._key(creds)
        hit = self._cache.get(key)
        if hit is not None:
            if hit[0] > now:
                self.hits += 1
                if isinstance(hit[1], errors.StatusError):
                    raise hit[1]
                return hit[1]
            del self._cache[key]
        self.misses += 1
        try:
            reply: Any = await grpcutil.call("authentication", self._stub.Authenticate, authn_pb2.AuthenticateRequest(
                authorization=creds.authorization, client_certificate_chain=creds.client_certificate_chain,
                forwarded_client_cert=creds.forwarded_client_cert), timeout=timeout)
        except errors.StatusError as err:
            if err.code == 401 and self._negative_ttl > 0:
                self._remember(key, now + self._negative_ttl, err)
            raise
        user = UserInfo.from_proto(reply.user)
        ttl = min(float(reply.cache_ttl_seconds), self._max_ttl)
        if ttl > 0:
            self._remember(key, now + ttl, user)
        return user

    async def review_token(self, token: str, audiences: tuple[str, ...] = (), timeout: float = RPC_TIMEOUT) -> Any:
        """The ``ReviewTokenResponse`` for ``token`` (TokenReview; never cached); 503 if authn is unreachable."""
        return await grpcutil.call("authentication", self._stub.ReviewToken, authn_pb2.ReviewTokenRequest(
            token=token, audiences=list(audiences)), timeout=timeout)

    async def issue_service_account_token(self, request: authn_pb2.IssueServiceAccountTokenRequest,
                                          timeout: float = RPC_TIMEOUT) -> Any:
        """The ``IssueServiceAccountTokenResponse`` (TokenRequest); raises authn's 422/503 Status."""
        return await grpcutil.call("authentication", self._stub.IssueServiceAccountToken, request, timeout=timeout)

    async def issuer_discovery(self, timeout: float = RPC_TIMEOUT) -> Any:
        """The ``GetIssuerDiscoveryResponse`` (openid-configuration and JWKS JSON), cached ``DISCOVERY_TTL``."""
        now = self._clock.monotonic()
        if self._discovery is not None and self._discovery[0] > now:
            return self._discovery[1]
        reply = await grpcutil.call("authentication", self._stub.GetIssuerDiscovery,
                                    authn_pb2.GetIssuerDiscoveryRequest(), timeout=timeout)
        self._discovery = (now + self.DISCOVERY_TTL, reply)
        return reply


ANY_NAME = "\x00"  # not a valid object name: the key of a decision authz said holds for every name


def _any_name(attrs: Attributes) -> Attributes:
    """``attrs`` for any object name: name ANY_NAME and no path (a resource request's path only repeats it)."""
    return dataclasses.replace(attrs, name=ANY_NAME, path="")


class AuthzClient:
    """Ask the authz service for decisions, caching them while the policy revision is unchanged
    (docs/architecture.md, "The request path").

    One server stream (``WatchPolicyRevision``, started on first use)
    tells the client the authz policy revision. A decision is cached, keyed
    by the whole :class:`Attributes` (user, groups, extra, verb, resource,
    namespace, name, path ...), only when it was made at the revision the
    stream last reported and authz did not mark it ``no_cache`` (Node,
    Webhook). A decision authz marks ``name_independent`` (no RBAC
    resourceNames rule could have matched another name) is also kept under
    the request's name-free key and answers the same request for any other
    name: an update, patch or delete of many objects asks authz once. Any
    new revision clears the cache; while the stream is down nothing is
    cached or served from the cache. At most ``max_entries``
    decisions are kept (least recently used dropped). ``backoff`` is the
    stream reconnect delay in seconds.
    """

    def __init__(self, channel: object, max_entries: int = 10_000, backoff: float = 0.5):
        self._stub = authz_pb2_grpc.AuthorizationStub(channel)
        self._cache: OrderedDict[Attributes, tuple[bool, str]] = OrderedDict()
        self._max = max_entries
        self._backoff = backoff
        self._revision: int | None = None  # None while the revision stream is down
        self._task: asyncio.Task[None] | None = None
        self.hits = 0
        self.misses = 0

    @property
    def revision(self) -> int | None:
        """The policy revision last streamed by authz, or None while the stream is down."""
        return self._revision

    def start(self) -> None:
        """Start following the policy revision (idempotent; needs a running event loop)."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._follow(), name="authz-policy-revision")

    async def close(self) -> None:
        """Stop following the revision and drop the cache."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        self._set_revision(None)

    def _set_revision(self, revision: int | None) -> None:
        if revision != self._revision or revision is None:
            self._cache.clear()
        self._revision = revision

    async def _follow(self) -> None:
        while True:
            try:
                async for message in self._stub.WatchPolicyRevision(authz_pb2.WatchPolicyRevisionRequest()):
                    self._set_revision(int(message.revision))  # type: ignore[attr-defined]
                log.info("authz policy revision stream ended; reconnecting")
            except grpc.aio.UsageError:  # the channel was closed: the gateway is stopping
                self._set_revision(None)
                return
            except grpc.RpcError as exc:
                log.info("authz policy revision stream broke (%s); decisions are not cached until it is back",
                         exc.code() if hasattr(exc, "code") else exc)
            finally:
                self._set_revision(None)
            await asyncio.sleep(self._backoff)

    async def authorize(self, attrs: Attributes, timeout: float = RPC_TIMEOUT) -> tuple[bool, str]:
        """(allowed, reason). Raises 503 when authz is unreachable (fail closed)."""
        self.start()
        revision = self._revision
        if revision is not None:
            hit = self._cache.get(attrs)
            key = attrs
            if hit is None and attrs.name:
                key = _any_name(attrs)
                hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                self.hits += 1
                return hit
        self.misses += 1
        reply: Any = await grpcutil.call("authorization", self._stub.Authorize,
                                         authz_pb2.AuthorizeRequest(attributes=attrs.to_proto()), timeout=timeout)
        decision = (reply.decision == authz_pb2.DECISION_ALLOW, reply.reason)
        if revision is not None and not reply.no_cache and reply.policy_revision == revision == self._revision:
            self._cache[_any_name(attrs) if reply.name_independent and attrs.name else attrs] = decision
            if len(self._cache) > self._max:
                self._cache.popitem(last=False)
        return decision

    async def authorize_full(self, attrs: Attributes, timeout: float = RPC_TIMEOUT) -> Any:
        """The uncached ``AuthorizeResponse`` (decision, reason, evaluation_error) for SubjectAccessReviews."""
        return await grpcutil.call("authorization", self._stub.Authorize,
                                   authz_pb2.AuthorizeRequest(attributes=attrs.to_proto()), timeout=timeout)

    async def rules_review(self, user: UserInfo, namespace: str, timeout: float = RPC_TIMEOUT) -> Any:
        """The ``RulesReviewResponse`` of ``user`` in ``namespace`` (SelfSubjectRulesReview)."""
        return await grpcutil.call("authorization", self._stub.RulesReview, authz_pb2.RulesReviewRequest(
            user=user.to_proto(), namespace=namespace), timeout=timeout)

    async def check_escalation(self, attrs: Attributes, obj: bytes, old: bytes = b"",
                               timeout: float = RPC_TIMEOUT) -> None:
        """Return if the RBAC write may proceed; raises authz's 403/404 Status, or 503 if unreachable."""
        await grpcutil.call("authorization", self._stub.CheckEscalation, authz_pb2.CheckEscalationRequest(
            attributes=attrs.to_proto(), object=obj, old_object=old), timeout=timeout)


class AdmissionClient:
    """Run the admission chain for one write: Admit on a Call stream per admission replica (:mod:`kapi.grpcmux`).

    ``channel`` is the round-robin channel to every replica (the unary
    ``Admit``, used while no stream is up); ``streams`` one (address,
    channel) per replica, ``owned`` the channels made for them
    (:meth:`open` builds all three; none: every call unary). A call fails as
    the unary Admit would (the same Status), DEADLINE_EXCEEDED past its
    timeout, UNAVAILABLE (503, not retried) when its stream breaks.
    """

    def __init__(self, channel: object, streams: Sequence[tuple[str, grpc.aio.Channel]] = (),
                 owned: Sequence[grpc.aio.Channel] = ()):
        self._stub = admission_pb2_grpc.AdmissionStub(channel)
        self.mux = grpcmux.Client(grpcmux.ADMISSION, streams, owned)
        self.skip_plugins = False  # AdmitRequest.skip_plugins of every call (:meth:`without_plugins`)

    def without_plugins(self) -> AdmissionClient:
        """This client for the writes kube's registry makes through its own store with
        ``rest.ValidateAllObjectFunc`` / ``ValidateAllObjectUpdateFunc`` (pods/eviction's DisruptionTarget
        condition, ``pkg/registry/core/pod/storage/eviction.go`` addConditionAndDeletePod): each Admit sets
        ``skip_plugins`` (AdmitRequest field 11), so decoding, defaulting, the strategy and validation run and no
        admission plugin, webhook or policy does. Shares this client's channel and streams (start and close
        this one)."""
        twin = copy.copy(self)
        twin.skip_plugins = True
        return twin

    @classmethod
    def open(cls, channel: grpc.aio.Channel, addresses: str, tls: grpcutil.TLSFiles | None,
             streams: bool | None = None) -> AdmissionClient:
        """The gateway's client of ``--admission-address`` ``addresses`` (comma-separated) over ``channel``, with a
        Call stream per address unless ``streams`` is False (:func:`kapi.grpcmux.stream_channels`). Call
        :meth:`start` on the running loop."""
        pairs, owned = grpcmux.stream_channels(channel, addresses, tls, streams)
        return cls(channel, pairs, owned)

    def start(self) -> None:
        """Begin (re)connecting the Call streams in the background (idempotent)."""
        self.mux.start()

    async def close(self) -> None:
        """Stop the streams (outstanding calls fail 503) and close the channels made for them."""
        await self.mux.close()

    async def _admit(self, request: admission_pb2.AdmitRequest, timeout: float | None = None,
                     metadata: Any = None) -> admission_pb2.AdmitResponse:
        return await self.mux.call("admit", self._stub.Admit, request, timeout, metadata)

    async def admit(self, operation: str, attrs: Attributes, kind: str, obj: bytes, old: bytes, dry_run: bool,
                    field_validation: str, timeout: float = RPC_TIMEOUT, patch_type: str = "",
                    patch_value: str = "", options: bytes = b"") -> tuple[bytes, list[str], dict[str, str]]:
        """(final object JSON, warnings, audit annotations); raises the refusal's StatusError (its
        ``audit_annotations`` those gathered before the refusal), 503 if admission is unreachable, 504
        past ``timeout`` seconds. ``patch_type``/``patch_value``: AdmitRequest fields 8 and 9 (a PATCH's);
        ``options``: field 10, the operation's options JSON (registry/store.py ``admission_options``). The
        annotations (AdmitResponse field 3: PodSecurity's ``pod-security.kubernetes.io/...``, webhooks'
        ``<webhook>/<key>``, policies') go on the request's audit events (services/gateway/audit.py)."""
        reply = await grpcutil.call("admission", self._admit, admission_pb2.AdmitRequest(
            operation=operation, attributes=attrs.to_proto(), kind=kind, object=obj, old_object=old,
            dry_run=dry_run, field_validation=field_validation, patch_type=patch_type, patch_value=patch_value,
            options=options, skip_plugins=self.skip_plugins), timeout=timeout)
        return (reply.object, list(reply.warnings),  # type: ignore[attr-defined]
                dict(reply.audit_annotations))  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Config:
    """Gateway settings read from flags: the front proxy's identity and the default request timeout (seconds).

    ``x-forwarded-client-cert`` counts only on a connection whose client
    certificate was issued by one of ``front_proxy_cas``
    (``--requestheader-client-ca-file``, DER certificates) and whose CN is
    in ``front_proxy_names`` (``--requestheader-allowed-names``; empty: any
    CN from those CAs), as kube's request-header authenticator decides.
    """

    front_proxy_names: frozenset[str]
    request_timeout: float
    front_proxy_cas: tuple[bytes, ...] = ()


@dataclass
class Backends:
    """Everything a request handler calls, plus the gateway's lifecycle state."""

    config: Config
    authn: AuthnClient
    authz: AuthzClient
    admission: AdmissionClient
    storage: Any
    flowcontrol: FlowControlClient
    services: ServiceAllocations | None = None  # clusterIP / nodePort allocation (Service writes)
    ready: bool = False
    shutting_down: bool = False
    post_start_hooks: set[str] = field(default_factory=set)  # finished ones (services/gateway/healthz.py)
    storage_health: StorageHealth | None = None  # storage's view of etcd: the etcd checks of /livez, /readyz
    watches: set[Any] = field(default_factory=set)
    watch_fanout: Any = None  # shared storage watches (services/gateway/watchfanout.py), made on first watch
    custom_resources: CustomResourceRegistry | None = None  # CRD-served resources and the CRD controller
    aggregator: Aggregator | None = None  # APIServices: proxying to extension API servers
    audit: Auditor | None = None  # --audit-* flags (services/gateway/audit.py)
