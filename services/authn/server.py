"""Wiring of the authentication service: flags -> authenticator chain -> gRPC server.

    kapi authn --listen-address 127.0.0.1:0 --client-ca-file ca.crt \\
               --token-auth-file tokens.csv --anonymous-auth=true
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Sequence

import grpc

from kapi import flags, grpcutil
from kapi_proto.kapi.authn.v1 import authn_pb2, authn_pb2_grpc
from services.authn.anonymous import AnonymousAuthenticator
from services.authn.authenticator import Authenticator
from services.authn.bearer import BearerTokenAuthenticator
from services.authn.servicer import AuthenticationServicer
from services.authn.tokenfile import TokenFileAuthenticator
from services.authn.union import build
from services.authn.x509 import X509Authenticator

log = logging.getLogger(__name__)

SERVICE_NAME = authn_pb2.DESCRIPTOR.services_by_name["Authentication"].full_name
GRACE_SECONDS = 2.0


def build_authenticator(args: argparse.Namespace) -> Authenticator:
    """The request authenticator the flags describe (kube-apiserver's order: x509, then tokens, then anonymous).

    Raises OSError or ValueError when ``--client-ca-file`` or
    ``--token-auth-file`` cannot be read or parsed.
    """
    authenticators: list[Authenticator] = []
    if args.client_ca_file:
        authenticators.append(X509Authenticator.from_file(args.client_ca_file))
    if args.token_auth_file:
        tokens = TokenFileAuthenticator.from_file(args.token_auth_file)
        log.info("loaded %d tokens from %s", len(tokens), args.token_auth_file)
        authenticators.append(BearerTokenAuthenticator([tokens]))
    # As kube-apiserver: with no token authenticator configured, bearer tokens are not looked at at all.
    return build(authenticators, AnonymousAuthenticator() if args.anonymous_auth else None)


async def start(args: argparse.Namespace, authenticator: Authenticator) -> tuple[grpc.aio.Server, int]:
    """Build, register and start the gRPC server; returns (server, bound port)."""
    server, health, port = grpcutil.make_server(args.listen_address, grpcutil.tls_from_args(args))
    authn_pb2_grpc.add_AuthenticationServicer_to_server(AuthenticationServicer(authenticator), server)
    grpcutil.set_serving(health, [SERVICE_NAME])
    await grpcutil.start_serving(server, port, args.port_file)
    log.info("authn serving on port %d", port)
    return server, port


async def serve(args: argparse.Namespace, authenticator: Authenticator, stop: asyncio.Event) -> None:
    """Serve until ``stop`` is set, then stop with a short grace period."""
    server, _ = await start(args, authenticator)
    await grpcutil.serve_until(stop, server, GRACE_SECONDS)


def main(argv: Sequence[str]) -> int:
    """Entry point of ``kapi authn``; returns the exit code (1 on a configuration error)."""
    args = flags.parse(flags.AUTHN, argv)
    grpcutil.configure_logging(args.log_level)
    try:
        authenticator = build_authenticator(args)
    except (OSError, ValueError) as exc:
        log.error("invalid authentication configuration: %s", exc)
        return 1
    grpcutil.run(lambda stop: serve(args, authenticator, stop))
    return 0
