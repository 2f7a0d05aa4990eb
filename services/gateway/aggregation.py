"""API aggregation (apiregistration.k8s.io/v1 APIService): proxy /apis/<group>/<version>/... to extension servers.

Every gateway watches APIServices. One with ``spec.service`` is *remote*:
requests under ``/apis/<group>/<version>`` (after authentication, flow
control and authorization, as kube-apiserver's aggregator) are proxied to
an endpoint of that Service — resolved from its Endpoints, as
kube-apiserver's ``--enable-aggregator-routing`` does — over TLS verified
with ``spec.caBundle`` (server name ``<service>.<namespace>.svc``) or not at
all with ``insecureSkipTLSVerify``. The gateway presents
``--proxy-client-cert-file`` and says who the user is with the front-proxy
headers ``X-Remote-User``, ``X-Remote-Group`` (one per group) and
``X-Remote-Extra-<key>`` (key percent-encoded); the client's own
credentials and any X-Remote-* headers it sent are dropped. Without
``spec.service`` the APIService is *Local* (served by kapi itself).

A health check (every :data:`CHECK_INTERVAL` seconds) GETs each remote
group-version's discovery document; the ``Available`` condition follows it
(written with a conditional update, so any number of gateways agree), and the
document feeds the merged discovery (``/apis`` legacy and aggregated).
Sources: "Configure the Aggregation Layer", "Kubernetes API Aggregation
Layer", kube-aggregator ``pkg/apiserver/handler_proxy.go`` and
``pkg/controllers/status``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import ssl
import urllib.parse
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web

from kapi import apiregistration, crd, errors, grpcutil, jsonutil
from kapi.attributes import UserInfo
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import discovery, endpoints, openapi
from services.gateway.dynamic import Watcher

log = logging.getLogger(__name__)

GROUP = "apiregistration.k8s.io"
RESOURCE = "apiservices"
CHECK_INTERVAL = 5.0  # seconds between availability checks
CHECK_TIMEOUT = 5.0
_HOP_HEADERS = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
                          "transfer-encoding", "upgrade", "host", "authorization", "content-length"})


@dataclass(frozen=True)
class Target:
    """Where a remote group-version is served: a base URL, the TLS context and the server name to verify."""

    name: str  # the APIService, e.g. v1alpha1.wardle.example.com
    base_url: str
    ssl_context: ssl.SSLContext
    server_hostname: str


def _client_context(ca_bundle: str, insecure: bool, cert_file: str, key_file: str) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    if insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif ca_bundle:
        context.load_verify_locations(cadata=base64.b64decode(ca_bundle).decode())
    if cert_file:
        context.load_cert_chain(cert_file, key_file or None)
    return context


def remote_headers(user: UserInfo) -> list[tuple[str, str]]:
    """The front-proxy headers naming ``user``: X-Remote-User, X-Remote-Group per group, X-Remote-Extra-<key>."""
    out = [("X-Remote-User", user.username)]
    out += [("X-Remote-Group", g) for g in user.groups]
    for key, values in user.extra:
        for value in values:
            out.append((f"X-Remote-Extra-{urllib.parse.quote(key, safe='')}", value))
    return out


class Aggregator:
    """The APIServices this gateway knows, the availability checker, and the proxy.

    ``cert_file``/``key_file``: ``--proxy-client-cert-file``/``--proxy-client-key-file``.
    """

    def __init__(self, storage: Any, cert_file: str = "", key_file: str = ""):
        self.storage = storage
        self.cert_file, self.key_file = cert_file, key_file
        self.services: dict[str, dict[str, Any]] = {}
        self.discovery: dict[str, dict[str, Any]] = {}  # APIService name -> its last APIResourceList
        self._watcher = Watcher(storage, GROUP, RESOURCE, self._changed)
        self._session: aiohttp.ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()  # set when an APIService needs a status write before the next periodic pass

    def start(self) -> None:
        """Start watching APIServices and checking the remote ones."""
        self._watcher.start()
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._check_loop(), name="apiservice-checks")

    async def stop(self) -> None:
        """Stop the watch, the checks and the HTTP client."""
        await self._watcher.stop()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        if self._session is not None:
            await self._session.close()

    def _changed(self, items: dict[str, dict[str, Any]]) -> None:
        self.services = {name: obj for name, obj in items.items() if _spec(obj).get("service")}
        for name in list(self.discovery):
            if name not in self.services:
                del self.discovery[name]
        if any(_needs_status(obj) for obj in items.values()):
            self._wake.set()

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(auto_decompress=False, timeout=aiohttp.ClientTimeout(total=None))
        return self._session

    # --- routing -------------------------------------------------------------------------------------------

    def remote_for(self, path: str) -> dict[str, Any] | None:
        """The remote APIService serving ``path`` (``/apis/<group>/<version>[/...]``), or None."""
        parts = path.strip("/").split("/")
        if len(parts) < 3 or parts[0] != "apis":
            return None
        return self.services.get(f"{parts[2]}.{parts[1]}")

    def remote_group(self, path: str) -> list[dict[str, Any]]:
        """The remote APIServices of the group ``path`` names exactly (``/apis/<group>``)."""
        parts = path.strip("/").split("/")
        if len(parts) != 2 or parts[0] != "apis":
            return []
        return [s for s in self.services.values() if _spec(s).get("group") == parts[1]]

    async def target(self, apiservice: dict[str, Any], timeout: float) -> Target:
        """Resolve an APIService's Service to one ready endpoint; 503 ServiceUnavailable when there is none."""
        spec = _spec(apiservice)
        svc = spec.get("service") or {}
        namespace, name, port = str(svc.get("namespace") or ""), str(svc.get("name") or ""), int(svc.get("port") or 443)
        service_name = apiservice["metadata"]["name"]
        try:
            host, chosen = await endpoints.resolve(self.storage, namespace, name, port, timeout)
        except errors.StatusError as err:
            if err.code == 503 and "not found" in err.message:
                raise errors.unavailable(f'service "{namespace}/{name}" for APIService {service_name} not found') \
                    from None
            raise
        context = _client_context(str(spec.get("caBundle") or ""), bool(spec.get("insecureSkipTLSVerify")),
                                  self.cert_file, self.key_file)
        return Target(service_name, f"https://{host}:{chosen}", context, f"{name}.{namespace}.svc")

    async def proxy(self, request: web.Request, apiservice: dict[str, Any], user: UserInfo, timeout: float
                    ) -> web.StreamResponse:
        """Forward ``request`` to the APIService's server as ``user``; streams the answer (watches too)."""
        target = await self.target(apiservice, timeout)
        headers = [(k, v) for k, v in request.headers.items()
                   if k.lower() not in _HOP_HEADERS and not k.lower().startswith(("x-remote-", "impersonate-"))]
        headers += remote_headers(user)
        body = await request.read()
        try:
            upstream = await self._http().request(
                request.method, target.base_url + request.path_qs, headers=headers, data=body or None,
                ssl=target.ssl_context, server_hostname=target.server_hostname, allow_redirects=False)
        except (aiohttp.ClientError, OSError, ssl.SSLError, ValueError) as exc:
            # ValueError: a user string no header may carry (a CR or LF in an OIDC claim or a certificate's CN);
            # Go's client refuses it too, and kube answers this 503 instead of sending the header.
            raise errors.unavailable(f'error trying to reach service: {exc}') from None
        async with upstream:
            response = web.StreamResponse(status=upstream.status)
            for key, value in upstream.headers.items():
                if key.lower() not in _HOP_HEADERS:
                    response.headers.add(key, value)
            await response.prepare(request)
            async for chunk in upstream.content.iter_any():
                await response.write(chunk)
            await response.write_eof()
            return response

    async def serve(self, request: web.Request, path: str, user: UserInfo, timeout: float
                    ) -> web.StreamResponse | None:
        """Answer what aggregation owns, after authorization; None for everything else.

        ``/apis/<group>/<version>/...`` of a remote APIService is proxied, and so is its
        ``/openapi/v3/apis/<group>/<version>`` (listed in the merged ``/openapi/v3`` index);
        ``/apis/<group>`` of a remote group is its APIGroup; ``/apis``
        (legacy and aggregated discovery) merges the remote groups into kapi's.
        """
        remote = self.remote_for(path.removeprefix("/openapi/v3"))
        if remote is not None:  # the group-version itself, or its OpenAPI v3 document
            return await self.proxy(request, remote, user, timeout)
        clean = path.rstrip("/")
        if clean == "/apis":  # local and remote groups, ordered by the APIServices (kapi.apiregistration)
            apiservices = list(self._watcher.items.values())
            aggregated = discovery.wants_aggregated(request.headers.get("Accept", ""))
            if aggregated:  # rebuilt when a CRD, an APIService's spec or a remote document changes
                key = jsonutil.dumps([[(o.get("metadata") or {}).get("name"), _spec(o)] for o in apiservices]
                                     ) + jsonutil.dumps(self.discovery)
                document = discovery.aggregated_document(False, aggregated, apiservices=apiservices,
                                                         remote=self.remote_version, key=key)
                return discovery.aggregated_response(request.headers, aggregated, *document)
            return discovery.legacy_response(request, discovery.group_list(apiservices=apiservices))
        if not self.services:
            return None
        if clean == "/openapi/v3":
            index = jsonutil.loads(openapi.index())
            for svc in self.services.values():
                gv = f"apis/{_spec(svc).get('group')}/{_spec(svc).get('version')}"
                index["paths"][gv] = {"serverRelativeURL": f"/openapi/v3/{gv}"}
            return _json(index)
        versions = self.groups()
        parts = clean.strip("/").split("/")
        if len(parts) == 2 and parts[0] == "apis" and parts[1] in versions:
            remote_group = _Remote(parts[1], versions[parts[1]])
            return discovery.legacy_response(request, discovery.group(parts[1], remote_group)  # type: ignore[arg-type]
                                             or {})
        return None

    # --- discovery -----------------------------------------------------------------------------------------

    def groups(self) -> dict[str, list[str]]:
        """Remote groups -> versions, by versionPriority (highest first), for /apis."""
        out: dict[str, list[tuple[int, tuple[int, int, int, str], str]]] = {}
        for svc in self.services.values():
            spec = _spec(svc)
            version = str(spec.get("version") or "")
            out.setdefault(str(spec.get("group") or ""), []).append(
                (-int(spec.get("versionPriority") or 0), crd.version_priority(version), version))
        return {g: [v for *_, v in sorted(vs)] for g, vs in sorted(out.items()) if g}

    def remote_version(self, grp: str, version: str) -> dict[str, Any] | None:
        """The APIVersionDiscovery entry of a remote group-version from its last discovery document
        (``Stale`` and empty until one was fetched); None if no remote APIService serves it."""
        name = f"{version}.{grp}"
        if name not in self.services:
            return None
        doc = self.discovery.get(name) or {}
        resources = []
        for r in doc.get("resources") or []:
            if "/" in str(r.get("name")):
                continue
            resources.append({
                "resource": r.get("name"), "singularResource": r.get("singularName") or "",
                "scope": "Namespaced" if r.get("namespaced") else "Cluster", "verbs": r.get("verbs") or [],
                "responseKind": {"group": grp, "version": version, "kind": r.get("kind")},
                **({"shortNames": r["shortNames"]} if r.get("shortNames") else {}),
                **({"categories": r["categories"]} if r.get("categories") else {})})
        return {"version": version, "resources": resources, "freshness": "Current" if doc else "Stale"}

    def aggregated_items(self) -> list[dict[str, Any]]:
        """APIGroupDiscovery items of the remote groups, built from their last discovery documents."""
        items = []
        for grp, versions in self.groups().items():
            entries = [e for v in versions if (e := self.remote_version(grp, v)) is not None]
            items.append({"metadata": {"name": grp, "creationTimestamp": None}, "versions": entries})
        return items

    # --- availability -------------------------------------------------------------------------------------

    async def _check_loop(self) -> None:
        while True:
            self._wake.clear()
            for name, obj in list(self._watcher.items.items()):
                try:
                    if name in self.services:
                        await self._check(name, obj)
                    elif _needs_status(obj):  # Local: always available (kube's AvailableConditionController)
                        await self._write_condition(name, "True", apiregistration.LOCAL_REASON,
                                                    apiregistration.LOCAL_MESSAGE)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("checking APIService %s", name)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CHECK_INTERVAL):
                    await self._wake.wait()

    async def _check(self, name: str, svc: dict[str, Any]) -> None:
        spec = _spec(svc)
        path = f"/apis/{spec.get('group')}/{spec.get('version')}"
        status, reason, message = "True", "Passed", "all checks passed"
        try:
            target = await self.target(svc, CHECK_TIMEOUT)
            async with self._http().get(target.base_url + path, ssl=target.ssl_context,
                                        server_hostname=target.server_hostname,
                                        headers=remote_headers(UserInfo("system:kube-aggregator",
                                                                        groups=("system:masters",))),
                                        timeout=aiohttp.ClientTimeout(total=CHECK_TIMEOUT)) as resp:
                if resp.status != 200:
                    status, reason = "False", "FailedDiscoveryCheck"
                    message = f"failing or missing response from {target.base_url}{path}: bad status from " \
                              f"{target.base_url}{path}: {resp.status}"
                else:
                    self.discovery[name] = await resp.json(content_type=None)
        except errors.StatusError as err:
            status, reason = "False", "EndpointsNotFound" if "endpoints" in err.message else "ServiceNotFound"
            message = err.message
        except (aiohttp.ClientError, OSError, ssl.SSLError, TimeoutError, ValueError) as exc:
            status, reason, message = "False", "FailedDiscoveryCheck", f"failing or missing response from {path}: {exc}"
        if status != "True":
            self.discovery.pop(name, None)
        await self._write_condition(name, status, reason, message)

    async def _write_condition(self, name: str, status: str, reason: str, message: str) -> None:
        """Set the Available condition of APIService ``name`` with a conditional update (a lost race is fine:
        the watch brings the winner's object and the next pass looks again)."""
        current = self._watcher.items.get(name)
        if current is None:
            return
        updated = jsonutil.loads(jsonutil.dumps(current))
        if crd.set_condition(updated, "Available", status, reason, message):
            meta = updated["metadata"]
            with contextlib.suppress(errors.StatusError):
                await grpcutil.call("storage", self.storage.Update, storage_pb2.UpdateRequest(
                    key=storage_pb2.ResourceKey(group=GROUP, resource=RESOURCE, name=meta["name"]),
                    object=jsonutil.dumps(updated), expected_resource_version=int(meta.get("resourceVersion") or 0)),
                    timeout=CHECK_TIMEOUT)


class _Remote:
    """The ``groups()`` view discovery.py reads, over remote groups."""

    def __init__(self, name: str, versions: list[str], groups: dict[str, list[str]] | None = None):
        self._groups = groups if groups is not None else {name: versions}

    def groups(self) -> dict[str, list[str]]:
        return self._groups


def _json(body: dict[str, Any], content_type: str = "application/json") -> web.Response:
    # as kube's JSON serializer writes a discovery document: HTML-escaped, json.Encoder's trailing newline
    response = web.Response(body=jsonutil.go_escape(jsonutil.dumps(body)) + b"\n", status=200)
    response.headers["Content-Type"] = content_type
    return response


def _needs_status(obj: dict[str, Any]) -> bool:
    """True for a Local APIService whose Available condition is not yet True/Local, or a remote one without any."""
    current = crd.condition(obj, "Available")
    if not _spec(obj).get("service"):
        return current is None or (current.get("status"), current.get("reason")) != ("True",
                                                                                       apiregistration.LOCAL_REASON)
    return current is None


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}
