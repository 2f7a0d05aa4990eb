"""The ``kapi.admission.v1.Admission`` servicer: decode AdmitRequest -> :class:`Admitter` -> AdmitResponse.

The unary ``Admit`` and the multiplexed ``Call`` stream run one work
function (:meth:`AdmissionServicer.admit`), so they answer alike; the
server's caller check (``--allowed-callers``,
:class:`kapi.grpcutil.CallerInterceptor`) guards both.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

import grpc

from kapi import attributes, errors, grpcmux
from kapi_proto.kapi.admission.v1 import admission_pb2, admission_pb2_grpc
from services.admission.pipeline import Admitter

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 10.0  # seconds for plugin calls when the caller set no deadline
MIN_TIMEOUT = 0.05


class AdmissionServicer(admission_pb2_grpc.AdmissionServicer):
    """Runs one admission pipeline per Admit call, unary or on a Call stream."""

    def __init__(self, admitter: Admitter):
        self._admitter = admitter
        self._work: dict[str, grpcmux.Work] = {"admit": self.admit}
        # Calls of Call streams still running (all streams): what a stream's end must cancel; read by tests.
        self.stream_calls: set[asyncio.Task[None]] = set()

    async def admit(self, request: admission_pb2.AdmitRequest, timeout: float | None) -> admission_pb2.AdmitResponse:
        """The work function of Admit: the answer to ``request``, plugin and webhook calls bounded by ``timeout``
        seconds (the caller's deadline, at least 50 ms; None: 10 s). Raises the refusal's StatusError; anything
        unexpected is logged and raised as 500 InternalError."""
        timeout = max(timeout, MIN_TIMEOUT) if timeout is not None else DEFAULT_TIMEOUT
        try:
            result = await self._admitter.admit(
                request.operation, attributes.decode(request.attributes), request.kind, request.object,
                request.old_object, dry_run=request.dry_run, field_validation=request.field_validation,
                timeout=timeout, patch_type=request.patch_type, patch_value=request.patch_value,
                options=request.options, skip_plugins=request.skip_plugins)
        except errors.StatusError:
            raise
        except Exception as exc:  # never a crash: a 500 with the cause logged
            log.exception("admission of %s %s failed", request.operation, request.kind)
            raise errors.internal(str(exc)) from None
        return admission_pb2.AdmitResponse(object=result.object, warnings=result.warnings,
                                           audit_annotations=result.audit_annotations)

    async def Admit(self, request: admission_pb2.AdmitRequest,  # noqa: N802
                    context: grpc.aio.ServicerContext) -> admission_pb2.AdmitResponse:
        """Admit one write (k8s.io/apiserver admission chain plus the registry strategy).

        Fails with the refusal's Status: INVALID_ARGUMENT (400 BadRequest /
        422 Invalid), PERMISSION_DENIED (403), NOT_FOUND (404), UNAVAILABLE
        (503, storage unreachable); anything unexpected is 500 InternalError.
        """
        try:
            return await self.admit(request, context.time_remaining())
        except errors.StatusError as err:
            await errors.abort(context, err)
        raise AssertionError("abort returned")

    async def Call(self, request_iterator: AsyncIterator[admission_pb2.AdmitCallRequests],  # noqa: N802
                   context: grpc.aio.ServicerContext) -> AsyncIterator[admission_pb2.AdmitCallResponses]:
        """Serve Admit calls multiplexed on one stream (admission.proto ``Call``, :func:`kapi.grpcmux.serve`).

        Each call runs as its own task through :meth:`admit` (as the unary
        Admit, its ``timeout_seconds`` the deadline); answers go out batched in
        completion order, each with its request's id: the AdmitResponse, or a
        ``CallError`` with the gRPC code, message and Status JSON the unary
        Admit would have failed with (422 Invalid with its causes, 403 from a
        webhook or policy, ...). A call past its timeout, or cancelled by the
        caller, is cancelled and not answered; the stream's end cancels the
        running calls.
        """
        # aclosing: the stream's end (grpc closes this generator) cancels the running calls at once, not when
        # the inner generator is collected.
        async with contextlib.aclosing(grpcmux.serve(grpcmux.ADMISSION, self._work, request_iterator, context,
                                                     running=self.stream_calls)) as answers:
            async for responses in answers:
                yield responses
