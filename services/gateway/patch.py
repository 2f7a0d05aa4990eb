"""Patch application: JSON merge patch, JSON patch, and strategic merge patch.

- ``application/merge-patch+json``: RFC 7386 (null deletes, objects merge, everything else replaces).
- ``application/json-patch+json``: RFC 6902 via the ``jsonpatch`` library.
- ``application/strategic-merge-patch+json``: Kubernetes' strategic merge
  ("Update API Objects in Place Using kubectl patch"): lists whose schema
  says ``x-kubernetes-patch-strategy: merge`` merge element-wise by
  ``x-kubernetes-patch-merge-key`` (or as sets for primitives), and the
  directives ``$patch`` (replace/delete/merge), ``$retainKeys``,
  ``$deleteFromPrimitiveList/<field>`` and ``$setElementOrder/<field>`` are
  honoured. The patch strategies come from the Kubernetes OpenAPI
  definitions shipped by the ``kubernetes-validate`` wheel.

Every function raises 400 BadRequest / 422 for a patch that cannot apply,
never a 500.

Bounded work (the class of CVE-2019-1002100, where a kilobyte of ``copy``
operations doubled a document thirty times): a JSON patch of more than
:data:`MAX_JSON_PATCH_OPERATIONS` operations is refused before any is
applied (413, kube's ``maxJSONPatchOperations``), and the values its ``copy``
operations duplicate may add at most :data:`MAX_COPY_BYTES` in all (kube's
``--json-patch-max-copy-bytes`` default, the request body limit; past it
kube's 422). Merge and strategic merge patches and apply configurations
cannot grow a document beyond the object plus the patch; the write path
refuses any result larger than the request body limit (413,
services/gateway/registry/store.py).
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import jsonpatch

from kapi import errors, gofmt, jsonutil, limits

Schema = dict[str, Any]

# kube-apiserver's maxJSONPatchOperations (k8s.io/apiserver pkg/endpoints/handlers/patch.go).
MAX_JSON_PATCH_OPERATIONS = 10_000
# The total size (bytes of JSON) the copy operations of one JSON patch may add: kube's JSONPatchMaxCopyBytes,
# which defaults to the request body limit (3 MiB).
MAX_COPY_BYTES = limits.MAX_BODY_BYTES

_REJECTED = "the server rejected our request due to an error in our request"


def _rejected() -> errors.StatusError:
    """kube's 422 for a JSON patch that does not apply: NewGenericServerResponse(422, ...), whose Status carries
    an empty ``details: {}`` (handlers/patch.go jsonPatcher)."""
    return errors.StatusError(422, "Invalid", _REJECTED, empty_details=True)


def merge_patch(target: Any, patch: Any) -> Any:
    """Apply an RFC 7386 JSON merge patch to ``target`` (returns a new value)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def json_patch(target: Any, patch: Any, max_copy_bytes: int = MAX_COPY_BYTES) -> Any:
    """Apply an RFC 6902 JSON patch (returns a new value; ``target`` is left as it was).

    A body that is not a list of operations is 400 BadRequest; more than
    :data:`MAX_JSON_PATCH_OPERATIONS` operations is 413
    RequestEntityTooLarge ``The allowed maximum operations in a JSON patch
    is 10000, got N``, before any applies. An operation that cannot apply
    (a failing ``test``, a missing path) is kube's 422
    ``NewGenericServerResponse``: reason Invalid, message "the server rejected
    our request due to an error in our request", no detail (kube drops the
    patch library's error text too); so is a patch whose ``copy`` operations
    would add more than ``max_copy_bytes`` bytes of JSON in all (kube's
    ``AccumulatedCopySizeLimit``), refused before the copy that would cross it.
    """
    if not isinstance(patch, list):
        raise errors.bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    if len(patch) > MAX_JSON_PATCH_OPERATIONS:
        raise errors.too_large(f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, "
                               f"got {len(patch)}")
    copied = 0
    try:
        doc = copy.deepcopy(target)
        for operation in patch:
            if isinstance(operation, dict) and operation.get("op") == "copy":
                source = operation.get("from")
                if not isinstance(source, str):
                    raise _rejected()
                value = jsonutil.dumps(jsonpatch.JsonPointer(source).resolve(doc))
                copied += len(value)
                if copied > max_copy_bytes:
                    raise _rejected()
                # RFC 6902 4.5: a copy adds the value at "from"; the JSON round trip is the deep copy.
                doc = _add(doc, operation.get("path"), jsonutil.loads(value))
                continue
            doc = jsonpatch.JsonPatch([operation]).apply(doc, in_place=True)
        return doc
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError, KeyError, IndexError,
            AttributeError):
        raise _rejected() from None


