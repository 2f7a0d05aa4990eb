"""The admission plugins this service knows, in kube-apiserver's fixed run order, and flag handling.

``--enable-admission-plugins`` adds to the default set and
``--disable-admission-plugins`` removes from it; the order plugins run in
is always :data:`ORDER`, whatever order the flags list them in
(kube-apiserver ``AllOrderedPlugins``; the default set is
``DefaultOffAdmissionPlugins``' complement). An unknown name, or a name in
both flags, refuses to start, with kube-apiserver's messages. Plugins kube
has for objects or features kapi does not serve are accepted by name and do
nothing (PodTopologyLabels, ClusterTrustBundleAttest, ...); CertificateApproval
and CertificateSigning need an authorizer and are enforced by the gateway
(services/gateway/registry/certificates.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from services.admission.chain import Plugin
from services.admission.informers import Informers
from services.admission.namespaces import NamespaceCache
from services.admission.plugins.namespace_creator import NamespaceCreator
from services.admission.plugins.namespace_lifecycle import NamespaceLifecycle


@dataclass
class PluginContext:
    """What plugins may depend on: namespaces, the storage-fed caches, the webhook client, plugin config."""

    namespaces: NamespaceCache
    informers: Informers | None = None
    config: dict[str, Any] = field(default_factory=dict)  # plugin name -> configuration object
    webhook_client: Any = None


# k8s.io/kubernetes pkg/kubeapiserver/options/plugins.go AllOrderedPlugins.
ORDER: tuple[str, ...] = (
    "AlwaysAdmit", "NamespaceAutoProvision", "NamespaceLifecycle", "NamespaceExists",
    "NamespaceCreator",  # kapi: the seeds' tenant annotations (plugins/namespace_creator.py); off by default
    "LimitPodHardAntiAffinityTopology", "LimitRanger", "ServiceAccount", "NodeRestriction", "TaintNodesByCondition",
    "AlwaysPullImages", "ImagePolicyWebhook", "PodSecurity", "PodNodeSelector", "Priority",
    "DefaultTolerationSeconds", "PodTolerationRestriction", "EventRateLimit", "ExtendedResourceToleration",
    "DefaultStorageClass", "StorageObjectInUseProtection", "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize", "RuntimeClass", "CertificateApproval", "CertificateSigning",
    "ClusterTrustBundleAttest", "CertificateSubjectRestriction", "DefaultIngressClass", "DenyServiceExternalIPs",
    "PodTopologyLabels", "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook",
    "ResourceQuota", "AlwaysDeny",
)
# Everything not in kube's DefaultOffAdmissionPlugins.
DEFAULT_ENABLED: frozenset[str] = frozenset({
    "NamespaceLifecycle", "LimitRanger", "ServiceAccount", "TaintNodesByCondition", "PodSecurity", "Priority",
    "DefaultTolerationSeconds", "DefaultStorageClass", "StorageObjectInUseProtection", "PersistentVolumeClaimResize",
    "RuntimeClass", "CertificateApproval", "CertificateSigning", "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction", "DefaultIngressClass", "PodTopologyLabels", "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook", "ResourceQuota",
})


class NoOp:
    """A kube plugin for objects or features kapi does not serve: accepted by name, admits everything."""

    def __init__(self, name: str):
        self.name = name

    def handles(self, operation: str) -> bool:
        """Nothing."""
        return False


def _factories() -> dict[str, Callable[[PluginContext], Plugin]]:
    from services.admission.plugins import (
        certificates,
        event_rate_limit,
        image_policy,
        limit_ranger,
        node_restriction,
        pod_security,
        podnode,
        resource_quota,
        service_account,
        simple,
        storage_protection,
    )
    from services.admission.policy import ValidatingAdmissionPolicy
    from services.admission.webhooks import MutatingWebhooks, ValidatingWebhooks, WebhookClient

    def client(ctx: PluginContext) -> WebhookClient:
        if ctx.webhook_client is None:
            ctx.webhook_client = WebhookClient(ctx.informers)
        return ctx.webhook_client  # type: ignore[no-any-return]

    def inf(ctx: PluginContext) -> Informers:
        assert ctx.informers is not None, "this plugin needs storage-fed caches"
        return ctx.informers

    def noop(name: str) -> Callable[[PluginContext], Plugin]:
        return lambda ctx: NoOp(name)

    out: dict[str, Callable[[PluginContext], Plugin]] = {name: noop(name) for name in ORDER}
    out.update({
        "NamespaceLifecycle": lambda ctx: NamespaceLifecycle(ctx.namespaces),
        "NamespaceCreator": lambda ctx: NamespaceCreator(),
        "AlwaysAdmit": lambda ctx: simple.AlwaysAdmit(),
        "AlwaysDeny": lambda ctx: simple.AlwaysDeny(),
        "AlwaysPullImages": lambda ctx: simple.AlwaysPullImages(),
        "DefaultTolerationSeconds": lambda ctx: simple.DefaultTolerationSeconds(),
        "DenyServiceExternalIPs": lambda ctx: simple.DenyServiceExternalIPs(),
        "DefaultStorageClass": lambda ctx: simple.DefaultStorageClass(inf(ctx)),
        "DefaultIngressClass": lambda ctx: simple.DefaultIngressClass(inf(ctx)),
        "Priority": lambda ctx: simple.Priority(inf(ctx)),
        "LimitRanger": lambda ctx: limit_ranger.LimitRanger(inf(ctx)),
        "ServiceAccount": lambda ctx: service_account.ServiceAccount(inf(ctx)),
        "ResourceQuota": lambda ctx: resource_quota.ResourceQuota(inf(ctx)),
        "PodSecurity": lambda ctx: pod_security.PodSecurity(ctx.namespaces, ctx.config.get("PodSecurity"),
                                                    ctx.informers),
        "MutatingAdmissionWebhook": lambda ctx: MutatingWebhooks(inf(ctx), ctx.namespaces, client(ctx)),
        "ValidatingAdmissionWebhook": lambda ctx: ValidatingWebhooks(inf(ctx), ctx.namespaces, client(ctx)),
        "ValidatingAdmissionPolicy": lambda ctx: ValidatingAdmissionPolicy(inf(ctx), ctx.namespaces),
        "EventRateLimit": lambda ctx: event_rate_limit.EventRateLimit(ctx.config.get("EventRateLimit")),
        "NodeRestriction": lambda ctx: node_restriction.NodeRestriction(inf(ctx)),
        "ImagePolicyWebhook": lambda ctx: image_policy.ImagePolicyWebhook(ctx.config.get("ImagePolicyWebhook")),
        "CertificateSubjectRestriction": lambda ctx: certificates.CertificateSubjectRestriction(),
        "StorageObjectInUseProtection": lambda ctx: storage_protection.StorageObjectInUseProtection(),
        "RuntimeClass": lambda ctx: podnode.RuntimeClass(inf(ctx)),
        "TaintNodesByCondition": lambda ctx: podnode.TaintNodesByCondition(),
        "PersistentVolumeClaimResize": lambda ctx: podnode.PersistentVolumeClaimResize(inf(ctx)),
    })
    return out


def _names(text: str) -> list[str]:
    return [n.strip() for n in (text or "").split(",") if n.strip()]


def enabled_plugins(enable: str, disable: str) -> list[str]:
    """Names to run, in :data:`ORDER`, from the comma-separated flag values.

    Raises ValueError: ``enable-admission-plugins plugin "X" is unknown``,
    ``disable-admission-plugins plugin "X" is unknown``, or
    ``[X] in enable-admission-plugins and disable-admission-plugins overlapped``.
    """
    enabled, disabled = _names(enable), _names(disable)
    known = set(ORDER)
    problems = [f'enable-admission-plugins plugin "{n}" is unknown' for n in enabled if n not in known]
    problems += [f'disable-admission-plugins plugin "{n}" is unknown' for n in disabled if n not in known]
    overlap = sorted(set(enabled) & set(disabled))
    if overlap:
        problems.append(f"[{' '.join(overlap)}] in enable-admission-plugins and disable-admission-plugins "
                        "overlapped")
    if problems:
        raise ValueError("; ".join(problems))
    wanted = (DEFAULT_ENABLED | set(enabled)) - set(disabled)
    return [n for n in ORDER if n in wanted]


def validate_config(names: list[str], config: dict[str, Any]) -> None:
    """Check the configuration of the enabled plugins that need one (EventRateLimit, ImagePolicyWebhook).

    Raises ValueError with the plugin's message, so ``kapi admission``
    refuses to start as kube-apiserver does.
    """
    from services.admission.plugins import event_rate_limit, image_policy

    if "EventRateLimit" in names:
        event_rate_limit.parse_config(config.get("EventRateLimit"))
    if "ImagePolicyWebhook" in names:
        image_policy.check_config(config.get("ImagePolicyWebhook"))


def build(names: list[str], context: PluginContext) -> list[Plugin]:
    """Instantiate the named plugins (names from :func:`enabled_plugins`); no-op plugins are left out."""
    factories = _factories()
    plugins = [factories[n](context) for n in names]
    return [p for p in plugins if not isinstance(p, NoOp)]
