"""Command-line flags of every kapi process, declared once.

Each :class:`Flag` names the services that accept it. A service's parser is
built from its flags (:func:`parser_for`); ``kapi up`` offers every flag
marked ``passthrough`` and hands each service the ones it accepts
(:func:`forward`). Names follow kube-apiserver's flags where the meaning is
the same ("kube-apiserver" command-line reference).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kapi.duration import parse_duration

GATEWAY, STORAGE, AUTHN, AUTHZ, FLOWCONTROL, ADMISSION = (
    "gateway", "storage", "authn", "authz", "flowcontrol", "admission")
SERVICES = (STORAGE, AUTHN, AUTHZ, FLOWCONTROL, ADMISSION, GATEWAY)
_ALL = frozenset(SERVICES)
_BACKENDS = frozenset({STORAGE, AUTHN, AUTHZ, FLOWCONTROL, ADMISSION})
# The controller manager is an API client, not a gRPC service: it has no gRPC identity and is not in SERVICES.
CONTROLLERS = "controllers"
# Which kapi services call each backend (the client side of every channel they open): the default of the
# backend's --allowed-callers (docs/grpc-services.md). Only the gateway calls authn, authz, flowcontrol and
# admission; all five read and watch through storage. The controllers are REST clients (no gRPC identity).
DEFAULT_CALLERS: Mapping[str, tuple[str, ...]] = {
    STORAGE: (GATEWAY, AUTHN, AUTHZ, FLOWCONTROL, ADMISSION),
    AUTHN: (GATEWAY,),
    AUTHZ: (GATEWAY,),
    FLOWCONTROL: (GATEWAY,),
    ADMISSION: (GATEWAY,),
}


@dataclass(frozen=True)
class Flag:
    """One flag: ``--name``, the services taking it, default, help, value type, whether ``kapi up`` forwards it,
    and per-service defaults that replace ``default`` for the services they name."""

    name: str
    services: frozenset[str]
    default: Any
    help: str
    type: Callable[[str], Any] = str
    passthrough: bool = False
    defaults: Mapping[str, Any] = field(default_factory=dict)
    # ``kapi up`` takes it as ``SERVICE=VALUE`` (repeatable) and forwards each VALUE to that service alone.
    per_service: bool = False

    def default_for(self, service: str) -> Any:
        """The default of this flag in ``service``'s parser."""
        return self.defaults.get(service, self.default)

    @property
    def dest(self) -> str:
        """The argparse attribute name."""
        return self.name.replace("-", "_")


