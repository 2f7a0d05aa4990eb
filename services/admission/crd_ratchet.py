"""CRD validation ratcheting (KEP-4008, ``CRDValidationRatcheting``, GA in 1.33): which values are "unchanged".

On an update of a custom resource kube correlates the new object with the stored one, node by node, and
drops the schema errors of (and skips the non-``oldSelf`` CEL rules failing on) every value that is equal
to its correlated old value. This module holds the correlation and the equality; the validator in
:mod:`services.admission.crd_schema` applies them.

Correlation (k8s.io/apiserver ``pkg/cel/common/equality.go`` ``CorrelatedObject.Key``/``Index``):

- an object property correlates with the old object's property of the same name when both objects have
  it and the schema declares it (``properties`` or an ``additionalProperties`` schema);
- an array item correlates, for ``x-kubernetes-list-type: map``, with the old item of the same map keys;
  for ``set`` and ``atomic`` lists not at all; for a list without a list type with the old item at the
  same index; an old item that is JSON null never correlates.

Equality (``CorrelatedObject.CachedDeepEqual``) is Go's ``reflect.DeepEqual`` over the correlated
children: an object with a key the schema does not declare is never equal (even to itself), a map list
with an item whose keys are new is not equal, and a set/atomic list is compared as a whole.
"""

from __future__ import annotations

from typing import Any

UNCORRELATED: Any = object()
"""The old value of a node that has no correlated old value (a create, a new key, a set item...)."""


def same_json(a: Any, b: Any) -> bool:
    """Go ``reflect.DeepEqual`` of two decoded JSON values: types must match (``1`` != ``1.0`` != ``True``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(k in b and same_json(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def property_schema(sch: dict[str, Any], key: str) -> dict[str, Any] | None:
    """The schema of property ``key`` of an object schema: ``properties[key]``, else an
    ``additionalProperties`` schema, else None (the key cannot be correlated)."""
    props = sch.get("properties") or {}
    if key in props:
        sub = props[key]
        return sub if isinstance(sub, dict) else None
    extra = sch.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def map_key(item: Any, keys: list[str]) -> tuple[Any, ...] | None:
    """The identity of a map-list item by its ``x-kubernetes-list-map-keys`` (None for a non-object)."""
    if not isinstance(item, dict):
        return None
    return tuple(_hashable(item.get(k)) for k in keys)


def _hashable(value: Any) -> Any:
    return (type(value).__name__, value) if not isinstance(value, (dict, list)) else repr(value)


def list_keys(sch: dict[str, Any]) -> list[str]:
    """``x-kubernetes-list-map-keys`` of an array schema, as strings."""
    return [str(k) for k in sch.get("x-kubernetes-list-map-keys") or []]


def old_by_key(old: list[Any], sch: dict[str, Any]) -> dict[tuple[Any, ...], Any]:
    """The old items of a map list by their keys (the first item of a duplicated key wins)."""
    keys = list_keys(sch)
    found: dict[tuple[Any, ...], Any] = {}
    for item in old:
        ident = map_key(item, keys)
        if ident is not None and ident not in found:
            found[ident] = item
    return found


def correlate_items(new: list[Any], old: Any, sch: dict[str, Any]) -> list[Any]:
    """The correlated old value of each item of ``new`` (:data:`UNCORRELATED` where there is none).

    ``old`` is the array's correlated old value (anything; not a list -> nothing correlates)."""
    if not isinstance(old, list) or old is UNCORRELATED:
        return [UNCORRELATED] * len(new)
    list_type = sch.get("x-kubernetes-list-type")
    if list_type in ("set", "atomic"):
        return [UNCORRELATED] * len(new)
    if list_type == "map":
        by_key = old_by_key(old, sch)
        keys = list_keys(sch)
        found = [by_key.get(ident, UNCORRELATED) if (ident := map_key(item, keys)) is not None else UNCORRELATED
                 for item in new]
    else:
        found = [old[i] if i < len(old) else UNCORRELATED for i in range(len(new))]
    return [UNCORRELATED if o is None else o for o in found]


def unchanged(new: Any, old: Any, sch: Any) -> bool:
    """Whether ``new`` equals its correlated ``old`` value under ``sch`` (``CachedDeepEqual``)."""
    if old is UNCORRELATED:
        return False
    if new is None or old is None:
        return new is None and old is None
    if not isinstance(sch, dict):
        sch = {}
    if isinstance(new, list) or isinstance(old, list):
        if not (isinstance(new, list) and isinstance(old, list)) or len(new) != len(old):
            return False
        items = sch.get("items")
        list_type = sch.get("x-kubernetes-list-type")
        if list_type in ("set", "atomic") or (not isinstance(items, dict) and list_type != "map"):
            return same_json(new, old)
        if not isinstance(items, dict):
            return False
        olds = correlate_items(new, old, sch)
        if list_type != "map" and any(o is UNCORRELATED for o in olds):
            return same_json(new, old)  # an index-correlated list with a null old item: compared whole
        return all(o is not UNCORRELATED and unchanged(n, o, items) for n, o in zip(new, olds, strict=True))
    if isinstance(new, dict) or isinstance(old, dict):
        if not (isinstance(new, dict) and isinstance(old, dict)) or len(new) != len(old):
            return False
        for key, value in new.items():
            sub = property_schema(sch, key)
            if key not in old or sub is None or not unchanged(value, old[key], sub):
                return False
        return True
    return same_json(new, old)


class Same:
    """The lazily computed, cached :func:`unchanged` of one correlated node (shared with its uncorrelated
    descendants, whose ratcheting follows their nearest correlated ancestor)."""

    __slots__ = ("_new", "_old", "_sch", "_result")

    def __init__(self, new: Any, old: Any, sch: Any):
        self._new, self._old, self._sch = new, old, sch
        self._result: bool | None = None

    def __call__(self) -> bool:
        if self._result is None:
            self._result = unchanged(self._new, self._old, self._sch)
        return self._result
