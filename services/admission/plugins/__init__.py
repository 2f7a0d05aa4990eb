"""The admission plugins this service knows, in kube-apiserver's fixed run order, and flag handling.

``--enable-admission-plugins`` adds to the default set and
``--disable-admission-plugins`` removes from it; the order plugins run in
is always :data:`ORDER`, whatever order the flags list them in
(kube-apiserver ``AllOrderedPlugins``). An unknown name, or a name in both
flags, refuses to start, with kube-apiserver's messages.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from services.admission.chain import Plugin
from services.admission.namespaces import NamespaceCache
from services.admission.plugins.namespace_lifecycle import NamespaceLifecycle


@dataclass(frozen=True)
class PluginContext:
    """What plugins may depend on: the namespace cache (more informers come with more plugins)."""

    namespaces: NamespaceCache


ORDER: tuple[str, ...] = ("NamespaceLifecycle",)
DEFAULT_ENABLED: frozenset[str] = frozenset({"NamespaceLifecycle"})
FACTORIES: dict[str, Callable[[PluginContext], Plugin]] = {
    "NamespaceLifecycle": lambda ctx: NamespaceLifecycle(ctx.namespaces),
}


def _names(text: str) -> list[str]:
    return [n.strip() for n in (text or "").split(",") if n.strip()]


def enabled_plugins(enable: str, disable: str) -> list[str]:
    """Names to run, in :data:`ORDER`, from the comma-separated flag values.

    Raises ValueError: ``enable-admission-plugins plugin "X" is unknown``,
    ``disable-admission-plugins plugin "X" is unknown``, or
    ``[X] in enable-admission-plugins and disable-admission-plugins overlapped``.
    """
    enabled, disabled = _names(enable), _names(disable)
    problems = [f'enable-admission-plugins plugin "{n}" is unknown' for n in enabled if n not in FACTORIES]
    problems += [f'disable-admission-plugins plugin "{n}" is unknown' for n in disabled if n not in FACTORIES]
    overlap = sorted(set(enabled) & set(disabled))
    if overlap:
        problems.append(f"[{' '.join(overlap)}] in enable-admission-plugins and disable-admission-plugins "
                        "overlapped")
    if problems:
        raise ValueError("; ".join(problems))
    wanted = (DEFAULT_ENABLED | set(enabled)) - set(disabled)
    return [n for n in ORDER if n in wanted]


def build(names: list[str], context: PluginContext) -> list[Plugin]:
    """Instantiate the named plugins (names from :func:`enabled_plugins`)."""
    return [FACTORIES[n](context) for n in names]
