"""Bounded decoding of request-controlled YAML and JSON.

A YAML "alias bomb" (``a: &a [x, x, ...]``, ``b: &b [*a, *a, ...]``, ...) is
a few hundred bytes that expands to gigabytes, and a document nested many
thousands of levels deep exhausts Python's recursion limit in every walker
that follows. kube-apiserver refuses both while converting YAML to JSON
(go-yaml: ``document contains excessive aliasing``, ``anchor 'a' value
contains itself``; Go's encoding/json and go-yaml: ``exceeded max depth``).
Here the YAML event stream is scanned first (iteratively, without building
anything): each anchored node's expanded size is memoised, so the check costs
one pass over the text however large the expansion would be.

The nesting limit (:data:`MAX_DEPTH`) is far lower than Go's 10,000 because
kapi's validators, patchers and field managers recurse in Python; no real
object or CRD schema comes close to it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import yaml

# Containers (maps + lists) nested deeper than this are refused at decode time.
MAX_DEPTH = 150
# Aliases one document may use. go-yaml's ratio rule lets 300,000 aliases of one scalar through (900 KB that
# cost kapi's Python decoder 4.4 s of CPU); no manifest uses thousands, so more are refused while scanning,
# after reading only as far as the alias past the limit, with go-yaml's words.
MAX_ALIASES = 10_000

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Loader: Any = _Base


class KubeLoader(_Base):  # type: ignore[misc, valid-type]
    """The safe loader with go-yaml's answers for what JSON cannot hold (sigs.k8s.io/yaml, go-yaml v2 into
    ``interface{}``): a timestamp stays the string it was written as, ``!!binary`` is its decoded bytes as text
    (invalid UTF-8 replaced, as Go's JSON encoder does), ``!!set`` is a mapping to nulls, and mapping keys that
    are not strings are written as strings (``1``, ``true``, ``null``)."""


def _timestamp(loader: Any, node: yaml.Node) -> str:
    return str(loader.construct_scalar(node))


def _binary(loader: Any, node: yaml.Node) -> str:
    data: bytes = yaml.SafeLoader.construct_yaml_binary(loader, node)
    return data.decode("utf-8", errors="replace")


def _key(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    raise yaml.constructor.ConstructorError(None, None, f"invalid map key: {value!r}", None)


class UnsupportedValueError(yaml.YAMLError):
    """A YAML value JSON cannot hold (``.inf``, ``-.inf``, ``.nan``): sigs.k8s.io/yaml's json.Marshal refuses it
    with ``json: unsupported value: +Inf`` (``-Inf``, ``NaN``), the whole message (no ``yaml: line N``)."""

    def __init__(self, value: float) -> None:
        self.go_value = "NaN" if math.isnan(value) else "+Inf" if value > 0 else "-Inf"
        super().__init__(f"json: unsupported value: {self.go_value}")


_GO_FLOAT_KEYS = {"+Inf": ".inf", "-Inf": "-.inf", "NaN": ".nan"}  # go-yaml's text of a float map key


def _int(loader: Any, node: yaml.ScalarNode) -> int | float | str:
    """An integer; one beyond int64 is a float (kube's unstructured JSON), or its text if no float64 holds it
    (go-yaml resolves a plain scalar ParseFloat refuses as a string)."""
    value: int = yaml.SafeLoader.construct_yaml_int(loader, node)
    if -(1 << 63) <= value < (1 << 63):
        return value
    try:
        return float(value)
    except OverflowError:
        return str(node.value)


def _float(loader: Any, node: yaml.ScalarNode) -> float | str:
    """A float; ``.inf``/``.nan`` raise :class:`UnsupportedValueError`, a finite text beyond float64 stays a
    string (go-yaml)."""
    value: float = yaml.SafeLoader.construct_yaml_float(loader, node)
    if math.isfinite(value):
        return value
    if str(node.value).lstrip("+-").lower() in (".inf", ".nan"):
        raise UnsupportedValueError(value)
    return str(node.value)


def _mapping(loader: Any, node: yaml.MappingNode) -> Iterator[dict[str, Any]]:
    loader.flatten_mapping(node)
    out: dict[str, Any] = {}
    yield out
    for key_node, value_node in node.value:
        try:
            key = loader.construct_object(key_node, deep=True)
        except UnsupportedValueError as exc:  # a .inf key is the string ".inf"
            key = _GO_FLOAT_KEYS[exc.go_value]
        if isinstance(key, (list, dict)):
            raise yaml.constructor.ConstructorError(None, None, "invalid map key", key_node.start_mark)
        out[_key(key)] = loader.construct_object(value_node, deep=True)


KubeLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)
KubeLoader.add_constructor("tag:yaml.org,2002:binary", _binary)
KubeLoader.add_constructor("tag:yaml.org,2002:set", _mapping)
KubeLoader.add_constructor("tag:yaml.org,2002:int", _int)
KubeLoader.add_constructor("tag:yaml.org,2002:float", _float)
KubeLoader.add_constructor("tag:yaml.org,2002:map", _mapping)


class DecodeLimitError(yaml.YAMLError):
    """A document refused for its shape, not its syntax; ``problem`` is go-yaml's words (without ``yaml: ``)."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = None


def _allowed_alias_ratio(decoded: int) -> float:
    """go-yaml's allowance: up to 99% of decoded nodes may come from aliases in small documents, 10% in huge ones."""
    low, high = 400_000, 4_000_000
    if decoded <= low:
        return 0.99
    if decoded >= high:
        return 0.10
    return 0.99 - 0.89 * (decoded - low) / (high - low)


def check_yaml(data: bytes | str, max_depth: int = MAX_DEPTH) -> None:
    """Refuse a YAML stream whose aliases expand excessively, whose alias refers to itself, or that nests too deep.

    Sizes count nodes as go-yaml's decoder does (an alias is one node plus its
    target's expanded size). Refused when more than 1,000 nodes decode of which
    more than 100 come from aliases and the alias share exceeds go-yaml's
    allowed ratio, or when a document has more than :data:`MAX_ALIASES`
    aliases. Raises :class:`DecodeLimitError`; syntax errors are raised as
    the parser's ``yaml.YAMLError``.
    """
    anchors: dict[str, tuple[int, int]] = {}  # anchor -> (expanded size, of which from aliases)
    open_anchors: set[str] = set()
    # each open container: [expanded size so far, aliased so far, anchor or None]
    stack: list[list[Any]] = []
    total = aliased = 0

    def finish(size: int, from_aliases: int, anchor: str | None) -> None:
        nonlocal total, aliased
        if anchor:
            anchors[anchor] = (size, from_aliases)
        if stack:
            stack[-1][0] += size
            stack[-1][1] += from_aliases
        else:
            total += size
            aliased += from_aliases
            if aliased > 100 and total > 1000 and aliased / total > _allowed_alias_ratio(total):
                raise DecodeLimitError("document contains excessive aliasing")

    aliases = 0
    for event in yaml.parse(data, Loader=_Loader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            if len(stack) >= max_depth:
                raise DecodeLimitError(f"exceeded max depth of {max_depth}")
            stack.append([1, 0, event.anchor])
            if event.anchor:
                open_anchors.add(event.anchor)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            size, from_aliases, anchor = stack.pop()
            if anchor:
                open_anchors.discard(anchor)
            finish(size, from_aliases, anchor)
        elif isinstance(event, yaml.ScalarEvent):
            finish(1, 0, event.anchor)
        elif isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise DecodeLimitError("document contains excessive aliasing")
            if event.anchor in open_anchors:
                raise DecodeLimitError(f"anchor '{event.anchor}' value contains itself")
            size, _ = anchors.get(event.anchor or "", (0, 0))
            finish(1 + size, size, None)
        elif isinstance(event, yaml.DocumentEndEvent):
            total = aliased = aliases = 0


def load_yaml(data: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    """One YAML document as JSON-ready data (:class:`KubeLoader`) after :func:`check_yaml`; raises
    ``yaml.YAMLError`` (a :class:`DecodeLimitError` when refused for aliasing or depth, a ConstructorError for
    a tag JSON cannot hold)."""
    check_yaml(data, max_depth)
    return yaml.load(data, Loader=KubeLoader)  # noqa: S506 - KubeLoader is a SafeLoader


def json_depth_error(body: bytes, value: Any, max_depth: int = MAX_DEPTH) -> str | None:
    """Go's encoding/json message when decoded JSON ``value`` (from ``body``) nests deeper than ``max_depth``
    containers (``invalid character '[' exceeded max depth``), else None. Iterative; O(1) for bodies with too
    few brackets to be that deep."""
    if body.count(b"{") + body.count(b"[") <= max_depth:
        return None
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > max_depth:
            return "invalid character '{' exceeded max depth" if isinstance(item, dict) else \
                "invalid character '[' exceeded max depth"
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return None
