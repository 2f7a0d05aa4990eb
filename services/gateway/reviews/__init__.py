"""Handlers of create-only, never-stored APIs (TokenReview, SubjectAccessReview, ...) and computed subresources.

Each module in this package registers its handlers with :func:`review` or
:func:`subresource`; the package imports every module on first use, so
adding an API is adding a module (plus its row in kapi.resources with
``stored=False``, or the subresource name in the row's ``subresources``).
A handler receives the RequestScope and the decoded request body and returns
the response object (a dict) and HTTP status, or raises a StatusError.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from services.gateway.scope import RequestScope

ReviewHandler = Callable[["RequestScope", Any], Awaitable[tuple[dict[str, Any], int]]]
SubresourceHandler = Callable[["RequestScope"], Awaitable[Any]]

REVIEWS: dict[tuple[str, str], ReviewHandler] = {}
SUBRESOURCES: dict[tuple[str, str, str], SubresourceHandler] = {}
_loaded = False


def review(group: str, resource: str) -> Callable[[ReviewHandler], ReviewHandler]:
    """Decorator: ``fn`` answers POST to the create-only resource ``group``/``resource``."""

    def register(fn: ReviewHandler) -> ReviewHandler:
        REVIEWS[(group, resource)] = fn
        return fn

    return register


def subresource(group: str, resource: str, name: str) -> Callable[[SubresourceHandler], SubresourceHandler]:
    """Decorator: ``fn(scope) -> web.StreamResponse`` serves ``<resource>/<name>`` (e.g. serviceaccounts/token)."""

    def register(fn: SubresourceHandler) -> SubresourceHandler:
        SUBRESOURCES[(group, resource, name)] = fn
        return fn

    return register


def load() -> None:
    """Import every module of this package once so their handlers register."""
    global _loaded
    if _loaded:
        return
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    _loaded = True