def _add(doc: Any, path: Any, value: Any) -> Any:
    """RFC 6902 ``add`` of ``value`` (owned by the caller, not copied) at ``path``; returns the document."""
    if not isinstance(path, str):
        raise _rejected()
    if path == "":
        return value
    parent, part = jsonpatch.JsonPointer(path).to_last(doc)
    if isinstance(parent, dict):
        parent[part] = value
    elif isinstance(parent, list) and part == "-":
        parent.append(value)
    elif isinstance(parent, list) and isinstance(part, int) and 0 <= part <= len(parent):
        parent.insert(part, value)
    else:
        raise _rejected()
    return doc


@functools.cache
def _definitions() -> dict[str, Schema]:
    import kubernetes_validate

    root = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    versions = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.endswith("-strict"))
    data = jsonutil.loads((versions[-1] / "_definitions.json").read_bytes())
    return dict(data.get("$defs") or data.get("definitions") or {})


@functools.cache
def _kind_index() -> dict[tuple[str, str, str], str]:
    index = {}
    for name, schema in _definitions().items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            index[(gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", ""))] = name
    return index


def schema_for(group: str, version: str, kind: str) -> Schema:
    """The OpenAPI definition of a kind, or {} when unknown (then patches merge like merge patch)."""
    name = _kind_index().get((group, version, kind))
    return _definitions().get(name, {}) if name else {}


def _resolve(schema: Schema | None) -> Schema:
    while schema and "$ref" in schema:
        schema = _definitions().get(schema["$ref"].rsplit("/", 1)[-1], {})
    return schema or {}


def _field(schema: Schema, key: str) -> Schema:
    schema = _resolve(schema)
    props = schema.get("properties") or {}
    if key in props:
        return dict(props[key])
    extra = schema.get("additionalProperties")
    return dict(extra) if isinstance(extra, dict) else {}


def strategic_merge_patch(target: Any, patch: Any, schema: Schema) -> Any:
    """Apply a strategic merge patch to ``target`` following ``schema`` (an OpenAPI definition)."""
    if not isinstance(patch, dict):
        raise errors.bad_request("strategic merge patch must be a JSON object")
    return _merge_map(copy.deepcopy(target) if isinstance(target, dict) else {}, patch, schema)


def _merge_map(original: dict[str, Any], patch: dict[str, Any], schema: Schema) -> dict[str, Any] | None:
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    if directive == "replace":
        return {k: v for k, v in patch.items() if k != "$patch"}
    if directive not in (None, "merge"):
        raise errors.bad_request(f"Unknown patch type: {directive}")
    retain = patch.get("$retainKeys")
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys") or key.startswith("$setElementOrder/"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            name = key.split("/", 1)[1]
            if isinstance(original.get(name), list) and isinstance(value, list):
                original[name] = [v for v in original[name] if v not in value]
            continue
        if value is None:
            original.pop(key, None)
            continue
        child = _field(schema, key)
        current = original.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            merged = _merge_map(current, value, child)
            if merged is None:
                original.pop(key, None)
            else:
                original[key] = merged
        elif isinstance(value, dict):
            merged = _merge_map({}, value, child)
            if merged is not None:
                original[key] = merged
        elif isinstance(value, list) and child.get("x-kubernetes-patch-strategy", "").find("merge") >= 0:
            original[key] = _merge_list(current if isinstance(current, list) else [], value, child)
        else:
            original[key] = value
    if isinstance(retain, list):
        for key in list(original):
            if key not in retain:
                del original[key]
    return original


def _merge_list(original: list[Any], patch: list[Any], schema: Schema) -> list[Any]:
    if any(isinstance(p, dict) and p.get("$patch") == "replace" for p in patch):
        return [p for p in patch if not (isinstance(p, dict) and p.get("$patch") == "replace")]
    merge_key = schema.get("x-kubernetes-patch-merge-key")
    if not merge_key:
        out = list(original)
        for item in patch:
            if item not in out:
                out.append(item)
        return out
    item_schema = _resolve(schema.get("items") or {})
    out = [copy.deepcopy(o) for o in original]
    for item in patch:
        if not isinstance(item, dict):
            raise errors.bad_request(f"merging an object in a list requires a map with the merge key {merge_key}")
        if merge_key not in item:
            raise errors.bad_request(f"map: {gofmt.go_value(item)} does not contain declared merge key: {merge_key}")
        index = next((i for i, o in enumerate(out) if isinstance(o, dict) and o.get(merge_key) == item[merge_key]),
                     None)
        if item.get("$patch") == "delete":
            if index is not None:
                del out[index]
            continue
        if index is None:
            out.append({k: v for k, v in item.items() if k != "$patch"})
        else:
            merged = _merge_map(out[index], item, item_schema)
            if merged is not None:
                out[index] = merged
    return out
