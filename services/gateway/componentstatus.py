"""The deprecated core/v1 ``componentstatuses``: the control plane's health, probed at each request, never stored.

kube's REST (pkg/registry/core/componentstatus rest.go, validator.go; the servers from
pkg/registry/core/rest/storage_core.go ``componentStatusStorage.serversToValidate``) serves get and list only:

- ``controller-manager``: an HTTPS GET of ``https://127.0.0.1:10257/healthz`` (kube's ``KubeControllerManagerPort``),
  certificate not verified; ``scheduler``: the same on ``127.0.0.1:10259`` (``DefaultKubeSchedulerPort``). kube's
  HTTP prober (pkg/probe/http ``DoHTTPProbe``): a 2xx answer is Healthy with the body (at most 10 KiB) as the
  message; 3xx after redirects is a Warning (condition status ``Unknown``); 4xx/5xx is ``False`` with
  ``HTTP probe failed with statuscode: <code>``; a transport error is ``False`` with Go's error text as the
  *message* (``Get "https://127.0.0.1:10259/healthz": dial tcp 127.0.0.1:10259: connect: connection refused``),
  the condition's ``error`` staying empty.
- ``etcd-<i>``: one per storage backend configuration (kapi has one: ``etcd-0``), ``True``/``ok`` when etcd
  answers, else ``False`` with an empty message and the error ``error getting data from etcd: context deadline
  exceeded`` (kube's etcd3 prober reads a key with a 2 s deadline). kapi asks storage: the gateway's
  :class:`~services.gateway.healthz.StorageHealth`, which follows storage's gRPC health (NOT_SERVING while etcd
  does not answer a linearizable read within 2 s), the same source as the ``etcd`` check of ``/readyz``.

kapi runs no scheduler, and its controllers service (kapi's kube-controller-manager) serves no ``/healthz``, so
both probes find nothing on the gateway's loopback and show Unhealthy with the dial error, exactly what kube shows
for a component not running beside kube-apiserver. kube answers the list in the order its probes finish (a Go map
and a channel); kapi answers controller-manager, scheduler, then the etcd servers. A list filters by the label and
field selectors (``metadata.name``; the objects carry no labels); a get of another name is kube's plain Go error,
500 with no reason: ``Component not found: <name>``.
"""

from __future__ import annotations

import asyncio
import errno
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web

from kapi import errors, listoptions
from kapi.selectors import DEFAULT_FIELD_LABELS, SelectorError, parse_field_selector, parse_label_selector
from services.gateway import negotiation, table
from services.gateway.scope import RequestScope

# kube's deprecated-API warning (k8s.io/apiserver pkg/endpoints/deprecation WarningMessage) for a kind whose
# APILifecycleDeprecated is 1.19 (k8s.io/api core/v1 lifecycle.go), sent with every get and list.
DEPRECATED_WARNING = "v1 ComponentStatus is deprecated in v1.19+"

CONTROLLER_MANAGER_PORT = 10257  # k8s.io/cloud-provider ports.KubeControllerManagerPort
SCHEDULER_PORT = 10259  # kubeschedulerconfig.DefaultKubeSchedulerPort
PROBE_TIMEOUT = 20.0  # seconds, validator.go probeTimeOut
MAX_BODY = 10 * 1024  # bytes of a probe's answer kept as the message (pkg/probe/http maxRespBodyLength)
ETCD_ERROR = "error getting data from etcd: context deadline exceeded"


@dataclass(frozen=True)
class Probe:
    """One check's outcome: the Healthy condition's ``status`` ("True", "False", "Unknown"), message, error."""

    status: str
    message: str = ""
    error: str = ""


Check = Callable[[float], Awaitable[Probe]]  # timeout in seconds -> outcome


