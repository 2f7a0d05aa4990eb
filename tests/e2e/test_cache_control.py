"""What every answer shares, on the shared stack: Cache-Control as kube-apiserver's WithCacheControl filter
sets it, the generic 404 of a path nothing serves, and the root's index of the paths that are served."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from email.message import Message

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def _reply(stack: Stack, path: str, token: str | None = None,
           headers: dict[str, str] | None = None) -> tuple[int, Message, bytes]:
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    headers = dict(headers or {})
    if token is None:
        context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    else:
        headers["Authorization"] = f"Bearer {token}"
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=context), _NoRedirect())
    try:
        with opener.open(urllib.request.Request(stack.url + path, headers=headers), timeout=30) as reply:
            return reply.status, reply.headers, reply.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers, err.read()


def _get(stack: Stack, path: str, token: str | None = None) -> tuple[int, str | None, bytes]:
    code, headers, body = _reply(stack, path, token)
    return code, headers["Cache-Control"], body


def test_every_answer_is_no_cache_private(stack: Stack) -> None:
    for path in ("/api/v1/namespaces", "/api/v1/namespaces/default", "/version", "/healthz",
                 "/api/v1/namespaces/default/configmaps/absent"):
        code, header, _ = _get(stack, path)
        assert (path, header) == (path, "no-cache, private"), code
    code, header, _ = _get(stack, "/api/v1/namespaces", token="nobody-issued-this")  # the 401 of authentication
    assert (code, header) == (401, "no-cache, private")


def test_handlers_keep_their_own_policy(stack: Stack) -> None:
    _, _, body = _get(stack, "/openapi/v3")
    url = json.loads(body)["paths"]["api/v1"]["serverRelativeURL"]
    assert "hash=" in url
    code, headers, _ = _reply(stack, url)
    assert (code, headers["Cache-Control"], headers["Vary"]) == (200, "public, immutable", "Accept")
    etag = url.split("hash=")[1]
    assert headers["ETag"] == f'"{etag}"' and headers["Expires"].endswith(" UTC")
    assert _reply(stack, "/openapi/v3/api/v1", headers={"If-None-Match": f'"{etag}"'})[0] == 304
    code, headers, body = _reply(stack, "/openapi/v3/api/v1?hash=0BAD")  # kube-openapi: 301 to the current hash
    assert (code, headers["Location"]) == (301, url)
    assert body == f'<a href="{url}">Moved Permanently</a>.\n\n'.encode()
    assert _get(stack, "/openapi/v3/api/v1")[1] == "no-cache, private"
    assert _get(stack, "/.well-known/openid-configuration")[1] == "public, max-age=3600"


def test_a_path_nothing_serves_is_kubes_generic_404(stack: Stack) -> None:
    """go-restful's ServiceError as NewGenericServerResponse(404): an empty ``details: {}`` is part of the body."""
    code, headers, body = _reply(stack, "/api/v1/namespaces/default/pods/x/nosuchsubresource")
    assert code == 404 and headers["Cache-Control"] == "no-cache, private"
    assert json.loads(body) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                "message": "the server could not find the requested resource", "reason": "NotFound",
                                "details": {}, "code": 404}


def test_the_root_lists_the_served_paths(stack: Stack, kubectl: Kubectl, alice: Kubectl) -> None:
    """kube's index handler: ``{"paths": [...]}`` (json.MarshalIndent, sorted) for whoever may read ``/``."""
    code, headers, body = _reply(stack, "/")
    assert (code, headers["Content-Type"].split(";")[0]) == (200, "application/json")
    listed = json.loads(body)["paths"]
    assert listed == sorted(listed) and body.startswith(b'{\n  "paths": [\n    "/.well-known/openid-configuration"')
    for path in ("/api", "/api/v1", "/apis", "/apis/apps/v1", "/healthz", "/healthz/etcd", "/livez/ping",
                 "/readyz", "/openapi/v2", "/openapi/v3", "/version", "/metrics", "/openid/v1/jwks"):
        assert path in listed, path
    assert kubectl.run("get", "--raw", "/").returncode == 0
    refused = alice.run("get", "--raw", "/", check=False)  # the default roles do not name "/"
    assert refused.returncode != 0 and "Forbidden" in refused.stderr, refused.stderr
