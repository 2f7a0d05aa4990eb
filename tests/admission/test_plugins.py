"""services.admission.plugins: --enable/--disable-admission-plugins semantics."""

from __future__ import annotations

import pytest

from services.admission import plugins

KUBE_DEFAULTS = [  # kube-apiserver's default set, in AllOrderedPlugins order
    "NamespaceLifecycle", "LimitRanger", "ServiceAccount", "TaintNodesByCondition", "PodSecurity", "Priority",
    "DefaultTolerationSeconds", "DefaultStorageClass", "StorageObjectInUseProtection",
    "PersistentVolumeClaimResize", "RuntimeClass", "CertificateApproval", "CertificateSigning",
    "ClusterTrustBundleAttest", "CertificateSubjectRestriction", "DefaultIngressClass", "PodTopologyLabels",
    "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook", "ResourceQuota",
]
NO_DEFAULTS = ",".join(KUBE_DEFAULTS)


@pytest.mark.parametrize(("enable", "disable", "expected"), [
    ("", "", KUBE_DEFAULTS),
    ("NamespaceLifecycle", "", KUBE_DEFAULTS),
    ("", NO_DEFAULTS, []),
    (" NamespaceLifecycle , ", NO_DEFAULTS.replace("NamespaceLifecycle,", ""), ["NamespaceLifecycle"]),
    # the flag order never changes the run order
    ("AlwaysDeny,AlwaysPullImages,EventRateLimit", NO_DEFAULTS, ["AlwaysPullImages", "EventRateLimit", "AlwaysDeny"]),
    ("AlwaysAdmit", "ResourceQuota,MutatingAdmissionWebhook", ["AlwaysAdmit"] + [
        n for n in KUBE_DEFAULTS if n not in ("ResourceQuota", "MutatingAdmissionWebhook")]),
])
def test_enabled_plugins(enable: str, disable: str, expected: list[str]) -> None:
    assert plugins.enabled_plugins(enable, disable) == expected


def test_webhooks_quota_and_deny_run_last() -> None:
    assert plugins.ORDER[-5:] == ("MutatingAdmissionWebhook", "ValidatingAdmissionPolicy",
                                  "ValidatingAdmissionWebhook", "ResourceQuota", "AlwaysDeny")


@pytest.mark.parametrize(("enable", "disable", "message"), [
    ("Bogus", "", 'enable-admission-plugins plugin "Bogus" is unknown'),
    ("", "Bogus", 'disable-admission-plugins plugin "Bogus" is unknown'),
    ("NamespaceLifecycle", "NamespaceLifecycle",
     "[NamespaceLifecycle] in enable-admission-plugins and disable-admission-plugins overlapped"),
])
def test_bad_plugin_flags(enable: str, disable: str, message: str) -> None:
    with pytest.raises(ValueError) as exc:
        plugins.enabled_plugins(enable, disable)
    assert str(exc.value) == message


def test_server_refuses_to_start_on_unknown_plugin() -> None:
    from services.admission import server

    assert server.main(["--storage-address=127.0.0.1:1", "--enable-admission-plugins=Nope"]) == 1
    assert server.main([]) == 1  # no --storage-address