@dataclass(frozen=True)
class HTTPServer:
    """A component probed over HTTP(S) at ``<scheme>://<addr>:<port><path>`` (validator.go ``HttpServer``)."""

    addr: str
    port: int
    path: str = "/healthz"
    https: bool = True

    @property
    def url(self) -> str:
        """The probed URL, as utilnet.FormatURL writes it."""
        return f"{'https' if self.https else 'http'}://{self.addr}:{self.port}{self.path}"

    async def check(self, timeout: float) -> Probe:
        """GET the URL within ``timeout`` seconds (certificates not verified) and judge it as DoHTTPProbe does."""
        try:
            connector = aiohttp.TCPConnector(ssl=False)
            async with aiohttp.ClientSession(connector=connector) as session:
                async with session.get(self.url, timeout=aiohttp.ClientTimeout(total=timeout),
                                       headers={"Accept": "*/*"}) as response:
                    body = (await response.content.read(MAX_BODY)).decode("utf-8", "replace")
                    code = response.status
        except TimeoutError:
            return Probe("False", f'Get "{self.url}": context deadline exceeded '
                                  "(Client.Timeout exceeded while awaiting headers)")
        except aiohttp.ClientConnectorError as exc:
            return Probe("False", f'Get "{self.url}": {self._dial_error(exc.os_error)}')
        except (aiohttp.ClientError, OSError) as exc:
            return Probe("False", f'Get "{self.url}": {exc}')
        if 200 <= code < 300:
            return Probe("True", body)
        if 300 <= code < 400:
            return Probe("Unknown", body)  # probe.Warning
        return Probe("False", f"HTTP probe failed with statuscode: {code}")

    def _dial_error(self, exc: OSError) -> str:
        """Go's net.OpError text of a failed connect: ``dial tcp <addr>:<port>: connect: <syscall error>``."""
        reason = "connection refused" if exc.errno == errno.ECONNREFUSED else (exc.strerror or str(exc)).lower()
        return f"dial tcp {self.addr}:{self.port}: connect: {reason}"


def _etcd_check(scope: RequestScope) -> Check:
    """etcd as storage reports it (healthz.StorageHealth; none, as in unit tests without a stream: healthy)."""

    async def check(timeout: float) -> Probe:
        health = scope.backends.storage_health
        if health is not None and health.reason:
            return Probe("False", "", ETCD_ERROR)
        return Probe("True", "ok")

    return check


def servers(scope: RequestScope) -> dict[str, Check]:
    """The components kube validates, by name, in kapi's answer order (controller-manager, scheduler, etcd-0)."""
    return {
        "controller-manager": HTTPServer("127.0.0.1", CONTROLLER_MANAGER_PORT).check,
        "scheduler": HTTPServer("127.0.0.1", SCHEDULER_PORT).check,
        "etcd-0": _etcd_check(scope),
    }


async def component_status(name: str, check: Check, timeout: float) -> dict[str, Any]:
    """One ComponentStatus object (rest.go getComponentStatus): its name and one Healthy condition."""
    probe = await check(min(PROBE_TIMEOUT, timeout))
    condition = {"type": "Healthy", "status": probe.status}
    if probe.message:
        condition["message"] = probe.message
    if probe.error:
        condition["error"] = probe.error
    return {"kind": "ComponentStatus", "apiVersion": "v1", "metadata": {"name": name, "creationTimestamp": None},
            "conditions": [condition]}


def _respond(scope: RequestScope, body: dict[str, Any], objects: list[dict[str, Any]]) -> web.Response:
    """The answer in the negotiated form; a Table's metadata is empty (the objects have no resourceVersion)."""
    if scope.output.table:
        return scope.respond(table.table(scope.resource, objects, {},
                                         negotiation.include_object(scope.param("includeObject")),
                                         scope.output.version))
    return scope.respond(body, composed=True)


async def get(scope: RequestScope) -> web.Response:
    """GET /api/v1/componentstatuses/<name>: probe that component; 500 ``Component not found: <name>``."""
    check = servers(scope).get(scope.info.name)
    if check is None:
        raise errors.StatusError(500, "", f"Component not found: {scope.info.name}")
    obj = await component_status(scope.info.name, check, scope.timeout)
    return _respond(scope, obj, [obj])


async def list_(scope: RequestScope) -> web.Response:
    """GET /api/v1/componentstatuses: probe every component at once, keep those the selectors select.

    Raises 400 for a malformed selector or a field other than metadata.name/metadata.namespace (``field label
    not supported: <field>``) before probing, 422 for ListOptions kube's ValidateListOptions refuses.
    """
    listoptions.check_list_options(scope.query, watch=False)
    try:
        labels = parse_label_selector(scope.param("labelSelector"))
        fields = parse_field_selector(scope.param("fieldSelector"), DEFAULT_FIELD_LABELS)
    except SelectorError as exc:
        raise errors.bad_request(str(exc)) from None
    checks = servers(scope)
    items = await asyncio.gather(*(component_status(name, check, scope.timeout) for name, check in checks.items()))
    selected = [item for item in items if labels.matches(None)
                and fields.matches({"metadata.name": item["metadata"]["name"], "metadata.namespace": ""})]
    body = {"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {},
            "items": [{k: v for k, v in item.items() if k not in ("kind", "apiVersion")} for item in selected]}
    return _respond(scope, body, selected)


HANDLERS: dict[str, Callable[[RequestScope], Awaitable[web.Response]]] = {"get": get, "list": list_}
