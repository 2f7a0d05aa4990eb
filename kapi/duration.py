"""Durations as kube writes them: Go duration strings, and (leniently, for flags and config files) plain seconds.

One parser for the whole repo: the storage, authn and authz flags
(``--etcd-compaction-interval``, webhook cache TTLs and timeouts) and
config files are lenient (plain seconds allowed); the gateway's
``?timeout=`` query parameter is strict, as kube-apiserver parses it with
Go's ``time.ParseDuration`` (a unit on every number).
"""

from __future__ import annotations

import re

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str, *, strict: bool = False) -> float:
    """A Go duration ("5m", "1m30s", "500ms", "10us") in seconds.

    Units: ns, us (µs), ms, s, m, h; numbers may have a fraction; no sign.
    Lenient (the default): surrounding white space is ignored and plain
    seconds ("120", "0", "1.5") are accepted too. ``strict``: the text must
    be exactly a sequence of number+unit pairs ("10" and " 5s" are refused).
    Raises ValueError if malformed or negative.
    """
    if not strict:
        text = text.strip()
        try:
            seconds = float(text)
        except ValueError:
            pass
        else:
            if seconds < 0:
                raise ValueError(f"negative duration {text!r}")
            return seconds
    pos, total = 0, 0.0
    for match in _DURATION.finditer(text):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if not text or pos != len(text):
        raise ValueError(f"invalid duration {text!r}")
    return total
