"""The signer permissions of CertificateSigningRequest writes (kube's CertificateApproval and CertificateSigning).

kube-apiserver's admission plugins ask the authorizer whether the user may
``approve`` (a write to ``certificatesigningrequests/approval``) or
``sign`` (a ``/status`` write that changes ``status.certificate``)
``signers`` in ``certificates.k8s.io`` named by the request's signerName,
or by ``<domain>/*`` (``IsAuthorizedForSignerName``); a refusal is 403
``certificatesigningrequests.certificates.k8s.io "x" is forbidden: user not
permitted to approve requests with signerName "y"``. The admission service
has no authorizer, so the gateway, which holds the stored object and the
authz client, asks before admission. Source: "Certificates and Certificate
Signing Requests: Authorization".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from kapi import certificates, errors, jsonutil
from services.gateway.scope import RequestScope


async def check_signer(scope: RequestScope, obj: Mapping[str, Any], old: bytes) -> None:
    """Refuse (403) an approval or certificate write the user may not make for the CSR's signerName.

    ``obj`` is the object to be written, ``old`` the stored object's JSON.
    Other resources and writes return at once. Raises 503 if authz is unreachable.
    """
    resource = scope.resource
    if (resource.group, resource.resource) != (certificates.GROUP, certificates.RESOURCE) or not old:
        return
    stored = jsonutil.loads(old)
    needed = certificates.signer_check(scope.info.subresource, dict(obj), stored if isinstance(stored, dict) else {})
    if needed is None:
        return
    verb, signer = needed
    for name in (signer, certificates.wildcard_signer(signer)):
        attrs = dataclasses.replace(scope.attrs, verb=verb, api_group=certificates.GROUP, api_version="*",
                                    resource="signers", subresource="", namespace="", name=name, path="")
        allowed, _ = await scope.backends.authz.authorize(attrs, timeout=scope.timeout)
        if allowed:
            return
    raise errors.forbidden(resource.resource, scope.info.name, certificates.refused_message(verb, signer),
                           resource.group)
