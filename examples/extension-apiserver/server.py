"""An example extension API server for kapi's (or kube-apiserver's) aggregation layer: ``wardle.example.com/v1alpha1``.

It serves one namespaced resource, ``flunders`` (kind Flunder, kept in
memory: list, get, create, delete), and the discovery documents
``/apis``, ``/apis/wardle.example.com`` and
``/apis/wardle.example.com/v1alpha1``. It authenticates every request the
way an aggregated server must ("Configure the Aggregation Layer"): the
caller's TLS client certificate must be signed by
``--requestheader-client-ca-file`` and its CN be in
``--requestheader-allowed-names``; the user then comes from the
``--requestheader-username-headers`` (``X-Remote-User``), groups from
``--requestheader-group-headers`` (``X-Remote-Group``) and extra from
``--requestheader-extra-headers-prefix`` (``X-Remote-Extra-``). Anything
else is 401. Each created Flunder records its creator in the annotation
``wardle.example.com/created-by``; ``GET /apis/wardle.example.com/v1alpha1/whoami``
(non-standard) answers the user as the server saw it, and every request is
logged as one JSON line (user, groups, method, path) on stdout.

    python server.py --tls-cert-file tls.crt --tls-private-key-file tls.key \\
        --requestheader-client-ca-file ca.crt --port 9448 [--port-file FILE]

or, instead of the ``--requestheader-*`` flags, ``--authentication-kubeconfig
KUBECONFIG``: the front-proxy CA, allowed names and headers are then read,
as kube's delegated authentication does, from the ConfigMap
``kube-system/extension-apiserver-authentication`` the API server publishes
(reading it needs the Role ``extension-apiserver-authentication-reader``).

Register it with a Service + Endpoints pointing at the server and an
APIService ``v1alpha1.wardle.example.com`` (see README.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import ssl
import sys
import urllib.parse
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiohttp import web

GROUP, VERSION = "wardle.example.com", "v1alpha1"
GV = f"{GROUP}/{VERSION}"


def _status(code: int, reason: str, message: str) -> web.Response:
    return web.json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                              "message": message, "reason": reason, "code": code}, status=code)


class Server:
    """The request-header authenticator and the flunders store."""

    def __init__(self, args: argparse.Namespace):
        self.allowed = {n.strip() for n in args.requestheader_allowed_names.split(",") if n.strip()}
        self.user_headers = [h.strip() for h in args.requestheader_username_headers.split(",") if h.strip()]
        self.group_headers = [h.strip() for h in args.requestheader_group_headers.split(",") if h.strip()]
        self.extra_prefixes = [h.strip() for h in args.requestheader_extra_headers_prefix.split(",") if h.strip()]
        self.flunders: dict[tuple[str, str], dict[str, Any]] = {}
        self.revision = 1

    def authenticate(self, request: web.Request) -> dict[str, Any] | None:
        """The user named by the request headers, when a trusted front proxy sent them; else None."""
        ssl_object = request.transport.get_extra_info("ssl_object") if request.transport else None
        cert = ssl_object.getpeercert() if ssl_object is not None else None
        if not cert:
            return None
        cn = next((v for rdn in cert.get("subject", ()) for k, v in rdn if k == "commonName"), "")
        if self.allowed and cn not in self.allowed:
            return None
        user = next((request.headers[h] for h in self.user_headers if request.headers.get(h)), "")
        if not user:
            return None
        groups = [v for h in self.group_headers for v in request.headers.getall(h, [])]
        extra: dict[str, list[str]] = {}
        for key, value in request.headers.items():
            for prefix in self.extra_prefixes:
                if key.lower().startswith(prefix.lower()):
                    extra.setdefault(urllib.parse.unquote(key[len(prefix):]).lower(), []).append(value)
        return {"username": user, "groups": groups, "extra": extra}

    async def handle(self, request: web.Request) -> web.StreamResponse:
        user = self.authenticate(request)
        print(json.dumps({"user": user, "method": request.method, "path": request.path}), flush=True)
        if user is None:
            return _status(401, "Unauthorized", "Unauthorized")
        parts = [p for p in request.path.split("/") if p]
        if parts == ["apis"]:
            return web.json_response({"kind": "APIGroupList", "apiVersion": "v1", "groups": [self.group()]})
        if parts == ["apis", GROUP]:
            return web.json_response({"kind": "APIGroup", "apiVersion": "v1", **self.group()})
        if parts == ["apis", GROUP, VERSION]:
            return web.json_response({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": GV, "resources": [
                {"name": "flunders", "singularName": "flunder", "namespaced": True, "kind": "Flunder",
                 "verbs": ["create", "delete", "get", "list"]}]})
        if parts == ["openapi", "v3", "apis", GROUP, VERSION]:
            # client-go compares the media type exactly: no "; charset=utf-8"
            return web.Response(body=json.dumps(openapi_document()).encode(),
                                headers={"Content-Type": "application/json"})
        if parts == ["apis", GROUP, VERSION, "whoami"]:
            return web.json_response({"kind": "WhoAmI", "apiVersion": GV, "user": user})
        if len(parts) in (6, 7) and parts[:3] == ["apis", GROUP, VERSION] and parts[3] == "namespaces" \
                and parts[5] == "flunders":
            return await self.flunder(request, parts[4], parts[6] if len(parts) == 7 else "", user)
        return _status(404, "NotFound", "the server could not find the requested resource")

    def group(self) -> dict[str, Any]:
        version = {"groupVersion": GV, "version": VERSION}
        return {"name": GROUP, "versions": [version], "preferredVersion": version}

    async def flunder(self, request: web.Request, namespace: str, name: str, user: dict[str, Any]
                      ) -> web.Response:
        if request.method == "GET" and not name:
            items = [o for (ns, _), o in sorted(self.flunders.items()) if ns == namespace]
            return web.json_response({"kind": "FlunderList", "apiVersion": GV,
                                      "metadata": {"resourceVersion": str(self.revision)}, "items": items})
        if request.method == "GET":
            found = self.flunders.get((namespace, name))
            return web.json_response(found) if found else _status(404, "NotFound",
                                                                  f'flunders.{GROUP} "{name}" not found')
        if request.method == "POST" and not name:
            try:
                obj = json.loads(await request.read())
            except ValueError:
                return _status(400, "BadRequest", "the body of the request is not JSON")
            meta = obj.setdefault("metadata", {})
            key = (namespace, str(meta.get("name") or ""))
            if not key[1]:
                return _status(422, "Invalid", f'Flunder.{GROUP} "" is invalid: metadata.name: Required value')
            if key in self.flunders:
                return _status(409, "AlreadyExists", f'flunders.{GROUP} "{key[1]}" already exists')
            self.revision += 1
            meta.update({"namespace": namespace, "uid": str(uuid.uuid4()), "resourceVersion": str(self.revision),
                         "creationTimestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")})
            meta.setdefault("annotations", {})[f"{GROUP}/created-by"] = user["username"]
            obj.update({"apiVersion": GV, "kind": "Flunder"})
            self.flunders[key] = obj
            return web.json_response(obj, status=201)
        if request.method == "DELETE" and name:
            if self.flunders.pop((namespace, name), None) is None:
                return _status(404, "NotFound", f'flunders.{GROUP} "{name}" not found')
            return web.json_response({"kind": "Status", "apiVersion": "v1", "status": "Success", "metadata": {}})
        return _status(405, "MethodNotAllowed", f"{request.method} is not supported on flunders")


def openapi_document() -> dict[str, Any]:
    """The OpenAPI v3 document of wardle.example.com/v1alpha1 (kubectl reads it to validate and explain)."""
    gvk = {"group": GROUP, "version": VERSION, "kind": "Flunder"}
    ref = {"$ref": "#/components/schemas/com.example.wardle.v1alpha1.Flunder"}
    ok = {"200": {"description": "OK", "content": {"application/json": {"schema": ref}}}}
    base = f"/apis/{GV}/namespaces/{{namespace}}/flunders"
    return {"openapi": "3.0.0", "info": {"title": "wardle", "version": VERSION},
            "paths": {base: {"get": {"responses": ok, "x-kubernetes-action": "list",
                                     "x-kubernetes-group-version-kind": gvk},
                             "post": {"responses": ok, "x-kubernetes-action": "post",
                                      "x-kubernetes-group-version-kind": gvk}},
                      f"{base}/{{name}}": {"get": {"responses": ok, "x-kubernetes-action": "get",
                                                   "x-kubernetes-group-version-kind": gvk},
                                           # kubectl looks for fieldValidation on a PATCH to decide who validates
                                           "patch": {"responses": ok, "x-kubernetes-action": "patch",
                                                     "parameters": [{"name": "fieldValidation", "in": "query",
                                                                     "schema": {"type": "string"}}],
                                                     "x-kubernetes-group-version-kind": gvk}}},
            "components": {"schemas": {"com.example.wardle.v1alpha1.Flunder": {
                "type": "object", "description": "A Flunder is an example resource of the wardle group.",
                "x-kubernetes-group-version-kind": [gvk],
                "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                               "metadata": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                               "spec": {"type": "object", "description": "What the flunder references.",
                                        "properties": {"reference": {"type": "string"}}}}}}}}


def _kubeconfig_get(kubeconfig: str, path: str) -> dict[str, Any]:
    """GET ``path`` from the API server of ``kubeconfig``'s current context (client certificate or token)."""
    import base64
    import tempfile
    import urllib.request

    import yaml

    doc = yaml.safe_load(Path(kubeconfig).read_text())
    context = next(c["context"] for c in doc["contexts"] if c["name"] == doc["current-context"])
    cluster = next(c["cluster"] for c in doc["clusters"] if c["name"] == context["cluster"])
    user = next((u["user"] for u in doc.get("users") or [] if u["name"] == context["user"]), {})
    tls = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode()) \
        if cluster.get("certificate-authority-data") else ssl.create_default_context()
    headers = {"Accept": "application/json"}
    if user.get("token"):
        headers["Authorization"] = f"Bearer {user['token']}"
    with tempfile.TemporaryDirectory() as tmp:
        if user.get("client-certificate-data"):
            cert, key = Path(tmp) / "c.crt", Path(tmp) / "c.key"
            cert.write_bytes(base64.b64decode(user["client-certificate-data"]))
            key.write_bytes(base64.b64decode(user["client-key-data"]))
            tls.load_cert_chain(str(cert), str(key))
        request = urllib.request.Request(cluster["server"].rstrip("/") + path, headers=headers)
        with urllib.request.urlopen(request, context=tls, timeout=10) as reply:
            return dict(json.loads(reply.read()))


