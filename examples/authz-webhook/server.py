"""An example webhook authorizer for kapi (or kube-apiserver): ``authorization.k8s.io/v1`` SubjectAccessReview.

The API server POSTs a SubjectAccessReview for each request it asks
about; this server matches the review against a small YAML policy and
answers ``status.allowed`` / ``status.denied`` with a reason, or neither
(NoOpinion: the API server's next authorizer, if any, decides). The first
rule that matches wins; no match is NoOpinion::

    rules:
    - users: [wendy]                # any of: users, groups (absent = anyone)
      verbs: [get, list, watch]     # "*" or absent = any verb
      apiGroups: [""]               # resource requests: apiGroups, resources, namespaces ("*"/absent = any)
      resources: [configmaps]
      namespaces: ["*"]
      decision: allow               # allow | deny | noopinion
      reason: "wendy reads configmaps"
    - users: [dave]
      decision: deny
      reason: "dave is suspended"
    - groups: [ops]
      nonResourcePaths: ["/healthz", "/metrics*"]   # non-resource requests ("*" suffix = prefix)
      decision: allow
    - users: [slow]
      decision: allow
      delaySeconds: 5               # answer late (to see the API server's webhook timeout at work)

Serve it over TLS; with ``--client-ca-file`` it requires the API server's
client certificate (the ``client-certificate`` of the kubeconfig given to
``--authorization-webhook-config-file``)::

    python server.py --policy-file policy.yaml --tls-cert-file tls.crt --tls-private-key-file tls.key \\
        --client-ca-file ca.crt --port 9444

(``kapi certs --state-dir DIR`` makes a CA and a serving certificate for 127.0.0.1; see README.md.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

log = logging.getLogger("authz-webhook")

DECISIONS = ("allow", "deny", "noopinion")


def _list(rule: dict[str, Any], key: str) -> tuple[str, ...] | None:
    """The rule's values for ``key``; None when absent or "*" (matches anything)."""
    value = rule.get(key)
    if value is None:
        return None
    values = tuple(str(v) for v in (value if isinstance(value, list) else [value]))
    return None if "*" in values else values


@dataclass(frozen=True)
class Rule:
    """One policy rule (see the module docstring)."""

    users: tuple[str, ...] | None
    groups: tuple[str, ...] | None
    verbs: tuple[str, ...] | None
    api_groups: tuple[str, ...] | None
    resources: tuple[str, ...] | None
    namespaces: tuple[str, ...] | None
    non_resource_paths: tuple[str, ...] | None
    decision: str
    reason: str
    delay: float

    @classmethod
    def from_dict(cls, rule: dict[str, Any]) -> Rule:
        """Decode one rule; ValueError for an unknown decision."""
        decision = str(rule.get("decision", "allow")).lower()
        if decision not in DECISIONS:
            raise ValueError(f"decision must be one of {DECISIONS}, got {decision!r}")
        return cls(_list(rule, "users"), _list(rule, "groups"), _list(rule, "verbs"), _list(rule, "apiGroups"),
                   _list(rule, "resources"), _list(rule, "namespaces"), _list(rule, "nonResourcePaths"),
                   decision, str(rule.get("reason", "")), float(rule.get("delaySeconds", 0)))

    def matches(self, spec: dict[str, Any]) -> bool:
        """True when the review's spec falls under this rule."""
        groups = spec.get("groups") or spec.get("group") or []
        if self.users is not None and spec.get("user", "") not in self.users:
            return False
        if self.groups is not None and not set(self.groups) & set(groups):
            return False
        resource = spec.get("resourceAttributes")
        if isinstance(resource, dict):
            if self.non_resource_paths is not None and self.resources is None:
                return False
            full = resource.get("resource", "")
            if resource.get("subresource"):
                full = f"{full}/{resource['subresource']}"
            return ((self.verbs is None or resource.get("verb", "") in self.verbs)
                    and (self.api_groups is None or resource.get("group", "") in self.api_groups)
                    and (self.resources is None or full in self.resources
                         or resource.get("resource", "") in self.resources)
                    and (self.namespaces is None or resource.get("namespace", "") in self.namespaces))
        other = spec.get("nonResourceAttributes") or {}
        if self.resources is not None and self.non_resource_paths is None:
            return False
        path = str(other.get("path", ""))
        return ((self.verbs is None or other.get("verb", "") in self.verbs)
                and (self.non_resource_paths is None
                     or any(path == p or (p.endswith("*") and path.startswith(p[:-1]))
                            for p in self.non_resource_paths)))


