"""The CEL engine: the ``cel`` package of the ``common-expression-language`` wheel, without its command line.

``cel/__init__.py`` imports ``cel.cli``, an interactive REPL built on prompt_toolkit,
typer and rich that kapi never runs; loading it costs about 0.23 CPU seconds
in every service that evaluates CEL (authn's structured authentication,
admission's policies and CRD rules), a tenth of a test cluster's start
(``python bench/startup.py``). A placeholder module stands in for ``cel.cli``
before the package is imported, so those libraries are not loaded; the engine
(``cel.cel``, ``cel.stdlib``) is untouched. Every kapi module imports CEL from
here (``from kapi.cel.engine import cel``), never ``import cel`` directly, so
the placeholder is always in place first.
"""

from __future__ import annotations

import sys
import types

if "cel" not in sys.modules:
    sys.modules.setdefault("cel.cli", types.ModuleType("cel.cli", "not loaded by kapi (kapi/cel/engine.py)"))

import cel  # noqa: E402  (after the placeholder)
from cel import stdlib  # noqa: E402

__all__ = ["cel", "stdlib"]