def from_cluster(args: argparse.Namespace) -> None:
    """Fill the ``--requestheader-*`` settings from kube-system/extension-apiserver-authentication."""
    data = _kubeconfig_get(args.authentication_kubeconfig,
                           "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication")["data"]
    args.requestheader_client_ca_data = data["requestheader-client-ca-file"]
    for key in ("allowed-names", "username-headers", "group-headers", "extra-headers-prefix"):
        setattr(args, f"requestheader_{key.replace('-', '_')}", ",".join(json.loads(data[f"requestheader-{key}"])))


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file", default="")
    p.add_argument("--tls-cert-file", required=True)
    p.add_argument("--tls-private-key-file", required=True)
    p.add_argument("--requestheader-client-ca-file", default="")
    p.add_argument("--authentication-kubeconfig", default="",
                   help="read the requestheader settings from kube-system/extension-apiserver-authentication")
    p.add_argument("--requestheader-allowed-names", default="front-proxy-client")
    p.add_argument("--requestheader-username-headers", default="X-Remote-User")
    p.add_argument("--requestheader-group-headers", default="X-Remote-Group")
    p.add_argument("--requestheader-extra-headers-prefix", default="X-Remote-Extra-")
    args = p.parse_args(argv)
    args.requestheader_client_ca_data = ""
    if not args.requestheader_client_ca_file and not args.authentication_kubeconfig:
        p.error("give --requestheader-client-ca-file or --authentication-kubeconfig")
    return args


async def serve(args: argparse.Namespace) -> None:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(args.tls_cert_file, args.tls_private_key_file)
    if args.authentication_kubeconfig and not args.requestheader_client_ca_file:
        from_cluster(args)
        context.load_verify_locations(cadata=args.requestheader_client_ca_data)
    else:
        context.load_verify_locations(cafile=args.requestheader_client_ca_file)
    context.verify_mode = ssl.CERT_OPTIONAL
    server = Server(args)
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", server.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", args.port, ssl_context=context)
    await site.start()
    port = runner.addresses[0][1]
    if args.port_file:
        Path(args.port_file).write_text(str(port))
    print(json.dumps({"serving": port}), flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    try:
        asyncio.run(serve(parse(sys.argv[1:])))
    except KeyboardInterrupt:
        pass
