"""The pod-defaults mutating webhook (the seeds' admission-controller demo).

For a Pod: sets ``spec.securityContext.runAsNonRoot: true`` and
``spec.securityContext.runAsUser: 1234`` when unset, with a JSONPatch;
refuses a Pod with ``runAsNonRoot: true`` and ``runAsUser: 0``. Serves
POST /mutate.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from examples.webhooks.common import deny, json_patch, main  # noqa: E402

DEFAULT_USER = 1234


def review(request: dict[str, Any]) -> dict[str, Any]:
    """The AdmissionReview response for one request."""
    obj = request.get("object") or {}
    if request.get("resource", {}).get("resource") != "pods" or not isinstance(obj, dict):
        return {"allowed": True}
    spec = obj.get("spec") or {}
    sc = spec.get("securityContext")
    ops: list[dict[str, Any]] = []
    if not isinstance(sc, dict):
        ops.append({"op": "add", "path": "/spec/securityContext", "value": {}})
        sc = {}
    non_root, user = sc.get("runAsNonRoot"), sc.get("runAsUser")
    if non_root is True and user == 0:
        return deny("runAsNonRoot specified, but runAsUser set to 0 (the root user)")
    if non_root is None:
        ops.append({"op": "add", "path": "/spec/securityContext/runAsNonRoot", "value": user != 0})
    if user is None:
        ops.append({"op": "add", "path": "/spec/securityContext/runAsUser", "value": DEFAULT_USER})
    return {"allowed": True, **(json_patch(ops) if ops else {})}


ROUTES = {"/mutate": review}

if __name__ == "__main__":
    sys.exit(main(ROUTES))