def load_policy(path: str) -> list[Rule]:
    """Rules of a policy YAML file (``rules: [...]``)."""
    doc = yaml.safe_load(Path(path).read_text()) or {}
    return [Rule.from_dict(r) for r in doc.get("rules") or []]


def evaluate(rules: list[Rule], spec: dict[str, Any]) -> Rule | None:
    """The first matching rule, or None."""
    return next((rule for rule in rules if rule.matches(spec)), None)


def answer(review: dict[str, Any], rule: Rule | None) -> dict[str, Any]:
    """The SubjectAccessReview to send back: the request with ``status`` filled."""
    status: dict[str, Any] = {"allowed": False}
    if rule is not None:
        if rule.decision == "allow":
            status["allowed"] = True
        elif rule.decision == "deny":
            status["denied"] = True
        if rule.reason:
            status["reason"] = rule.reason
    return {"apiVersion": review.get("apiVersion", "authorization.k8s.io/v1"), "kind": "SubjectAccessReview",
            "spec": review.get("spec") or {}, "status": status}


def make_app(rules: list[Rule]) -> web.Application:
    """The aiohttp application: POST / (and /authorize) answer SubjectAccessReviews."""

    async def authorize(request: web.Request) -> web.Response:
        try:
            review = json.loads(await request.read())
            if review.get("kind") != "SubjectAccessReview" or not isinstance(review.get("spec"), dict):
                raise ValueError("not a SubjectAccessReview")
        except (ValueError, AttributeError):
            return web.json_response({"error": "expected an authorization.k8s.io SubjectAccessReview"}, status=400)
        rule = evaluate(rules, review["spec"])
        if rule is not None and rule.delay > 0:
            await asyncio.sleep(rule.delay)
        log.info("review of %s: %s", review["spec"].get("user", ""), rule.decision if rule else "noopinion")
        return web.json_response(answer(review, rule))

    app = web.Application()
    app.router.add_post("/", authorize)
    app.router.add_post("/authorize", authorize)
    return app


def ssl_context(cert_file: str, key_file: str, client_ca_file: str = "") -> ssl.SSLContext:
    """A serving TLS context; with ``client_ca_file`` clients must present a certificate it signed."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    if client_ca_file:
        context.load_verify_locations(client_ca_file)
        context.verify_mode = ssl.CERT_REQUIRED
    return context


async def serve(args: argparse.Namespace) -> None:
    """Serve until cancelled, writing the bound port to ``--port-file`` if given."""
    context = None
    if args.tls_cert_file:
        context = ssl_context(args.tls_cert_file, args.tls_private_key_file, args.client_ca_file)
    runner = web.AppRunner(make_app(load_policy(args.policy_file)), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, args.bind_address, args.port, ssl_context=context)
    await site.start()
    port = runner.addresses[0][1]
    if args.port_file:
        Path(args.port_file).write_text(str(port))
    log.info("authz webhook serving on %s:%s", args.bind_address, port)
    await asyncio.Event().wait()


def main() -> None:
    """Parse flags and serve."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--policy-file", required=True, help="YAML policy (rules: [...])")
    parser.add_argument("--bind-address", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9444)
    parser.add_argument("--port-file", default="")
    parser.add_argument("--tls-cert-file", default="")
    parser.add_argument("--tls-private-key-file", default="")
    parser.add_argument("--client-ca-file", default="", help="require client certificates signed by this CA")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(serve(args))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
