"""User-supplied regular expressions in linear time, as Go's regexp (RE2) runs them.

kube matches a custom resource's ``pattern`` and CEL's ``matches``/``find``/``findAll`` with Go's ``regexp``,
whose matching time grows linearly with the input; Python's ``re`` backtracks, so a pattern like ``^(a+)+$``
against 40 ``a``'s and a ``!`` runs for hours and holds the admission service (every write of the cluster)
meanwhile. Matching goes through RE2 itself (the google-re2 binding), which shares Go's syntax and its guarantee.
"""

from __future__ import annotations

import functools

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a pattern RE2 refuses is reported by the caller, not logged by the library


@functools.lru_cache(maxsize=1024)
def compiled(pattern: str) -> re2._Regexp | None:
    """``pattern`` compiled by RE2 (Go's syntax; cached), or None when RE2 refuses it."""
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error:
        return None


def search(pattern: str, text: str) -> bool | None:
    """Whether ``pattern`` (RE2/Go syntax) matches somewhere in ``text``, in time linear in ``len(text)``;
    None when RE2 cannot compile the pattern (CRD validation refuses such patterns on write)."""
    regexp = compiled(pattern)
    if regexp is None:
        return None
    return regexp.search(text) is not None
