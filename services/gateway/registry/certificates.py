"""Signer permissions on CertificateSigningRequest writes (kube's CertificateApproval and CertificateSigning).

kube-apiserver's admission plugins ask the authorizer whether the user may
``approve`` (any write to ``certificatesigningrequests/approval``) or
``sign`` (a ``/status`` write that changes ``status.certificate``)
``signers`` in ``certificates.k8s.io`` named by the request's signerName,
or by ``<domain>/*`` (``IsAuthorizedForSignerName``); a refusal is 403
``certificatesigningrequests.certificates.k8s.io "x" is forbidden: user not
permitted to approve requests with signerName "y"``. The admission service
has no authorizer, so this hook, which runs on every CSR update of the one
write path (PUT, every PATCH type, dry runs), asks authz. Source:
"Certificates and Certificate Signing Requests: Authorization".
"""

from __future__ import annotations

import dataclasses

from kapi import certificates, errors
from services.gateway.registry.hooks import Hooks, Write, register


@register(certificates.GROUP, certificates.RESOURCE)
class SignerPermission(Hooks):
    """Refuse (403) an approval or certificate write the user may not make for the CSR's signerName."""

    async def before_update(self, write: Write) -> None:
        """403 unless authz allows ``approve``/``sign`` on the signer (or its ``<domain>/*``); 503 if unreachable."""
        if write.old is None:
            return
        needed = certificates.signer_check(write.subresource, write.obj, write.old)
        if needed is None:
            return
        scope = write.scope
        verb, signer = needed
        for name in (signer, certificates.wildcard_signer(signer)):
            attrs = dataclasses.replace(scope.attrs, verb=verb, api_group=certificates.GROUP, api_version="*",
                                        resource="signers", subresource="", namespace="", name=name, path="")
            allowed, _ = await scope.backends.authz.authorize(attrs, timeout=scope.timeout)
            if allowed:
                return
        raise errors.forbidden(scope.resource.resource, scope.info.name, certificates.refused_message(verb, signer),
                               scope.resource.group)
