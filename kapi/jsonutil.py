"""Fast JSON encoding shared by every service (orjson).

Kubernetes objects cross gRPC as JSON bytes (DESIGN.md section 3); every
service encodes and decodes them through these two functions.
"""

from __future__ import annotations

from typing import Any

import orjson


def dumps(obj: Any) -> bytes:
    """Encode ``obj`` as compact UTF-8 JSON bytes; raises TypeError for non-JSON values."""
    return orjson.dumps(obj)


def loads(data: bytes | str) -> Any:
    """Decode JSON bytes or text; raises ``orjson.JSONDecodeError`` (a ValueError) on bad input."""
    return orjson.loads(data)


def dumps_pretty(obj: Any) -> bytes:
    """Encode ``obj`` as JSON indented by two spaces plus a trailing newline (the ``pretty=true`` form)."""
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2) + b"\n"
