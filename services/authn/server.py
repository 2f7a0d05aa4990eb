"""Wiring of the authentication service: flags -> authenticator chain (+ object sync, token issuer) -> gRPC.

    kapi authn --listen-address 127.0.0.1:0 --client-ca-file ca.crt --storage-address 127.0.0.1:7001 \\
               --token-auth-file tokens.csv --service-account-key-file sa.pub \\
               --service-account-signing-key-file sa.key --anonymous-auth=true

With ``--storage-address`` the service lists and watches ServiceAccounts,
Pods and Secrets (services/authn/objects.py) so service-account tokens of
deleted objects stop working.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import grpc

from kapi import flags, grpcutil
from kapi.duration import parse_duration
from kapi_proto.kapi.authn.v1 import authn_pb2, authn_pb2_grpc
from kapi_proto.kapi.storage.v1 import storage_pb2_grpc
from services.authn import oidc
from services.authn.anonymous import AnonymousAuthenticator
from services.authn.authenticator import Authenticator, TokenAuthenticator
from services.authn.basicauth import BasicAuthAuthenticator
from services.authn.bearer import AudienceAgnostic, BearerTokenAuthenticator
from services.authn.bootstrap import BootstrapTokenAuthenticator
from services.authn.objects import ObjectIndex, ObjectLookup, ObjectSync
from services.authn.serviceaccount import (
    ServiceAccountTokenAuthenticator,
    TokenIssuer,
    discovery_documents,
    load_public_keys,
    load_signing_key,
)
from services.authn.servicer import AuthenticationServicer, Authn
from services.authn.tokenfile import TokenFileAuthenticator
from services.authn.union import AuthenticatedGroupAdder, build
from services.authn.webhook import WebhookTokenAuthenticator, load_config
from services.authn.x509 import X509Authenticator

log = logging.getLogger(__name__)

SERVICE_NAME = authn_pb2.DESCRIPTOR.services_by_name["Authentication"].full_name
GRACE_SECONDS = 2.0


def _list(text: str) -> list[str]:
    return [item.strip() for item in (text or "").split(",") if item.strip()]


def anonymous_allowed(args: argparse.Namespace) -> bool:
    """Whether unauthenticated requests run as ``system:anonymous``: ``--anonymous-auth``, except that an
    ``--authorization-mode`` list naming AlwaysAllow turns it off, so no credential means 401 rather than full
    access (kube-apiserver BuiltInAuthenticationOptions.ApplyAuthorization, which logs the same warning)."""
    if not args.anonymous_auth:
        return False
    modes = {mode.strip() for mode in (getattr(args, "authorization_mode", "") or "").split(",")}
    if "AlwaysAllow" in modes:
        log.warning("AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to "
                    "false. You should use a different authorizer")
        return False
    return True


def build_authn(args: argparse.Namespace, lookup: ObjectLookup | None = None) -> Authn:
    """Everything the flags describe: the request chain (kube-apiserver's order: x509, then bearer tokens, then
    anonymous), the TokenReview chain, the API audiences, the token issuer and its discovery documents.

    ``lookup`` checks that service-account tokens' objects still exist (None: no check).
    Raises OSError or ValueError when a configured file cannot be read or parsed.
    """
    issuers = _list(args.service_account_issuer)
    api_audiences = tuple(_list(args.api_audiences) or issuers)
    token_authenticators: list[TokenAuthenticator] = []
    if args.token_auth_file:
        tokens = TokenFileAuthenticator.from_file(args.token_auth_file)
        log.info("loaded %d tokens from %s", len(tokens), args.token_auth_file)
        token_authenticators.append(AudienceAgnostic(tokens, api_audiences))
    keys = load_public_keys(_list(args.service_account_key_file)) if args.service_account_key_file else []
    issuer = None
    if args.service_account_signing_key_file:
        if not issuers:
            raise ValueError("--service-account-issuer is required with --service-account-signing-key-file")
        signing_key = load_signing_key(args.service_account_signing_key_file)
        issuer = TokenIssuer(signing_key, issuers[0], api_audiences, args.service_account_max_token_expiration)
        if not keys:  # kube: the signing key's public half verifies when no key file is given
            keys = load_public_keys([args.service_account_signing_key_file])
    discovery = None
    if keys and issuers:
        token_authenticators.append(ServiceAccountTokenAuthenticator(keys, issuers, lookup))
        discovery = discovery_documents(issuers[0], keys, args.service_account_jwks_uri)
    if args.enable_bootstrap_token_auth:
        if lookup is None:
            raise ValueError("--enable-bootstrap-token-auth needs --storage-address")
        token_authenticators.append(AudienceAgnostic(BootstrapTokenAuthenticator(lookup), api_audiences))
    for jwt_authenticator in oidc.build(args):
        log.info("JWT issuer %s configured", jwt_authenticator.issuer.url)
        token_authenticators.append(AudienceAgnostic(jwt_authenticator, api_audiences))
    if args.authentication_token_webhook_config_file:
        ttl = parse_duration(args.authentication_token_webhook_cache_ttl)
        token_authenticators.append(WebhookTokenAuthenticator(
            load_config(args.authentication_token_webhook_config_file), api_audiences, cache_ttl=ttl))
    authenticators: list[Authenticator] = []
    if args.client_ca_file:
        authenticators.append(X509Authenticator.from_file(args.client_ca_file))
    if args.basic_auth_file:
        authenticators.append(BasicAuthAuthenticator.from_file(args.basic_auth_file))
    bearer = BearerTokenAuthenticator(token_authenticators) if token_authenticators else None
    # As kube-apiserver: with no token authenticator configured, bearer tokens are not looked at at all.
    if bearer is not None:
        authenticators.append(bearer)
    request = build(authenticators, AnonymousAuthenticator() if anonymous_allowed(args) else None)
    return Authn(request=request, tokens=AuthenticatedGroupAdder(bearer) if bearer else None,
                 api_audiences=api_audiences, issuer=issuer, discovery=discovery)


def build_authenticator(args: argparse.Namespace) -> Authenticator:
    """The request authenticator alone (no object lookup); see :func:`build_authn`."""
    return build_authn(args).request


@dataclass
class AuthnService:
    """A running authn service: server, bound port, object index and background tasks."""

    server: grpc.aio.Server
    port: int
    authn: Authn
    index: ObjectIndex
    sync: ObjectSync | None = None
    channel: grpc.aio.Channel | None = None
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    async def stop(self, grace: float = GRACE_SECONDS) -> None:
        """Stop serving (``grace`` seconds for in-flight RPCs), cancel the sync, close the storage channel."""
        await grpcutil.shutdown(self.server, grace, self.tasks, self.channel)


async def start(args: argparse.Namespace) -> AuthnService:
    """Build and start the service from parsed flags (raises OSError/ValueError on bad configuration)."""
    tls = grpcutil.tls_from_args(args)
    index = ObjectIndex()
    channel = grpcutil.channel(args.storage_address, tls) if args.storage_address else None
    stub = storage_pb2_grpc.StorageStub(channel) if channel is not None else None
    try:
        authn = build_authn(args, ObjectLookup(index, stub) if stub is not None else None)
    except BaseException:
        if channel is not None:
            await channel.close()
        raise
    server, health, port = grpcutil.make_server(
        args.listen_address, tls, allowed_callers=grpcutil.allowed_callers(args), services=[SERVICE_NAME])
    authn_pb2_grpc.add_AuthenticationServicer_to_server(AuthenticationServicer(authn), server)
    service = AuthnService(server, port, authn, index, channel=channel)
    if stub is not None:
        service.sync = ObjectSync(stub, index)
        service.tasks.append(asyncio.create_task(service.sync.run(), name="authn-object-sync"))
    grpcutil.set_serving(health, [SERVICE_NAME])
    await grpcutil.start_serving(server, port, args.port_file)
    log.info("authn serving on port %d", port)
    return service


async def serve(args: argparse.Namespace, stop: asyncio.Event) -> None:
    """Serve until ``stop`` is set, then stop with a short grace period."""
    await grpcutil.serve_until(stop, await start(args), GRACE_SECONDS)


def main(argv: Sequence[str]) -> int:
    """Entry point of ``kapi authn``; returns the exit code (1 on a configuration error)."""
    args = flags.parse(flags.AUTHN, argv)
    grpcutil.configure_logging(args.log_level)
    try:
        build_authn(args, ObjectLookup(ObjectIndex()) if args.storage_address else None)
    except (OSError, ValueError) as exc:
        log.error("invalid authentication configuration: %s", exc)
        return 1
    grpcutil.run(lambda stop: serve(args, stop))
    return 0
