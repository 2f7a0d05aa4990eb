"""A validating webhook: every object must carry the ``team`` label.

Refuses a create or update without ``metadata.labels.team`` (403 with
``missing required label "team"``); warns when ``owner`` is absent.
Serves POST /validate.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from examples.webhooks.common import deny, main  # noqa: E402

REQUIRED = "team"


def review(request: dict[str, Any]) -> dict[str, Any]:
    """The AdmissionReview response for one request."""
    if request.get("operation") not in ("CREATE", "UPDATE"):
        return {"allowed": True}
    labels = ((request.get("object") or {}).get("metadata") or {}).get("labels") or {}
    if REQUIRED not in labels:
        return deny(f'missing required label "{REQUIRED}"')
    response: dict[str, Any] = {"allowed": True}
    if "owner" not in labels:
        response["warnings"] = ['label "owner" is recommended']
    return response


ROUTES = {"/validate": review}

if __name__ == "__main__":
    sys.exit(main(ROUTES, port=9446))
