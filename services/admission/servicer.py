"""The ``kapi.admission.v1.Admission`` servicer: decode AdmitRequest -> :class:`Admitter` -> AdmitResponse."""

from __future__ import annotations

import logging

import grpc

from kapi import errors
from kapi.attributes import Attributes
from kapi_proto.kapi.admission.v1 import admission_pb2, admission_pb2_grpc
from services.admission.pipeline import Admitter

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 10.0  # seconds for plugin calls when the caller set no deadline
MIN_TIMEOUT = 0.05


class AdmissionServicer(admission_pb2_grpc.AdmissionServicer):
    """Runs one admission pipeline per Admit call."""

    def __init__(self, admitter: Admitter):
        self._admitter = admitter

    async def Admit(self, request: admission_pb2.AdmitRequest,  # noqa: N802
                    context: grpc.aio.ServicerContext) -> admission_pb2.AdmitResponse:
        """Admit one write (k8s.io/apiserver admission chain plus the registry strategy).

        Fails with the refusal's Status: INVALID_ARGUMENT (400 BadRequest /
        422 Invalid), PERMISSION_DENIED (403), NOT_FOUND (404), UNAVAILABLE
        (503, storage unreachable); anything unexpected is 500 InternalError.
        """
        remaining = context.time_remaining()
        timeout = max(remaining, MIN_TIMEOUT) if remaining is not None else DEFAULT_TIMEOUT
        failure: errors.StatusError
        try:
            result = await self._admitter.admit(
                request.operation, Attributes.from_proto(request.attributes), request.kind, request.object,
                request.old_object, dry_run=request.dry_run, field_validation=request.field_validation,
                timeout=timeout)
            return admission_pb2.AdmitResponse(object=result.object, warnings=result.warnings,
                                               audit_annotations=result.audit_annotations)
        except errors.StatusError as err:
            failure = err
        except Exception as exc:  # never a crash: a 500 with the cause logged
            log.exception("admission of %s %s failed", request.operation, request.kind)
            failure = errors.internal(str(exc))
        await errors.abort(context, failure)
        raise AssertionError("abort returned")
