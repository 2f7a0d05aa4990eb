"""ListOptions validation of list, watch and deletecollection requests, as kube-apiserver 1.37 does it.

kube's handlers (``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/get.go`` ListResource,
``delete.go`` DeleteCollection) decode the query into ``metainternalversion.ListOptions``, default it
(``SetListOptionsDefaults``, WatchList on) and check it with ``ValidateListOptions``
(``staging/src/k8s.io/apimachinery/pkg/apis/meta/internalversion/validation/validation.go``). Any
problem is one 422 ``apierrors.NewInvalid(GroupKind{meta.k8s.io, ListOptions}, "", errs)`` listing all
of them: ``ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: ...``.

``sendInitialEvents`` is a ``*bool``: present with any value (``false`` too) counts as set.
``allowWatchBookmarks`` is not checked (kube's own test case: requiring it would break watches that
asked for initial events with ``resourceVersion=0`` before WatchList existed).
"""

from __future__ import annotations

from collections.abc import Mapping

from kapi import errors
from kapi.errors import Cause
from kapi.kinds.fields import not_supported
from kapi.objectmeta import forbidden

EXACT = "Exact"
NOT_OLDER_THAN = "NotOlderThan"
MATCH = "resourceVersionMatch"


def validate_list_options(query: Mapping[str, str], watch: bool) -> list[Cause]:
    """The field errors of ValidateListOptions for ``query`` (parameter -> first value), in kube's order.

    ``watch`` is the request's ``watch`` flag (a watch gets validateWatchOptions). For a list: a
    ``resourceVersionMatch`` needs a ``resourceVersion``, no ``continue``, a value ``Exact`` or
    ``NotOlderThan``, and ``Exact`` not with ``resourceVersion=0``; ``sendInitialEvents`` is forbidden.
    For a watch, after SetListOptionsDefaults (a watch from ``""``/``"0"`` with neither
    ``sendInitialEvents`` nor a match is one with ``sendInitialEvents=true&resourceVersionMatch=NotOlderThan``):
    ``sendInitialEvents`` needs ``resourceVersionMatch=NotOlderThan``; a match needs ``sendInitialEvents``,
    must be ``NotOlderThan`` and is forbidden with ``continue``.
    """
    rv = query.get("resourceVersion", "")
    match = query.get("resourceVersionMatch", "")
    continue_ = query.get("continue", "")
    send_initial = "sendInitialEvents" in query
    out: list[Cause] = []
    if watch:
        if not send_initial and not match and rv in ("", "0"):  # SetListOptionsDefaults
            send_initial, match = True, NOT_OLDER_THAN
        if send_initial and match != NOT_OLDER_THAN:
            out.append(forbidden(MATCH, f"sendInitialEvents requires setting resourceVersionMatch to {NOT_OLDER_THAN}"))
        if match:
            if not send_initial:
                detail = "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
                out.append(forbidden(MATCH, detail))
            if match != NOT_OLDER_THAN:
                out.append(not_supported(MATCH, match, (NOT_OLDER_THAN,)))
            if continue_:
                out.append(forbidden(MATCH, "resourceVersionMatch is forbidden when continue is provided"))
        return out
    if match:
        if not rv:
            out.append(forbidden(MATCH, "resourceVersionMatch is forbidden unless resourceVersion is provided"))
        if continue_:
            out.append(forbidden(MATCH, "resourceVersionMatch is forbidden when continue is provided"))
        if match not in (EXACT, NOT_OLDER_THAN):
            out.append(not_supported(MATCH, match, (EXACT, NOT_OLDER_THAN, "")))
        if match == EXACT and rv == "0":
            out.append(forbidden(MATCH, 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    if send_initial:
        out.append(forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    return out


def check_list_options(query: Mapping[str, str], watch: bool) -> None:
    """Raise the 422 Invalid kube answers when :func:`validate_list_options` finds anything
    (``ListOptions.meta.k8s.io "" is invalid: ...``, details group ``meta.k8s.io``, kind ``ListOptions``)."""
    causes = validate_list_options(query, watch)
    if causes:
        raise errors.invalid("ListOptions", "", causes, group="meta.k8s.io")
