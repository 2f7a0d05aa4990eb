"""The canonical wire form of built-in objects: what kube-apiserver's decode into Go types and re-encode writes.

kube-apiserver decodes a built-in object into its Go struct and encodes that
struct, so what it stores and answers is canonical whatever the client sent:

- ``resource.Quantity`` (every schema ``$ref`` to
  ``io.k8s.apimachinery.pkg.api.resource.Quantity``) is ``Quantity.String()``
  as a JSON string (:func:`kapi.quantity.canonical`): ``cpu: 1`` -> ``"1"``,
  ``1.5Gi`` -> ``1536Mi``. A map of quantities in a core/v1 definition is a
  ``v1.ResourceList``, which ``SetDefaults_ResourceList`` (pkg/apis/core/v1
  defaults.go, run by the core, apps and batch defaulters for pod templates
  too) first rounds up to milli: ``0.0001`` -> ``1m``.
- ``metav1.Time`` (``$ref`` ``...meta.v1.Time``) is parsed as RFC 3339
  (``time.Parse(time.RFC3339)``) and written in UTC with second precision
  (``MarshalJSON``: ``2026-12-02T07:00:00+02:00`` -> ``2026-12-02T05:00:00Z``,
  fractional seconds dropped); ``metav1.MicroTime`` keeps six fractional
  digits (``RFC3339Micro``); the zero time encodes as ``null``
  (``creationTimestamp``, ``omitzero``, is dropped).

Custom resources are not touched (kube's unstructured path keeps what the client
sent). A value that does not parse is left as sent: an unparseable quantity is
the decode check's 400 (:func:`kapi.schema.quantity_error`), and a time kube's
decoder would refuse stays as today (kube answers 400 there; kapi does not
check times).

The walk follows a per-kind tree of the schema paths that hold a quantity or a
time (:func:`paths`, built once per kind from the schemas of :mod:`kapi.schema`),
so it touches only those fields of an object.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from kapi import gotime, quantity, schema
from kapi.k8sproto import zero

QUANTITY, RESOURCE_LIST, TIME, MICRO_TIME = "quantity", "resourcelist", "time", "microtime"
ANY = "*"  # the tree key for every element of a list or every value of a map
_TIME_REFS = {"io.k8s.apimachinery.pkg.apis.meta.v1.Time": TIME,
              "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": MICRO_TIME}
_CORE = "io.k8s.api.core.v1."

_ZERO = datetime(1, 1, 1, tzinfo=UTC)
# Already what MarshalJSON writes (the common case): answered as is once the fields are in range.
_CANONICAL_TIME = re.compile(r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])T(?:[01][0-9]|2[0-3]):[0-5][0-9]:"
                             r"[0-5][0-9]Z")
_CANONICAL_MICRO_TIME = re.compile(_CANONICAL_TIME.pattern[:-1] + r"\.[0-9]{6}Z")


def _parse_time(text: str, micro: bool = False) -> tuple[datetime, int] | None:
    """A time text as (UTC datetime to the second, nanoseconds) as Go's ``time.Parse`` reads it (RFC 3339;
    ``micro``: RFC3339Micro, MicroTime's layout, six fraction digits), or None when Go refuses it (or Python
    cannot hold it: year 0)."""
    try:
        return gotime.parse(text, gotime.RFC3339_MICRO if micro else gotime.RFC3339)
    except gotime.ParseError:
        return None


def canonical_time(value: Any, micro: bool = False) -> Any:
    """``metav1.Time`` (``micro``: ``MicroTime``) as kube re-encodes it: a string, None (the zero time) or
    ``value`` unchanged when it is not a string Go's ``time.Parse`` reads."""
    if not isinstance(value, str):
        return value
    if (_CANONICAL_MICRO_TIME if micro else _CANONICAL_TIME).fullmatch(value) and value[8:10] < "29" \
            and not value.startswith("0001-01-01T00:00:00"):
        return value
    parsed = _parse_time(value, micro)
    if parsed is None:
        return value
    t, nanos = parsed
    if t == _ZERO and nanos == 0:  # Time.IsZero: MarshalJSON writes null
        return None
    text = f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
    return f"{text}.{nanos // 1000:06d}Z" if micro else f"{text}Z"


# ------------------------------------------------------------ the per-kind tree of paths

