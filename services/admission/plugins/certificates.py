"""CertificateSubjectRestriction (k8s.io/kubernetes plugin/pkg/admission/certificates/subjectrestriction).

A CertificateSigningRequest for the ``kubernetes.io/kube-apiserver-client``
signer whose subject names the organization ``system:masters`` is refused
on create (403 ``use of kubernetes.io/kube-apiserver-client signer with
system:masters group is not allowed``). The signer permission plugins
(CertificateApproval, CertificateSigning) need an authorizer and run in the
gateway (services/gateway/registry/certificates.py).
"""

from __future__ import annotations

from kapi import certificates, errors
from services.admission.chain import CREATE, AdmissionRequest


class CertificateSubjectRestriction:
    """Refuses kube-apiserver-client CSRs for the system:masters group."""

    name = "CertificateSubjectRestriction"

    def handles(self, operation: str) -> bool:
        """CREATE."""
        return operation == CREATE

    async def validate(self, request: AdmissionRequest) -> None:
        """403 for a CSR of the kube-apiserver-client signer asking for system:masters."""
        res = request.resource
        if (res.group, res.resource) != (certificates.GROUP, certificates.RESOURCE) or request.subresource \
                or request.object is None:
            return
        message = certificates.subject_restriction(request.object)
        if message:
            raise errors.forbidden(res.resource, request.name, message, res.group)
