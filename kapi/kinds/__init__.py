"""Per-kind rules of the built-in kinds, one module per API group (contract: :mod:`kapi.kinds.base`).

Importing this package registers every group's strategies; callers use
:func:`strategy_for`.
"""

from kapi.kinds import (
    base,
    flowcontrol,  # noqa: F401  (registration)
)
from kapi.kinds.base import Strategy, register, strategy_for

__all__ = ["Strategy", "base", "register", "strategy_for"]
