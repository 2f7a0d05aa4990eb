"""Type-tolerant readers of decoded JSON: a field of the wrong type reads as empty instead of raising.

Validators and strategies walk objects that have not been fully type-checked
yet (or that a webhook mutated); these keep them from crashing on a string
where a map was expected, so the type error is reported as a Status instead.
"""

from __future__ import annotations

from typing import Any


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else ``{}``."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` if it is a JSON array, else ``[]``."""
    return value if isinstance(value, list) else []


def as_int(value: Any) -> int | None:
    """``value`` if it is a JSON integer (not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_str(value: Any) -> str:
    """``value`` if it is a JSON string, else ``""`` (a Go string field's zero value)."""
    return value if isinstance(value, str) else ""