def _tree(node: Any, owner: str, active: frozenset[str], memo: dict[str, Any]) -> Any:
    """The tree of ``node``: a leaf kind (QUANTITY, RESOURCE_LIST, TIME, MICRO_TIME), a dict of property names
    (and :data:`ANY`) to subtrees, or None when nothing below needs canonicalizing. ``owner``: the name of the
    definition ``node`` belongs to; ``active``: the definitions being expanded (a recursive one stops)."""
    if not isinstance(node, dict):
        return None
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name == schema.QUANTITY_DEF:
            return QUANTITY
        if name in _TIME_REFS:
            return _TIME_REFS[name]
        if name in active:
            return None
        if name not in memo:
            memo[name] = _tree(schema.definitions().get(name), name, active | {name}, memo)
        return memo[name]
    out: dict[str, Any] = {}
    for key, sub in (node.get("properties") or {}).items():
        child = _tree(sub, owner, active, memo)
        if child is not None:
            out[key] = child
    for key in ("items", "additionalProperties"):
        child = _tree(node.get(key), owner, active, memo)
        if child == QUANTITY and key == "additionalProperties" and owner.startswith(_CORE):
            child = RESOURCE_LIST  # a v1.ResourceList: SetDefaults_ResourceList rounds it up to milli
        if child is not None:
            out[ANY] = child
    return out or None


_lock = threading.Lock()
_trees: dict[tuple[str, str, str], Any] = {}


def paths(group: str, version: str, kind: str) -> Any:
    """The kind's tree of quantity and time paths (see :func:`_tree`); None for a kind without a schema or
    without such fields. Built once per kind (about a millisecond) and cached."""
    key = (group, version, kind)
    try:
        return _trees[key]
    except KeyError:
        pass
    with _lock:
        if key not in _trees:
            top = schema.kind_schema(group, version, kind)
            _trees[key] = _tree(top, "", frozenset(), {}) if top is not None else None
        return _trees[key]


def _convert(value: Any, leaf: str) -> Any:
    if leaf == TIME or leaf == MICRO_TIME:
        return canonical_time(value, leaf == MICRO_TIME)
    if value is None or isinstance(value, bool) or not isinstance(value, str | int | float):
        return value
    try:
        return quantity.canonical(value, milli=leaf == RESOURCE_LIST)
    except ValueError:
        return value  # the decode check refuses it (400), as before


def _walk(obj: Any, tree: dict[str, Any]) -> None:
    if isinstance(obj, dict):
        every = tree.get(ANY)
        if every is not None:
            pairs = [(key, every) for key in obj]
        elif len(obj) <= len(tree):
            pairs = [(key, tree[key]) for key in obj if key in tree]
        else:
            pairs = [(key, sub) for key, sub in tree.items() if key in obj]
        for key, sub in pairs:
            _visit(obj, key, sub)
    elif isinstance(obj, list) and ANY in tree:
        sub = tree[ANY]
        for i in range(len(obj)):
            _visit(obj, i, sub)


def _visit(container: Any, key: Any, sub: Any) -> None:
    value = container[key]
    if type(sub) is str:
        new = _convert(value, sub)
        if type(new) is not type(value) or new != value:
            if new is None and key == "creationTimestamp":
                del container[key]  # ObjectMeta's omitzero
            else:
                container[key] = new
    elif isinstance(value, dict | list):
        _walk(value, sub)


def canonicalize(obj: dict[str, Any], group: str, version: str, kind: str) -> None:
    """Rewrite, in place, every quantity and time of ``obj`` (a decoded built-in object of ``group/version,
    Kind=kind``) in kube's canonical wire form (module docstring), and leave out what the Go struct does not
    keep (an ``omitempty`` empty slice or map, or zero scalar: :func:`kapi.k8sproto.zero.omit_empty`). Never
    raises for bad input: a value that does not parse is kept."""
    zero.omit_empty(obj, group, version, kind)
    tree = paths(group, version, kind)
    if tree is not None:
        _walk(obj, tree)


def time_error(obj: dict[str, Any], group: str, version: str, kind: str) -> str | None:
    """The decoder's error for the first time field of ``obj`` (document order) that Go's ``time.Parse`` refuses
    (``metav1.Time``: RFC 3339, ``MicroTime``: RFC3339Micro; :mod:`kapi.gotime`'s text, e.g. ``parsing time
    "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"``), or None. A non-string
    is the schema's type error, not this."""
    tree = paths(group, version, kind)
    return _first_time_error(obj, tree) if isinstance(tree, dict) else None


def _first_time_error(value: Any, tree: Any) -> str | None:
    if tree == TIME or tree == MICRO_TIME:
        if not isinstance(value, str):
            return None
        try:
            gotime.parse(value, gotime.RFC3339_MICRO if tree == MICRO_TIME else gotime.RFC3339)
        except gotime.ParseError as err:
            return str(err)
        return None
    if not isinstance(tree, dict):
        return None
    every = tree.get(ANY)
    items: Iterable[tuple[Any, Any]]
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list) and every is not None:
        items = ((ANY, v) for v in value)
    else:
        return None
    for key, sub in items:
        subtree = every if key == ANY or every is not None else tree.get(key)
        if subtree is not None and isinstance(sub, dict | list | str):
            found = _first_time_error(sub, subtree)
            if found is not None:
                return found
    return None
