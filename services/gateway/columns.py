"""The pieces of a Table printer: :class:`Column`, :class:`Printer` and the cells kube's printers share.

:mod:`printers` and :mod:`printers_more` define per-kind printers from these,
:mod:`dynamic` builds custom resources' printers from additionalPrinterColumns,
and :mod:`table` renders them. :func:`human_duration` and :func:`age` are
k8s.io/apimachinery pkg/util/duration (HumanDuration) and the printers' AGE cell.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

Obj = dict[str, Any]


@dataclass(frozen=True)
class Column:
    """One columnDefinition: ``name`` as kubectl prints it upper-cased, JSON ``type``, ``priority`` (0 or 1)."""

    name: str
    type: str = "string"
    priority: int = 0
    format: str = ""
    description: str = ""  # "" -> the name


@dataclass(frozen=True)
class Printer:
    """Columns after Name, and the function computing their cells.

    kube's Age column goes at ``age_index`` among these columns; None puts it
    after the last priority-0 column (before the ``-o wide`` ones), as most
    kube printers do.
    """

    columns: tuple[Column, ...]
    cells: Callable[[Obj], list[Any]]
    age_index: int | None = None
    with_age: bool = True  # False: the columns are complete (custom resources' additionalPrinterColumns)
    with_name: bool = True  # False: no leading Name column (kube's Event table: Last Seen first, Name wide-only)
    name: Callable[[Obj], str] | None = None  # the NAME cell when kube's printer decorates it (StorageClass default)

    def age_position(self) -> int:
        """Index among ``columns`` (and cells) where Age is inserted."""
        if self.age_index is not None:
            return self.age_index
        return next((i for i, c in enumerate(self.columns) if c.priority > 0), len(self.columns))


def get(obj: Any, *path: str, default: Any = None) -> Any:
    """``obj[path[0]][path[1]]...``, or ``default`` where a step is missing, not a map, or the value is None."""
    for key in path:
        if not isinstance(obj, dict):
            return default
        obj = obj.get(key)
    return default if obj is None else obj


def human_duration(seconds: float) -> str:
    """kube's HumanDuration: 45s, 3m20s, 15m, 5h, 2d3h, 400d, 3y20d."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rem = s % 60
        return f"{minutes}m" if rem == 0 else f"{minutes}m{rem}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rem = minutes % 60
        return f"{hours}h" if rem == 0 else f"{hours}h{rem}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rem = hours % 24
        return f"{hours // 24}d" if rem == 0 else f"{hours // 24}d{rem}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        rem = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if rem == 0 else f"{hours // 24 // 365}y{rem}d"
    return f"{hours // 24 // 365}y"


def age(obj: dict[str, Any], now: datetime | None = None) -> str:
    """The AGE cell of an object from metadata.creationTimestamp ("<unknown>" when absent)."""
    stamp = (obj.get("metadata") or {}).get("creationTimestamp")
    if not stamp:
        return "<unknown>"
    try:
        created = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return "<unknown>"
    return human_duration(((now or datetime.now(UTC)) - created).total_seconds())
