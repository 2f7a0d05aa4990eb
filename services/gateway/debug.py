"""API Priority and Fairness as users see it at the gateway: debug dumps, PF headers.

- ``/debug/api_priority_and_fairness/dump_priority_levels``, ``dump_queues``,
  ``dump_requests`` (``?includeRequestDetails=`` any non-empty value):
  kube-apiserver 1.37's columns and layout (``,``-separated cells through
  Go's tabwriter, apf_controller_debug.go), read from the flowcontrol
  service (which holds the cluster-wide state);
  ``dump_seats`` lists the requests holding seats now (user, flow schema,
  verb, path, age; kubernetes issue 118746). They are non-resource GETs,
  authorized like any other path before they get here.
- ``X-Kubernetes-PF-FlowSchema-UID`` and ``X-Kubernetes-PF-PriorityLevel-UID``
  on every response that went through flow control, 429s included.
- The local max-in-flight fallback while the flowcontrol stream is down
  does not fail readiness (docs/architecture.md, "Failure policy"); it
  shows as ``kapi_flowcontrol_local_fallback 1`` in ``/metrics``.

Source: "API Priority and Fairness", "Debug endpoints" and "Good practices".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiohttp import web

from kapi import errors, gofmt
from services.gateway.flowcontrol import Seat

if TYPE_CHECKING:
    from services.gateway.backends import Backends

PREFIX = "/debug/api_priority_and_fairness/"
DUMPS = {"dump_priority_levels": "priority_levels", "dump_queues": "queues", "dump_requests": "requests",
         "dump_seats": "seats"}
SEAT_KEY = "kapi.flowcontrol.seat"
FLOW_SCHEMA_UID = "X-Kubernetes-PF-FlowSchema-UID"
PRIORITY_LEVEL_UID = "X-Kubernetes-PF-PriorityLevel-UID"


def handles(path: str) -> bool:
    """True for the APF debug paths."""
    return path.startswith(PREFIX)


async def respond(path: str, query: Any, backends: Backends, timeout: float) -> web.Response:
    """The dump named by ``path`` as text/plain; 404 for an unknown dump, 503 if flowcontrol is unreachable."""
    kind = DUMPS.get(path[len(PREFIX):].rstrip("/"))
    if kind is None:
        raise errors.StatusError(404, "NotFound", "the server could not find the requested resource")
    details = bool(query.get("includeRequestDetails", ""))  # kube: any non-empty value
    text = await backends.flowcontrol.dump(kind, details, timeout)
    return web.Response(text=text, content_type="text/plain")


def new_seat(request: web.Request, long_running: bool) -> Seat:
    """A :class:`Seat` holder remembered on the request (for the PF headers and the early release)."""
    seat = Seat(long_running)
    request[SEAT_KEY] = seat
    return seat


def list_limit(query: Any) -> int:
    """A LIST's ``?limit=`` as an int (0 when absent, malformed or past int64; the handler reports those)."""
    try:
        return max(0, gofmt.parse_int64(query.get("limit", "") or "0"))
    except ValueError:
        return 0


def set_pf_headers(request: web.Request, response: web.StreamResponse, *, preparing: bool = False) -> None:
    """Add the PF UID headers (when flow control classified the request) to a response not yet sent
    (``preparing``: called from the prepare hook, where aiohttp already counts the response as prepared but has
    not written its headers)."""
    seat = request.get(SEAT_KEY)
    if seat is None or (response.prepared and not preparing) or not seat.flow_schema_uid:
        return
    response.headers[FLOW_SCHEMA_UID] = seat.flow_schema_uid
    response.headers[PRIORITY_LEVEL_UID] = seat.priority_level_uid


async def on_response_prepare(request: web.Request, response: web.StreamResponse) -> None:
    """aiohttp ``on_response_prepare``: PF headers on streamed responses (a watch: kube's WithPriorityAndFairness
    sets them on every classified request); a watch gives its seat back now."""
    set_pf_headers(request, response, preparing=True)
    seat = request.get(SEAT_KEY)
    if seat is not None and seat.long_running:
        seat.release()