def _bool(text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def _seconds(text: str) -> float:
    """A Go duration ("30s", "1m30s", "500ms") or a bare number of seconds (:func:`kapi.duration.parse_duration`)."""
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


FLAGS: tuple[Flag, ...] = (
    # Internal gRPC identity (mutual TLS, docs/architecture.md, "Failure policy").
    Flag("grpc-cert-file", _ALL, "", "PEM certificate of this service's gRPC identity (CN kapi-<service>)."),
    Flag("grpc-key-file", _ALL, "", "PEM private key for --grpc-cert-file."),
    Flag("grpc-ca-file", _ALL, "", "PEM CA bundle that signs every service's gRPC certificate."),
    Flag("allowed-callers", _BACKENDS, "",
         "Comma-separated gRPC client-certificate CNs that may call this service's RPCs (health and reflection are "
         "open to any certificate from --grpc-ca-file); anyone else gets PERMISSION_DENIED. Storage admits only "
         "kapi's own service identities (kapi-<service>). Default: the kapi services that call it "
         "(docs/grpc-services.md). kapi up: SERVICE=CN[,CN...], repeatable, e.g. authz=kapi-gateway,policy-engine.",
         defaults={service: ",".join(f"kapi-{c}" for c in callers) for service, callers in DEFAULT_CALLERS.items()},
         passthrough=True, per_service=True),
    Flag("log-level", _ALL | {CONTROLLERS}, "INFO", "Log level: DEBUG, INFO, WARNING, ERROR."),
    Flag("listen-address", _BACKENDS, "127.0.0.1:0", "host:port the gRPC server listens on."),
    Flag("log-format", _ALL, "text",
         "Log format: text, or json (one object per line with the request's auditID; kapi/observability.py).",
         passthrough=True),
    Flag("metrics-address", _BACKENDS, "",
         "host:port of a plain-HTTP Prometheus /metrics listener (gRPC server metrics); empty = off."),
    # Peers.
    Flag("storage-address", frozenset({GATEWAY, AUTHN, AUTHZ, ADMISSION, FLOWCONTROL}), "",
         "Comma-separated host:port list of storage replicas."),
    Flag("authn-address", frozenset({GATEWAY}), "", "Comma-separated host:port list of authn replicas."),
    Flag("authz-address", frozenset({GATEWAY}), "", "Comma-separated host:port list of authz replicas."),
    Flag("flowcontrol-address", frozenset({GATEWAY}), "", "Comma-separated host:port list of flowcontrol replicas."),
    Flag("admission-address", frozenset({GATEWAY}), "", "Comma-separated host:port list of admission replicas."),
    # storage
    Flag("etcd-servers", frozenset({STORAGE}), "http://127.0.0.1:2379",
         "Comma-separated etcd client URLs (kube-apiserver --etcd-servers)."),
    Flag("etcd-prefix", frozenset({STORAGE}), "/registry", "Key prefix of every object in etcd."),
    Flag("watch-cache-sizes", frozenset({STORAGE}), "",
         "resource[.group]#size list (kube-apiserver --watch-cache-sizes): size 0 disables a resource's watch "
         "cache; every other size is equivalent (the window sizes itself).", passthrough=True),
    Flag("etcd-compaction-interval", frozenset({STORAGE}), "5m",
         "Interval of etcd compaction requests, a duration like 5m or 90s; 0 disables compaction "
         "(kube-apiserver --etcd-compaction-interval).", passthrough=True),
    Flag("storage-allowed-clients", frozenset({STORAGE}), "",
         "Deprecated: use --allowed-callers (a non-empty value is taken as it)."),
    # authn
    Flag("client-ca-file", frozenset({AUTHN, GATEWAY}), "",
         "PEM CA bundle for client certificates (kube-apiserver --client-ca-file)."),
    Flag("token-auth-file", frozenset({AUTHN}), "",
         "Static token CSV: token,user,uid,\"group1,group2\" (kube-apiserver --token-auth-file).", passthrough=True),
    Flag("anonymous-auth", frozenset({AUTHN}), True,
         "Treat requests with no credential as system:anonymous (kube-apiserver --anonymous-auth).",
         type=_bool, passthrough=True),
    Flag("service-account-key-file", frozenset({AUTHN}), "",
         "PEM public key(s) that verify service-account tokens.", passthrough=True),
    Flag("service-account-signing-key-file", frozenset({AUTHN}), "",
         "PEM private key that signs service-account tokens (kube-apiserver --service-account-signing-key-file).",
         passthrough=True),
    Flag("service-account-issuer", frozenset({AUTHN}), "https://kubernetes.default.svc.cluster.local",
         "Comma-separated service-account token issuers; the first signs new tokens, all are accepted "
         "(kube-apiserver --service-account-issuer).", passthrough=True),
    Flag("api-audiences", frozenset({AUTHN}), "",
         "Comma-separated audiences of the API; tokens must carry one (default: the issuers) "
         "(kube-apiserver --api-audiences).", passthrough=True),
    Flag("service-account-jwks-uri", frozenset({AUTHN}), "",
         "jwks_uri published in the issuer's discovery document (default <issuer>/openid/v1/jwks) "
         "(kube-apiserver --service-account-jwks-uri).", passthrough=True),
    Flag("service-account-max-token-expiration", frozenset({AUTHN}), 0,
         "Maximum lifetime in seconds of a requested service-account token; 0 = no limit "
         "(kube-apiserver --service-account-max-token-expiration).", type=int, passthrough=True),
    Flag("enable-bootstrap-token-auth", frozenset({AUTHN}), False,
         "Accept bootstrap tokens from kube-system Secrets (kube-apiserver --enable-bootstrap-token-auth).",
         type=_bool, passthrough=True),
    Flag("basic-auth-file", frozenset({AUTHN}), "",
         "Deprecated static password CSV: password,user,uid,\"groups\" (removed from kube-apiserver in 1.19).",
         passthrough=True),
    Flag("authentication-token-webhook-config-file", frozenset({AUTHN}), "",
         "kubeconfig of a TokenReview webhook (kube-apiserver --authentication-token-webhook-config-file).",
         passthrough=True),
    Flag("oidc-issuer-url", frozenset({AUTHN}), "",
         "https URL of the OpenID issuer (kube-apiserver --oidc-issuer-url).", passthrough=True),
    Flag("oidc-client-id", frozenset({AUTHN}), "", "Audience tokens must carry (kube-apiserver --oidc-client-id).",
         passthrough=True),
    Flag("oidc-username-claim", frozenset({AUTHN}), "sub", "Claim used as the user name (kube-apiserver "
         "--oidc-username-claim).", passthrough=True),
    Flag("oidc-username-prefix", frozenset({AUTHN}), "", "Prefix of OIDC user names; default <issuer># unless the "
         "claim is email; - for none (kube-apiserver --oidc-username-prefix).", passthrough=True),
    Flag("oidc-groups-claim", frozenset({AUTHN}), "", "Claim holding the groups (kube-apiserver --oidc-groups-claim).",
         passthrough=True),
    Flag("oidc-groups-prefix", frozenset({AUTHN}), "", "Prefix of OIDC groups (kube-apiserver --oidc-groups-prefix).",
         passthrough=True),
    Flag("oidc-required-claim", frozenset({AUTHN}), "", "Comma-separated key=value claims every token must carry "
         "(kube-apiserver --oidc-required-claim).", passthrough=True),
    Flag("oidc-ca-file", frozenset({AUTHN}), "", "PEM CA of the issuer's serving certificate (kube-apiserver "
         "--oidc-ca-file).", passthrough=True),
    Flag("oidc-signing-algs", frozenset({AUTHN}), "RS256", "Comma-separated JOSE algorithms accepted "
         "(kube-apiserver --oidc-signing-algs).", passthrough=True),
    Flag("authentication-config", frozenset({AUTHN}), "", "AuthenticationConfiguration file: JWT issuers, claim "
         "mappings and CEL rules (kube-apiserver --authentication-config).", passthrough=True),
    Flag("authentication-token-webhook-cache-ttl", frozenset({AUTHN}), "2m",
         "How long webhook answers are cached, a duration like 2m (kube-apiserver "
         "--authentication-token-webhook-cache-ttl).", passthrough=True),
    # authz
    # authn reads it too: AlwaysAllow turns anonymous authentication off (kube's ApplyAuthorization).
    Flag("authorization-mode", frozenset({AUTHZ, AUTHN}), "",
         "Ordered comma-separated authorizers: Node, RBAC, ABAC, Webhook, AlwaysAllow, AlwaysDeny; RBAC when "
         "neither this nor --authorization-config is given; AlwaysAllow turns --anonymous-auth off "
         "(kube-apiserver --authorization-mode).", passthrough=True),
    Flag("authorization-config", frozenset({AUTHZ}), "",
         "AuthorizationConfiguration file (apiserver.config.k8s.io/v1): ordered Node, RBAC, Webhook, AlwaysAllow, "
         "AlwaysDeny authorizers; excludes --authorization-mode and the webhook flags "
         "(kube-apiserver --authorization-config).", passthrough=True),
    Flag("authorization-policy-file", frozenset({AUTHZ}), "",
         "ABAC policy file, one abac.authorization.kubernetes.io/v1beta1 Policy JSON per line "
         "(kube-apiserver --authorization-policy-file).", passthrough=True),
    Flag("authorization-webhook-config-file", frozenset({AUTHZ}), "",
         "kubeconfig of a SubjectAccessReview webhook (kube-apiserver --authorization-webhook-config-file).",
         passthrough=True),
    Flag("authorization-webhook-version", frozenset({AUTHZ}), "v1",
         "authorization.k8s.io version of the SubjectAccessReview sent: v1 or v1beta1 "
         "(kube-apiserver --authorization-webhook-version).", passthrough=True),
    Flag("authorization-webhook-cache-authorized-ttl", frozenset({AUTHZ}), "5m",
         "How long 'authorized' webhook answers are cached, a duration like 5m "
         "(kube-apiserver --authorization-webhook-cache-authorized-ttl).", passthrough=True),
    Flag("authorization-webhook-cache-unauthorized-ttl", frozenset({AUTHZ}), "30s",
         "How long 'unauthorized' webhook answers are cached, a duration like 30s "
         "(kube-apiserver --authorization-webhook-cache-unauthorized-ttl).", passthrough=True),
    Flag("authorization-webhook-timeout", frozenset({AUTHZ}), "30s",
         "Deadline of one webhook decision, retries included, a duration like 3s (kapi's flag for the "
         "timeout kube-apiserver fixes at 30s for the legacy flags; AuthorizationConfiguration webhook.timeout).",
         passthrough=True),
    # flowcontrol (and the gateway's local fallback)
    Flag("max-requests-inflight", frozenset({FLOWCONTROL, GATEWAY}), 400,
         "Maximum non-mutating requests in flight (kube-apiserver --max-requests-inflight).", type=int,
         passthrough=True),
    Flag("max-mutating-requests-inflight", frozenset({FLOWCONTROL, GATEWAY}), 200,
         "Maximum mutating requests in flight (kube-apiserver --max-mutating-requests-inflight).", type=int,
         passthrough=True),
    Flag("apf-seat-leases", frozenset({GATEWAY}), True,
         "Take seat leases from the flowcontrol service: requests of a classification seen before run without a "
         "Start on seats their priority level leased to this gateway while it is uncontended (exempt ones "
         "always), and go back to a Start per request as soon as a request queues (kapi's flag; kube-apiserver "
         "has none; docs/architecture.md, \"API Priority and Fairness\").", type=_bool, passthrough=True),
    # admission
    Flag("enable-admission-plugins", frozenset({ADMISSION}), "",
         "Admission plugins to enable in addition to the defaults (kube-apiserver --enable-admission-plugins).",
         passthrough=True),
    Flag("disable-admission-plugins", frozenset({ADMISSION}), "",
         "Admission plugins to disable (kube-apiserver --disable-admission-plugins).", passthrough=True),
    Flag("admission-control-config-file", frozenset({ADMISSION}), "",
         "AdmissionConfiguration file (apiserver.config.k8s.io/v1) with per-plugin configuration "
         "(kube-apiserver --admission-control-config-file).", passthrough=True),
    # gateway
    Flag("bind-address", frozenset({GATEWAY}), "127.0.0.1", "Address the HTTPS server listens on."),
    Flag("secure-port", frozenset({GATEWAY}), 0, "HTTPS port (0 = any free port).", type=int),
    Flag("grpc-listen-address", frozenset({GATEWAY}), "",
         "host:port of the public gRPC API (kapi.api.v1.Resources, docs/grpc.md), TLS with --tls-cert-file and a "
         "required client certificate (Envoy's); port 0 = any free port; empty = not served."),
    Flag("tls-cert-file", frozenset({GATEWAY}), "", "PEM serving certificate of the gateway."),
    Flag("tls-private-key-file", frozenset({GATEWAY}), "", "PEM key for --tls-cert-file."),
    Flag("requestheader-allowed-names", frozenset({GATEWAY}), "front-proxy-client",
         "Client-certificate CNs of the front proxy (Envoy) whose x-forwarded-client-cert header is trusted."),
    # What extension API servers trust for proxied requests, published in kube-system/extension-apiserver-
    # authentication (services/gateway/authtrust.py); kapi's aggregator sends X-Remote-User/-Group/-Extra-*.
    Flag("requestheader-client-ca-file", frozenset({GATEWAY}), "",
         "PEM CA that signed --proxy-client-cert-file, published for extension API servers (kube-apiserver flag).",
         passthrough=True),
    Flag("requestheader-username-headers", frozenset({GATEWAY}), "X-Remote-User",
         "Comma-separated user-name headers extension API servers should read (kube-apiserver flag).",
         passthrough=True),
    Flag("requestheader-group-headers", frozenset({GATEWAY}), "X-Remote-Group",
         "Comma-separated group headers extension API servers should read (kube-apiserver flag).",
         passthrough=True),
    Flag("requestheader-extra-headers-prefix", frozenset({GATEWAY}), "X-Remote-Extra-",
         "Comma-separated extra-header prefixes extension API servers should read (kube-apiserver flag).",
         passthrough=True),
    Flag("proxy-client-cert-file", frozenset({GATEWAY}), "",
         "PEM client certificate the gateway presents to aggregated API servers (kube-apiserver flag).",
         passthrough=True),
    Flag("proxy-client-key-file", frozenset({GATEWAY}), "", "PEM key for --proxy-client-cert-file.",
         passthrough=True),
    Flag("service-cluster-ip-range", frozenset({GATEWAY}), "10.96.0.0/12",
         "CIDR of Service clusterIPs; its first address is the kubernetes Service's (kube-apiserver flag).",
         passthrough=True),
    Flag("service-node-port-range", frozenset({GATEWAY}), "30000-32767",
         "Port range of Service nodePorts, low-high inclusive (kube-apiserver flag).", passthrough=True),
    Flag("request-timeout", frozenset({GATEWAY}), 60.0,
         "Default request timeout in seconds (kube-apiserver --request-timeout).", type=float, passthrough=True),
    Flag("shutdown-delay-duration", frozenset({GATEWAY}), 0.0,
         "Seconds /readyz fails before the gateway stops accepting (kube-apiserver --shutdown-delay-duration).",
         type=float),
    # Audit (gateway; kube-apiserver's --audit-* flags, "Auditing" docs).
    Flag("audit-policy-file", frozenset({GATEWAY}), "",
         "audit.k8s.io/v1 Policy file; with a backend below it turns auditing on (kube-apiserver flag).",
         passthrough=True),
    Flag("audit-log-path", frozenset({GATEWAY}), "",
         "Write audit events as JSON lines to this file ('-' = stdout) (kube-apiserver flag).", passthrough=True),
    Flag("audit-log-maxsize", frozenset({GATEWAY}), 0,
         "Megabytes an audit log file grows to before it is rotated; 0 = 100 (kube-apiserver flag).", type=int,
         passthrough=True),
    Flag("audit-log-maxbackup", frozenset({GATEWAY}), 0,
         "Rotated audit log files to keep; 0 = all (kube-apiserver flag).", type=int, passthrough=True),
    Flag("audit-log-maxage", frozenset({GATEWAY}), 0,
         "Days to keep rotated audit log files; 0 = forever (kube-apiserver flag).", type=int, passthrough=True),
    Flag("audit-webhook-config-file", frozenset({GATEWAY}), "",
         "kubeconfig of a webhook that receives audit.k8s.io/v1 EventLists (kube-apiserver flag).", passthrough=True),
    Flag("audit-webhook-batch-max-size", frozenset({GATEWAY}), 400,
         "Events per webhook batch at most (kube-apiserver flag).", type=int, passthrough=True),
    Flag("audit-webhook-batch-max-wait", frozenset({GATEWAY}), 30.0,
         "Longest a batch waits to fill before it is sent, a duration like 30s (kube-apiserver flag).",
         type=_seconds, passthrough=True),
    Flag("audit-webhook-batch-buffer-size", frozenset({GATEWAY}), 10000,
         "Events buffered for the webhook before new ones are dropped (kube-apiserver flag).", type=int,
         passthrough=True),
    Flag("audit-webhook-initial-backoff", frozenset({GATEWAY}), 10.0,
         "Wait before retrying a failed webhook batch, doubling each retry, a duration like 10s (kube-apiserver flag).",
         type=_seconds, passthrough=True),
    # controllers (kube-controller-manager's flag names)
    Flag("kubeconfig", frozenset({CONTROLLERS}), "",
         "kubeconfig with the API server's address and this process's credential (kube-controller-manager flag)."),
    Flag("master", frozenset({CONTROLLERS}), "",
         "API server URL, overriding the kubeconfig's server (kube-controller-manager --master)."),
    Flag("controllers", frozenset({CONTROLLERS}), "*",
         "Loops to run: '*' = every default-on loop, 'name' enables, '-name' disables, e.g. '*,tokencleaner' "
         "(kube-controller-manager --controllers).", passthrough=True),
    Flag("root-ca-file", frozenset({CONTROLLERS}), "",
         "CA bundle published as kube-root-ca.crt; default: the kubeconfig's CA (kube-controller-manager flag)."),
    Flag("cluster-signing-cert-file", frozenset({CONTROLLERS}), "",
         "PEM CA certificate the csrsigning loop issues kubernetes.io/* certificates with; empty = no signing "
         "(kube-controller-manager flag)."),
    Flag("cluster-signing-key-file", frozenset({CONTROLLERS}), "",
         "PEM private key of --cluster-signing-cert-file (kube-controller-manager flag)."),
    Flag("cluster-signing-duration", frozenset({CONTROLLERS}), 8760 * 3600.0,
         "Longest validity of an issued certificate, a duration like 8760h; CSRs may ask for less with "
         "spec.expirationSeconds (kube-controller-manager flag).", type=_seconds, passthrough=True),
    Flag("leader-elect", frozenset({CONTROLLERS}), True,
         "Run the loops only while holding the leader Lease (kube-controller-manager --leader-elect).", type=_bool),
    Flag("leader-elect-lease-duration", frozenset({CONTROLLERS}), 15.0,
         "Seconds a standby waits after the last renewal before taking the Lease (kube-controller-manager flag).",
         type=float, passthrough=True),
    Flag("leader-elect-renew-deadline", frozenset({CONTROLLERS}), 10.0,
         "Seconds the leader keeps trying to renew before it stops leading (kube-controller-manager flag).",
         type=float, passthrough=True),
    Flag("leader-elect-retry-period", frozenset({CONTROLLERS}), 2.0,
         "Seconds between acquire/renew attempts (kube-controller-manager flag).", type=float, passthrough=True),
    Flag("leader-elect-resource-namespace", frozenset({CONTROLLERS}), "kube-system",
         "Namespace of the leader Lease (kube-controller-manager flag)."),
    Flag("leader-elect-resource-name", frozenset({CONTROLLERS}), "kube-controller-manager",
         "Name of the leader Lease (kube-controller-manager flag)."),
    Flag("min-resync-period", frozenset({CONTROLLERS}), 300.0,
         "Seconds between informer resyncs, when every cached object is reconciled again "
         "(kube-controller-manager --min-resync-period).", type=float),
    Flag("tenant-namespace-provisioning", frozenset({CONTROLLERS}), True,
         "Let every authenticated user create namespaces (ClusterRoleBinding kapi:namespace-provisioners); "
         "false removes the grant.", type=_bool, passthrough=True),
    Flag("tenant-quota-configmap", frozenset({CONTROLLERS}), "tenant-quota-template",
         "kube-system ConfigMap whose data entries are the ResourceQuota specs of each tenant namespace.",
         passthrough=True),
    Flag("port-file", frozenset(SERVICES), "", "Write the bound port to this file once serving (for launchers)."),
)


def _add(parser: argparse.ArgumentParser, flag: Flag, default: Any) -> None:
    if flag.type is bool or flag.type is _bool:
        parser.add_argument(f"--{flag.name}", dest=flag.dest, type=_bool, default=default, help=flag.help,
                            nargs="?", const=True, metavar="true|false")
    else:
        parser.add_argument(f"--{flag.name}", dest=flag.dest, type=flag.type, default=default, help=flag.help)


def parser_for(service: str, prog: str | None = None) -> argparse.ArgumentParser:
    """An argparse parser with every flag ``service`` accepts."""
    parser = argparse.ArgumentParser(prog=prog or f"kapi {service}")
    for flag in FLAGS:
        if service in flag.services:
            _add(parser, flag, flag.default_for(service))
    return parser


def _service_value(flag: Flag) -> Callable[[str], tuple[str, str]]:
    """argparse type of a ``per_service`` flag in ``kapi up``: ``SERVICE=VALUE`` -> (service, value)."""
    def parse(text: str) -> tuple[str, str]:
        service, sep, value = text.partition("=")
        if not sep or service not in flag.services:
            raise argparse.ArgumentTypeError(
                f"expected SERVICE=VALUE with SERVICE one of {', '.join(sorted(flag.services))}, got {text!r}")
        return service, value
    return parse


def add_passthrough(parser: argparse.ArgumentParser) -> None:
    """Add every ``passthrough`` flag to ``parser`` with default None (meaning: not given); a ``per_service``
    one is repeatable ``SERVICE=VALUE`` (a list of (service, value) pairs once parsed)."""
    group = parser.add_argument_group("service flags (forwarded to the services that accept them)")
    for flag in FLAGS:
        if flag.per_service:
            group.add_argument(f"--{flag.name}", dest=flag.dest, type=_service_value(flag), action="append",
                               default=None, metavar="SERVICE=VALUE", help=flag.help)
        elif flag.passthrough:
            _add(group, flag, None)  # type: ignore[arg-type]


def forward(args: argparse.Namespace, service: str) -> list[str]:
    """The ``--flag value`` arguments for ``service`` from passthrough flags the user gave."""
    out: list[str] = []
    for flag in FLAGS:
        if not flag.passthrough or service not in flag.services:
            continue
        value = getattr(args, flag.dest, None)
        if value is None:
            continue
        if flag.per_service:  # the last SERVICE=VALUE given for this service, if any
            mine = [v for s, v in value if s == service]
            if mine:
                out.append(f"--{flag.name}={mine[-1]}")
            continue
        text = str(value).lower() if isinstance(value, bool) else str(value)
        out.append(f"--{flag.name}={text}")
    return out


def passthrough_argv(args: argparse.Namespace) -> list[str]:
    """The ``--flag=value`` items of the passthrough flags set in ``args`` (parsed by :func:`add_passthrough`'s
    flags), the inverse of parsing them: a ``per_service`` flag gives one ``--flag=SERVICE=VALUE`` per value."""
    out: list[str] = []
    for flag in FLAGS:
        value = getattr(args, flag.dest, None) if flag.passthrough else None
        if value is None:
            continue
        if flag.per_service:
            out += [f"--{flag.name}={s}={v}" for s, v in value]
        else:
            out.append(f"--{flag.name}={str(value).lower() if isinstance(value, bool) else value}")
    return out


def parse(service: str, argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse ``argv`` with :func:`parser_for`."""
    return parser_for(service).parse_args(argv)
