"""An ImagePolicyWebhook backend: answers ``imagepolicy.k8s.io/v1alpha1`` ImageReviews over HTTPS.

Policy (POST /image-policy):
- an image without a tag or digest, or tagged ``latest``, is denied
  (``Images using latest tag are not allowed``);
- with ``--allowed-registries``, an image from another registry is denied
  (``image X is not from an approved registry``);
- a pod annotated ``break-glass.image-policy.k8s.io/reason`` is allowed
  whatever its images, and the answer carries the audit annotation
  ``break-glass: <reason>``.

Run with::

    python examples/webhooks/image_policy.py --tls-cert-file tls.crt --tls-private-key-file tls.key --port 9447

and point the ImagePolicyWebhook kubeconfig's cluster ``server`` at
``https://127.0.0.1:9447/image-policy``. Source: "Admission Controllers",
ImagePolicyWebhook (request and response payloads).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aiohttp import web

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from examples.webhooks.common import add_serving_flags, start  # noqa: E402

API_VERSION = "imagepolicy.k8s.io/v1alpha1"
BREAK_GLASS = "break-glass.image-policy.k8s.io/reason"
DOCKER_HUB = "docker.io"
REVIEWS = web.AppKey("reviews", list)


def registry_of(image: str) -> str:
    """The registry host of an image reference (Docker Hub for ``nginx`` or ``library/nginx``)."""
    first, _, rest = image.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return first
    return DOCKER_HUB


def uses_latest(image: str) -> bool:
    """True when the image names no tag or digest, or the tag ``latest``."""
    if "@" in image:
        return False
    last = image.rsplit("/", 1)[-1]
    return ":" not in last or last.endswith(":latest")


def review(spec: dict[str, Any], allowed_registries: Sequence[str] = ()) -> dict[str, Any]:
    """The ImageReview ``status`` for one review ``spec``."""
    annotations = spec.get("annotations") or {}
    if annotations.get(BREAK_GLASS):
        return {"allowed": True, "auditAnnotations": {"break-glass": str(annotations[BREAK_GLASS])}}
    for container in spec.get("containers") or []:
        image = str(container.get("image") or "")
        if uses_latest(image):
            return {"allowed": False, "reason": "Images using latest tag are not allowed"}
        if allowed_registries and registry_of(image) not in allowed_registries:
            return {"allowed": False, "reason": f"image {image} is not from an approved registry"}
    return {"allowed": True}


def make_app(allowed_registries: Sequence[str] = ()) -> web.Application:
    """POST /image-policy: ImageReview in, ImageReview with ``status`` out; 400 for anything else.

    ``app[REVIEWS]`` lists the review specs received (tests count calls).
    """
    app = web.Application()
    app[REVIEWS] = []

    async def handle(http: web.Request) -> web.Response:
        try:
            body = await http.json()
            spec = body["spec"]
            if body.get("kind") != "ImageReview" or not isinstance(spec, dict):
                raise ValueError
        except (ValueError, KeyError, TypeError):
            return web.Response(status=400, text="expected an ImageReview")
        app[REVIEWS].append(spec)
        return web.json_response({"apiVersion": API_VERSION, "kind": "ImageReview", "spec": spec,
                                  "status": review(spec, allowed_registries)})

    app.router.add_post("/image-policy", handle)
    return app


def main(argv: Sequence[str] | None = None) -> int:
    """``--tls-cert-file --tls-private-key-file [--bind-address] [--port] [--port-file] [--allowed-registries a,b]``:
    serve until interrupted."""
    parser = argparse.ArgumentParser()
    add_serving_flags(parser, 9447)
    parser.add_argument("--allowed-registries", default="", help="Comma-separated registry hosts (default: any).")
    args = parser.parse_args(argv)
    registries = [r.strip() for r in args.allowed_registries.split(",") if r.strip()]

    async def run() -> None:
        runner, port = await start(make_app(registries), args.cert, args.key, args.host, args.port)
        if args.port_file:
            Path(args.port_file).write_text(str(port))
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
