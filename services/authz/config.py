"""``--authorization-config``: a structured AuthorizationConfiguration (``apiserver.config.k8s.io/v1``).

kube-apiserver's "Configuring the API Server using an Authorization Config
File" (KEP-3221): an ordered list of authorizers, each ``type`` Node,
RBAC, Webhook, AlwaysAllow or AlwaysDeny with a unique DNS-label ``name``;
Node and RBAC at most once. A Webhook entry carries ``timeout`` (required,
at most 30s), ``subjectAccessReviewVersion`` (v1/v1beta1),
``matchConditionSubjectAccessReviewVersion`` (v1), ``failurePolicy``
(NoOpinion or Deny), ``authorizedTTL``/``unauthorizedTTL`` (default 5m/30s),
``cacheAuthorizedRequests``/``cacheUnauthorizedRequests`` (default true) and
``connectionInfo`` (``type: KubeConfigFile`` with ``kubeConfigFile``).
``matchConditions`` (CEL) are refused: kapi does not evaluate CEL here.
ABAC cannot be configured this way (as in kube). The file is read once at start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kapi.duration import parse_duration
from kapi.kubeconfig import WebhookConfig, load_webhook_config
from services.authz import union
from services.authz.webhook import DEFAULT_AUTHORIZED_TTL, DEFAULT_UNAUTHORIZED_TTL, VERSIONS

API_VERSIONS = ("apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1beta1", "apiserver.config.k8s.io/v1alpha1")
KIND = "AuthorizationConfiguration"
TYPES = (union.NODE, union.RBAC, union.WEBHOOK, union.ALWAYS_ALLOW, union.ALWAYS_DENY)
MAX_TIMEOUT = 30.0  # seconds
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


class ConfigError(ValueError):
    """The AuthorizationConfiguration is invalid; the message names the field like kube's validation."""


@dataclass(frozen=True)
class WebhookSpec:
    """One webhook authorizer's settings (seconds for durations)."""

    config: WebhookConfig
    version: str = "v1"
    authorized_ttl: float = DEFAULT_AUTHORIZED_TTL
    unauthorized_ttl: float = DEFAULT_UNAUTHORIZED_TTL
    timeout: float = 30.0
    failure_policy: str = "NoOpinion"


def _duration(value: Any, field: str) -> float:
    try:
        return parse_duration(str(value))
    except ValueError as exc:
        raise ConfigError(f"{field}: Invalid value: {value!r}: {exc}") from None


def _webhook(entry: dict[str, Any], field: str) -> WebhookSpec:
    hook = entry.get("webhook")
    if not isinstance(hook, dict):
        raise ConfigError(f"{field}.webhook: Required value: required when type=Webhook")
    if "timeout" not in hook:
        raise ConfigError(f"{field}.webhook.timeout: Required value")
    timeout = _duration(hook["timeout"], f"{field}.webhook.timeout")
    if not 0 < timeout <= MAX_TIMEOUT:
        raise ConfigError(f"{field}.webhook.timeout: Invalid value: must be > 0s and <= 30s")
    version = hook.get("subjectAccessReviewVersion")
    if version not in VERSIONS:
        raise ConfigError(f"{field}.webhook.subjectAccessReviewVersion: Unsupported value: {version!r}: "
                          f"supported values: {', '.join(VERSIONS)}")
    if hook.get("matchConditionSubjectAccessReviewVersion", "v1") != "v1":
        raise ConfigError(f"{field}.webhook.matchConditionSubjectAccessReviewVersion: Unsupported value")
    if hook.get("matchConditions"):
        raise ConfigError(f"{field}.webhook.matchConditions: Forbidden: CEL match conditions are not supported")
    policy = hook.get("failurePolicy")
    if policy not in ("NoOpinion", "Deny"):
        raise ConfigError(f"{field}.webhook.failurePolicy: Unsupported value: {policy!r}: "
                          "supported values: NoOpinion, Deny")
    connection = hook.get("connectionInfo") or {}
    if connection.get("type") != "KubeConfigFile" or not connection.get("kubeConfigFile"):
        raise ConfigError(f"{field}.webhook.connectionInfo: Invalid value: only type KubeConfigFile with "
                          "kubeConfigFile is supported")
    authorized = _duration(hook.get("authorizedTTL", "5m"), f"{field}.webhook.authorizedTTL")
    unauthorized = _duration(hook.get("unauthorizedTTL", "30s"), f"{field}.webhook.unauthorizedTTL")
    if hook.get("cacheAuthorizedRequests") is False:
        authorized = 0.0
    if hook.get("cacheUnauthorizedRequests") is False:
        unauthorized = 0.0
    return WebhookSpec(load_webhook_config(str(connection["kubeConfigFile"])), version, authorized, unauthorized,
                       timeout, policy)


def load(path: str) -> tuple[list[str], dict[str, WebhookSpec]]:
    """(modes, webhooks): modes in order, a webhook's mode being ``Webhook/<name>`` keyed into ``webhooks``.

    Raises OSError when a file cannot be read, :class:`ConfigError` (a
    ValueError) when the configuration is invalid.
    """
    doc = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or doc.get("kind") != KIND or doc.get("apiVersion") not in API_VERSIONS:
        raise ConfigError(f"{path}: not an {KIND} ({', '.join(API_VERSIONS)})")
    entries = doc.get("authorizers")
    if not isinstance(entries, list) or not entries:
        raise ConfigError("authorizers: Required value: at least one authorizer is required")
    modes: list[str] = []
    webhooks: dict[str, WebhookSpec] = {}
    names: set[str] = set()
    for i, entry in enumerate(entries):
        field = f"authorizers[{i}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{field}: Invalid value: must be an object")
        kind, name = entry.get("type"), entry.get("name")
        if kind not in TYPES:
            raise ConfigError(f"{field}.type: Unsupported value: {kind!r}: supported values: {', '.join(TYPES)}")
        if not isinstance(name, str) or not _DNS_LABEL.match(name):
            raise ConfigError(f"{field}.name: Invalid value: {name!r}: must be a DNS label")
        if name in names:
            raise ConfigError(f"{field}.name: Duplicate value: {name!r}")
        names.add(name)
        if kind == union.WEBHOOK:
            mode = f"{union.WEBHOOK}/{name}"
            webhooks[mode] = _webhook(entry, field)
        else:
            if kind in modes:
                raise ConfigError(f"{field}.type: Duplicate value: {kind!r}")
            if entry.get("webhook") is not None:
                raise ConfigError(f"{field}.webhook: Invalid value: non-null for {kind} type")
            mode = kind
        modes.append(mode)
    return modes, webhooks
