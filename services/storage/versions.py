"""resourceVersion rules: parsing, "too large" errors, and which revision a list reads at.

The table is "API concepts" -> "Resource versions" -> "Semantics for get and
list"; the match combinations are checked by :mod:`kapi.listoptions` (kube-apiserver's
ValidateListOptions, 422 Invalid on ``ListOptions.meta.k8s.io``), the rest as etcd3 store.
"""

from __future__ import annotations

from dataclasses import dataclass

from kapi import errors
from kapi.gofmt import go_quote
from kapi.listoptions import check_list_options
from kapi.revisions import as_revision, out_of_range


def parse_resource_version(text: str) -> int:
    """A resourceVersion string -> revision (0 .. int64, :func:`kapi.revisions.as_revision`); raises 400 BadRequest
    for anything else."""
    revision = as_revision(text)
    if revision is not None:
        return revision
    raise errors.bad_request(f'resourceVersion: Invalid value: "{text}": invalid resource version')


def parse_list_resource_version(text: str) -> int:
    """A list's resourceVersion -> revision, as kube's ValidateListOptions parses it; raises 400 BadRequest
    ``invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid
    syntax`` (APIObjectVersioner.ParseResourceVersion's field error; ``value out of range`` past int64)."""
    revision = as_revision(text)
    if revision is not None:
        return revision
    reason = "value out of range" if out_of_range(text) else "invalid syntax"
    quoted = go_quote(text)
    raise errors.bad_request(f"invalid resource version: resourceVersion: Invalid value: {quoted}: "
                             f"strconv.ParseUint: parsing {quoted}: {reason}")


def too_large_resource_version(wanted: int, current: int) -> errors.StatusError:
    """504 Timeout ``Too large resource version`` with the ResourceVersionTooLarge cause client-go looks for."""
    err = errors.timeout(f"Timeout: Too large resource version: {wanted}, current: {current}")
    err.details["causes"] = [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]
    return err


@dataclass(frozen=True)
class ReadPlan:
    """How to read a list: at ``revision`` (0 = latest), requiring at least ``minimum`` (0 = any),
    ``serializable`` = a possibly stale member-local read is fine."""

    revision: int = 0
    minimum: int = 0
    serializable: bool = False


def list_read_plan(resource_version: str, match: str, continue_: str, limit: int) -> ReadPlan:
    """The read a list needs. Without ``continue_``:

    ==========  ======================  =====================================
    rv          match                   read
    ==========  ======================  =====================================
    ""          (none)                  latest, linearizable
    "0"         (none) / NotOlderThan   latest, serializable ("Any")
    N           NotOlderThan            latest, must be >= N ("Not older than")
    N           (none), no limit        latest, must be >= N
    N           (none) with limit       exactly N
    N           Exact                   exactly N
    ==========  ======================  =====================================

    With ``continue_`` the token decides (ReadPlan()); rv must be "" or "0" (the caller decodes the token
    first: a bad token is its 400 before this one, as storage.ValidateListOptions).
    Raises 422 Invalid for a forbidden match combination, 400 BadRequest for
    a bad rv (:func:`parse_list_resource_version`) or an rv given with continue.
    """
    check_list_options({"resourceVersion": resource_version, "resourceVersionMatch": match, "continue": continue_},
                       watch=False)  # the gateway checked already; internal callers get the same 422
    if continue_:
        if resource_version not in ("", "0"):
            raise errors.bad_request("specifying resource version is not allowed when using continue")
        return ReadPlan()
    if resource_version == "":
        return ReadPlan()
    if resource_version == "0":
        return ReadPlan(serializable=True)
    wanted = parse_list_resource_version(resource_version)
    if match == "Exact" or (not match and limit > 0):
        return ReadPlan(revision=wanted)
    return ReadPlan(minimum=wanted)
