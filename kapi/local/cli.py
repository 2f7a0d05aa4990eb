"""The ``kapi`` command: ``kapi up`` starts a whole stack; ``kapi <service>`` runs one service.

    kapi up [--state-dir .kapi] [--port 6443] [service flags...]
    kapi certs --state-dir DIR [--advertise-address ...]   # one-shot PKI generation
    kapi storage|authn|authz|flowcontrol|admission|gateway|controllers [flags]

Each service's command line here is the same one compose.yaml runs in its
container (docs/architecture.md, "Processes").
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from kapi.flags import CONTROLLERS, SERVICES

USAGE = """usage: kapi COMMAND [flags]

commands:
  up           start etcd, every service, two gateways and Envoy (see kapi up --help)
  certs        generate the CA, serving and client certificates and kubeconfigs
  health       exit 0 if a kapi gRPC service or an HTTPS /readyz is ready (container healthchecks)
  storage      the storage service (the only etcd client)
  authn        the authentication service
  authz        the authorization service
  flowcontrol  the API Priority and Fairness service
  admission    the admission service
  gateway      the HTTP gateway
  controllers  the controller manager (reconcile loops; an API client through Envoy)
"""


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch to a subcommand; returns the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command == "up":
        from kapi.local.launcher import main as up_main

        return up_main(rest)
    if command == "certs":
        from kapi.local.pki import main as certs_main

        return certs_main(rest)
    if command == "health":
        from kapi.local.launcher import health_main

        return health_main(rest)
    if command in SERVICES or command == CONTROLLERS:
        from kapi import observability

        observability.setup(command, rest)  # --log-format, --metrics-address, OTEL_* tracing
        module = importlib.import_module(f"services.{command}.server")
        return int(module.main(rest) or 0)
    print(f"kapi: unknown command {command!r}\n\n{USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
