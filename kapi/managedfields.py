"""Field ownership (``metadata.managedFields``) and server-side apply, as structured-merge-diff does it.

A *field set* is a set of paths; a path is a tuple of FieldsV1 path elements:
``f:<field>`` (a struct field or map key), ``k:{"name":"c"}`` (an item of an
associative list, by its key fields), ``v:<json>`` (an item of a set list).
Which lists are associative, sets or atomic, and which maps are atomic,
comes from the kind's OpenAPI definition (``x-kubernetes-list-type``,
``x-kubernetes-list-map-keys``, ``x-kubernetes-map-type``, falling back to
``x-kubernetes-patch-strategy``/``-merge-key`` as kube-openapi does).

Every write records who changed what:

- :func:`update` (create, update, patch: operation ``Update``) gives the
  writing manager the fields it added or changed, takes them from everyone
  else, and drops fields that no longer exist.
- :func:`apply` (``application/apply-patch+yaml``: operation ``Apply``)
  merges the applied configuration into the live object, refuses with 409
  Conflict when it would change a field another manager owns (unless
  ``force``), removes fields this manager applied before and no longer
  applies when nobody else owns them, and records the applied field set.

Sources: "Server-Side Apply" (kubernetes.io/docs/reference/using-api/server-side-apply/),
KEP-555, sigs.k8s.io/structured-merge-diff (fieldpath, merge), and
k8s.io/apiserver pkg/endpoints/handlers/fieldmanager (conflict messages,
entry order, manager from the User-Agent).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kapi import errors, gofmt

Path = tuple[str, ...]
FieldSet = frozenset[Path]
Schema = dict[str, Any]

APPLY, UPDATE = "Apply", "Update"
CLIENT_SIDE_APPLY_MANAGER = "kubectl-client-side-apply"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# Fields nobody owns (kube's fieldmanager strips them before tracking).
_STRIPPED_META = frozenset({"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                            "selfLink", "managedFields", "deletionTimestamp", "deletionGracePeriodSeconds"})
_LEAF = object()  # marks a container node in flattened objects


def manager_from_user_agent(user_agent: str) -> str:
    """The default field manager of a request without ``fieldManager`` (kube's prefixFromUserAgent): the
    User-Agent up to its first "/", without unprintable characters, cut to at most 128 bytes of UTF-8 at a
    character boundary. An absent User-Agent gives ""."""
    out: list[str] = []
    size = 0
    for char in user_agent.split("/", 1)[0]:
        if not char.isprintable():
            continue
        width = len(char.encode("utf-8", "surrogatepass"))
        if size + width > 128:
            break
        out.append(char)
        size += width
    return "".join(out)


class Types:
    """Navigates a kind's OpenAPI definition (the wheel's JSON-schema form) for list and map semantics.

    ``definitions`` maps definition names to schemas; ``$ref`` values end in
    a definition name. An empty root schema makes every map granular and
    every list atomic (structured-merge-diff's deduced type).
    """

    def __init__(self, root: Schema, definitions: Mapping[str, Schema]):
        self.root = root
        self._defs = definitions

    def resolve(self, schema: Schema | None) -> Schema:
        """Follow ``$ref`` (and a single-``allOf`` wrapper) to the referenced schema."""
        seen = 0
        while schema and seen < 50:
            if "$ref" in schema:
                schema = self._defs.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
            elif isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
                schema = schema["allOf"][0]
            else:
                break
            seen += 1
        return schema or {}

    def field(self, schema: Schema, key: str) -> Schema:
        """The schema of ``key`` in a struct or map schema; {} if unknown."""
        schema = self.resolve(schema)
        props = schema.get("properties") or {}
        if key in props:
            return dict(props[key])
        extra = schema.get("additionalProperties")
        return dict(extra) if isinstance(extra, dict) else {}

    def items(self, schema: Schema) -> Schema:
        """The item schema of a list schema."""
        return dict(self.resolve(schema).get("items") or {})

    def is_struct(self, schema: Schema) -> bool:
        """True for a schema with declared properties (a Go struct)."""
        return bool(self.resolve(schema).get("properties"))

    def map_atomic(self, schema: Schema) -> bool:
        """True when a map/struct is replaced as a whole (``x-kubernetes-map-type: atomic``)."""
        return self.resolve(schema).get("x-kubernetes-map-type") == "atomic"

    def key_defaults(self, item_schema: Schema, keys: tuple[str, ...]) -> dict[str, Any]:
        """The schema ``default`` of each key field of an associative list's item schema that declares one."""
        out = {}
        for key in keys:
            field = self.resolve(self.field(item_schema, key))
            if "default" in field:
                out[key] = field["default"]
        return out

    def list_kind(self, schema: Schema) -> tuple[str, tuple[str, ...]]:
        """("map", keys) | ("set", ()) | ("atomic", ())."""
        s = self.resolve(schema)
        list_type = s.get("x-kubernetes-list-type")
        if list_type == "map":
            return "map", tuple(s.get("x-kubernetes-list-map-keys") or ())
        if list_type in ("set", "atomic"):
            return str(list_type), ()
        strategy = str(s.get("x-kubernetes-patch-strategy") or "")
        if "merge" in strategy:
            key = s.get("x-kubernetes-patch-merge-key")
            return ("map", (str(key),)) if key else ("set", ())
        return "atomic", ()


def _key_values(item: dict[str, Any], keys: tuple[str, ...], defaults: Mapping[str, Any] | None = None
                ) -> dict[str, Any]:
    out = {}
    for k in keys:
        if k in item:
            out[k] = item[k]
        elif defaults and k in defaults:
            out[k] = defaults[k]
        elif k == "protocol":
            out[k] = "TCP"  # the defaulted key of ports lists (containerPort/port + protocol)
    return out


def key_element(item: Any, keys: tuple[str, ...], defaults: Mapping[str, Any] | None = None) -> str:
    """The ``k:{...}`` path element of an associative-list item: its key fields sorted by name, whatever the
    order of ``x-kubernetes-list-map-keys`` (structured-merge-diff's keyedAssociativeListItemToPathElement sorts
    the key's FieldList). ``defaults``: key field -> its schema ``default``, taken for a key field the item omits
    (structured-merge-diff's fieldDefault; :meth:`Types.key_defaults`)."""
    if not isinstance(item, dict):
        return "v:" + json.dumps(item, separators=(",", ":"))
    return "k:" + json.dumps(_key_values(item, keys, defaults), separators=(",", ":"), sort_keys=True)


def value_element(item: Any) -> str:
    """The ``v:<json>`` path element of a set-list item."""
    return "v:" + json.dumps(item, separators=(",", ":"), sort_keys=True)


def _flatten(value: Any, schema: Schema, types: Types, path: Path, out: dict[Path, Any],
             struct_nodes: set[Path]) -> None:
    """Every path of ``value`` -> its value (leaves) or ``_LEAF`` marker (granular containers)."""
    if isinstance(value, dict) and not types.map_atomic(schema):
        if path:
            out[path] = value if not value else _LEAF
            if types.is_struct(schema) and value:
                struct_nodes.add(path)
        for key, child in value.items():
            _flatten(child, types.field(schema, key), types, (*path, "f:" + key), out, struct_nodes)
        return
    if isinstance(value, list):
        kind, keys = types.list_kind(schema)
        if kind == "map" and value:
            out[path] = _LEAF
            item_schema = types.items(schema)
            defaults = types.key_defaults(item_schema, keys)
            for item in value:
                element = (*path, key_element(item, keys, defaults))
                if isinstance(item, dict):
                    out[element] = _LEAF
                    for key, child in item.items():
                        _flatten(child, types.field(item_schema, key), types, (*element, "f:" + key), out,
                                 struct_nodes)
                else:
                    out[element] = item
            return
        if kind == "set" and value:
            out[path] = _LEAF
            for item in value:
                out[(*path, value_element(item))] = item
            return
    out[path] = value


def undeclared(value: Any, types: Types, schema: Schema | None = None, path: Path = ()) -> list[Path]:
    """The paths of ``value``'s fields its schema does not declare (a struct's key that is neither a property
    nor allowed by ``additionalProperties`` / ``x-kubernetes-preserve-unknown-fields``), in key order, as
    structured-merge-diff's typed conversion meets them (``.spec.foo: field not declared in schema``); list
    items are named by their keys, set values or ``[index]``."""
    schema = types.resolve(types.root if schema is None and not path else schema)
    out: list[Path] = []
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        open_map = bool(schema.get("additionalProperties")) or schema.get("x-kubernetes-preserve-unknown-fields")
        for key in sorted(value):
            if props and key not in props and not open_map:
                out.append((*path, "f:" + key))
            elif props or schema.get("additionalProperties"):
                out.extend(undeclared(value[key], types, types.field(schema, key), (*path, "f:" + key)))
    elif isinstance(value, list) and schema.get("items"):
        kind, keys = types.list_kind(schema)
        item_schema = types.items(schema)
        defaults = types.key_defaults(item_schema, keys)
        for i, item in enumerate(value):
            element = key_element(item, keys, defaults) if kind == "map" and isinstance(item, dict) else (
                value_element(item) if kind == "set" else f"i:{i}")
            out.extend(undeclared(item, types, item_schema, (*path, element)))
    return out


def _tracked(obj: Mapping[str, Any], reset: Iterable[str], typed: bool = False) -> dict[str, Any]:
    """``obj`` without the fields nobody owns (apiVersion, kind, identity metadata, reset fields); ``typed``
    (a Go-shaped object) keeps an emptied ``metadata``, which the Go struct always has."""
    out = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", *reset)}
    meta = out.get("metadata")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k not in _STRIPPED_META}
        if meta or typed:
            out["metadata"] = meta
        else:
            out.pop("metadata")
    return out


def flatten(obj: Mapping[str, Any], types: Types, reset: Iterable[str] = (), typed: bool = False
            ) -> tuple[dict[Path, Any], set[Path]]:
    """(path -> value or container marker, paths of non-empty structs) of the tracked part of ``obj``
    (``typed``: see :func:`_tracked`)."""
    out: dict[Path, Any] = {}
    structs: set[Path] = set()
    _flatten(_tracked(obj, reset, typed), types.root, types, (), out, structs)
    out.pop((), None)
    return out, structs


def field_set(obj: Mapping[str, Any], types: Types, reset: Iterable[str] = ()) -> FieldSet:
    """The fields an applied configuration sets: leaves, atomic values and list items (not struct or map nodes)."""
    flat, _ = flatten(obj, types, reset)
    paths = set(flat)
    for path, value in flat.items():
        if value is _LEAF and not path[-1].startswith(("k:", "v:")):
            paths.discard(path)
    return frozenset(paths)


def to_fields_v1(paths: Iterable[Path]) -> dict[str, Any]:
    """A field set as FieldsV1 JSON: nested elements, ``".": {}`` on a member node that has children."""
    root: dict[str, Any] = {}
    members = set(paths)
    for path in sorted(members):
        node = root
        for element in path:
            node = node.setdefault(element, {})
    def mark(node: dict[str, Any], prefix: Path) -> None:
        for element, child in node.items():
            if element == ".":
                continue
            path = (*prefix, element)
            if child and path in members:
                child["."] = {}
            mark(child, path)
    mark(root, ())
    return _sorted(root)


def _sorted(node: dict[str, Any]) -> dict[str, Any]:
    return {k: _sorted(node[k]) for k in sorted(node, key=lambda k: (k != ".", k))}


def from_fields_v1(fields: Any) -> FieldSet:
    """Parse FieldsV1 JSON back into a field set; malformed input -> empty set."""
    out: set[Path] = set()

    def walk(node: Any, prefix: Path) -> None:
        if not isinstance(node, dict):
            return
        for element, child in node.items():
            if element == ".":
                out.add(prefix)
                continue
            path = (*prefix, element)
            if not child:
                out.add(path)
            else:
                walk(child, path)

    walk(fields, ())
    out.discard(())
    return frozenset(out)


def path_string(path: Path) -> str:
    """structured-merge-diff's path text: ``.spec.containers[name="nginx"].image``, ``.finalizers[="a"]``."""
    out = []
    for element in path:
        kind, _, rest = element.partition(":")
        if kind == "f":
            out.append("." + rest)
        elif kind == "k":
            try:
                keys = json.loads(rest)
                out.append("[" + ",".join(f"{k}={json.dumps(v)}" for k, v in keys.items()) + "]")
            except ValueError:
                out.append(f"[{rest}]")
        elif kind == "v":
            out.append(f"[={rest}]")
        else:
            out.append(f"[{rest}]")
    return "".join(out)


@dataclass
class Entry:
    """One ``managedFields`` entry: who (manager, operation, apiVersion, subresource), when, and which fields."""

    manager: str
    operation: str
    api_version: str
    fields: FieldSet
    time: str = ""
    subresource: str = ""

    def same_owner(self, other: Entry) -> bool:
        """True when both entries identify the same manager: name, operation, subresource and, for an Update,
        apiVersion (kube's BuildManagerIdentifier drops only an Apply's apiVersion, so one manager updating
        through two versions has two entries)."""
        if (self.manager, self.operation, self.subresource) != (other.manager, other.operation, other.subresource):
            return False
        return self.operation != UPDATE or self.api_version == other.api_version

    def describe(self) -> str:
        """kube's printManager: ``"m"``, ``"m" with subresource "status"``, ``"m" using v1`` (an Update).

        No time: the manager in a conflict is kube's manager identifier, which never includes it
        (``BuildManagerIdentifier``), so kube's messages never say ``at <time>``.
        """
        text = json.dumps(self.manager)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource)}"
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text

    def to_json(self) -> dict[str, Any]:
        """The ManagedFieldsEntry JSON, as Go writes it (every field ``omitempty``: an empty manager, a request
        without fieldManager or User-Agent, has no ``manager`` key)."""
        out: dict[str, Any] = {"manager": self.manager} if self.manager else {}
        out.update(operation=self.operation, apiVersion=self.api_version)
        if self.time:
            out["time"] = self.time
        out["fieldsType"] = "FieldsV1"
        out["fieldsV1"] = to_fields_v1(self.fields)
        if self.subresource:
            out["subresource"] = self.subresource
        return out


def entries(obj: Mapping[str, Any] | None) -> list[Entry]:
    """The ``metadata.managedFields`` of ``obj`` as entries (malformed entries are skipped)."""
    meta = (obj or {}).get("metadata") or {}
    out = []
    for raw in meta.get("managedFields") or ():
        if not isinstance(raw, dict) or not raw.get("manager") and not raw.get("fieldsV1"):
            continue
        out.append(Entry(str(raw.get("manager") or ""), str(raw.get("operation") or UPDATE),
                         str(raw.get("apiVersion") or ""), from_fields_v1(raw.get("fieldsV1")),
                         str(raw.get("time") or ""), str(raw.get("subresource") or "")))
    return out


def encode(items: list[Entry]) -> list[dict[str, Any]]:
    """Entries in kube's order (Apply first, then by time, manager, apiVersion, subresource); empty ones dropped."""
    kept = [e for e in items if e.fields]
    kept.sort(key=lambda e: (e.operation, e.time, e.manager, e.api_version, e.subresource))
    return [e.to_json() for e in kept]


def force_apply_fields(live: Mapping[str, Any] | None, fields: FieldSet, manager: str, api_version: str,
                       time: str) -> list[dict[str, Any]]:
    """The managedFields after ``manager`` force-applies exactly ``fields`` (paths of atomic or scalar fields, as
    from :func:`from_fields_v1`): its Apply entry owns them, every other entry loses them (and goes when empty).
    For controllers that server-side apply a fixed set of fields, e.g. the ClusterRole aggregation's
    ``rules``; the values are the caller's to write."""
    me = Entry(manager, APPLY, api_version, fields, time)
    others = [Entry(e.manager, e.operation, e.api_version, e.fields - fields, e.time, e.subresource)
              for e in entries(live) if not e.same_owner(me)]
    return encode([*others, me])


def incoming_entries(live: Mapping[str, Any] | None, new: Mapping[str, Any]) -> list[Entry]:
    """The entries an update starts from: the request's managedFields if it sets any, else the live ones.

    As kube's isResetManagedFields: an empty list (``[]``, not an absent field) or ``[{}]`` clears them;
    absent keeps the live entries (apiserver ``fieldmanager/internal/fieldmanager.go``; the integration test
    TestClearManagedFieldsWithUpdateEmptyList).
    """
    raw = (new.get("metadata") or {}).get("managedFields")
    if raw == []:
        return []
    if isinstance(raw, list) and raw:
        if all(isinstance(r, dict) and not r for r in raw):
            return []
        return entries(new)
    return entries(live)


def _covers(owned: Iterable[Path], path: Path) -> bool:
    """True when ``path`` or any path below it is in ``owned``."""
    n = len(path)
    return any(p[:n] == path for p in owned)


def _under(path: Path, reset: Iterable[str]) -> bool:
    """True when ``path`` lies under one of the top-level ``reset`` fields."""
    return bool(path) and path[0] in {"f:" + r for r in reset}


def update(live: Mapping[str, Any] | None, new: Mapping[str, Any], manager: str, api_version: str, time: str,
           types: Types, subresource: str = "", reset: Iterable[str] = (),
           only: Iterable[Path] | None = None, typed: bool = False) -> list[dict[str, Any]]:
    """The managedFields of ``new`` after an Update by ``manager`` (create when ``live`` is None).

    The manager gains the fields it added or changed (map keys and list
    items it added are owned as nodes, shown with ``"."``); others lose
    them; fields gone from ``new`` leave every set. ``only``: the paths the
    request itself set (kube tracks the object before mutating admission);
    changes elsewhere (added by admission) are owned by nobody.

    ``reset`` (the strategy's reset fields, top-level names) is structured-merge-diff's IgnoreFilter: the
    manager owns nothing under them (and loses what it owned there), and the comparison leaves the other
    managers' fields under them as they were, changed or even removed by the write (kube's ``Updater.Update``).

    ``typed``: compare as structured-merge-diff compares typed values: every node that appears is the
    writer's (its Added: ``"."`` on a new struct, map or list node), but ``f:metadata`` (kube's field manager
    strips it). Built-in kinds pass Go-shaped objects (:func:`kapi.k8sproto.goshape.shaped`; on create
    ``live`` is the kind's zero object), so nodes the Go struct always has (``f:spec``, ``f:containers``) are
    in both and no members while ``f:rollingUpdate``, ``f:labels``, ``f:ports`` are; custom resources pass
    their JSON as it is (unstructured: a new ``spec`` is ``f:spec: {.: {}}``). Not typed (built-in kinds
    without Go facts), struct nodes are never members.
    """
    reset = tuple(reset)
    before, _ = flatten(live or {}, types, reset, typed)
    after, structs = flatten(new, types, reset, typed)
    changed = {p for p, v in after.items() if (typed or p not in structs) and (p not in before or (
        v is not _LEAF and before[p] != v))}
    changed.discard(("f:metadata",))
    if only is not None:
        changed &= set(only)
    result = incoming_entries(live, new)
    mine = Entry(manager, UPDATE, api_version, frozenset(), time, subresource)
    out = []
    found = False
    for e in result:
        if e.same_owner(mine):
            found = True
            fields = frozenset(p for p in e.fields if p in after)
            e = Entry(e.manager, e.operation, api_version, fields | changed, time if changed else e.time,
                      subresource)
        else:
            fields = frozenset(p for p in e.fields if p in after or _under(p, reset))
            e = Entry(e.manager, e.operation, e.api_version, fields - changed, e.time, e.subresource)
        out.append(e)
    if not found and changed:
        out.append(Entry(manager, UPDATE, api_version, frozenset(changed), time, subresource))
    return encode(cap_update_managers([e for e in out if e.fields]))


MAX_UPDATE_MANAGERS = 10  # kube's DefaultMaxUpdateManagers
ANCIENT_CHANGES = "ancient-changes"  # the manager the oldest Update entries merge into


def _identifier(e: Entry) -> str:
    """kube's BuildManagerIdentifier: the entry's manager, operation, apiVersion (not an applier's) and subresource
    as Go's encoding/json writes a ManagedFieldsEntry without time and fields."""
    ident: dict[str, str] = {"manager": e.manager, "operation": e.operation,
                             "apiVersion": "" if e.operation == APPLY else e.api_version,
                             "subresource": e.subresource}
    return json.dumps({k: v for k, v in ident.items() if v}, separators=(",", ":"), ensure_ascii=False)


def _unix_seconds(time: str) -> int:
    """The Unix seconds of a managedFields time (0 when absent or unreadable, as kube's nil time)."""
    try:
        return int(datetime.fromisoformat(time.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return 0


def cap_update_managers(items: list[Entry], limit: int = MAX_UPDATE_MANAGERS) -> list[Entry]:
    """kube's capManagersManager after every Update: at most ``limit`` Update entries remain.

    The Update entries are taken oldest first (by time in seconds, then by manager identifier); while there are
    more than ``limit``, each one after the first of its apiVersion merges into that version's
    ``ancient-changes`` entry (created from the first one, which it replaces), which takes the merged entry's time.
    Apply entries are never merged.
    """
    by_id = {_identifier(e): e for e in items}
    updaters = [i for i, e in by_id.items() if e.operation != APPLY]
    if len(updaters) <= limit:
        return items
    updaters.sort(key=lambda i: (_unix_seconds(by_id[i].time), i))
    first_of: dict[str, str] = {}
    length = len(updaters)
    for ident in updaters:
        if length <= limit:
            break
        e = by_id.get(ident)
        if e is None:
            continue
        version = e.api_version
        bucket = _identifier(Entry(ANCIENT_CHANGES, UPDATE, version, frozenset()))
        if version not in first_of:
            first_of[version] = ident
            continue
        if bucket not in by_id:
            first = by_id.pop(first_of[version])
            by_id[bucket] = Entry(ANCIENT_CHANGES, UPDATE, version, first.fields, first.time)
        by_id[bucket] = Entry(ANCIENT_CHANGES, UPDATE, version, e.fields | by_id[bucket].fields, e.time)
        del by_id[ident]  # as kube, even when ``ident`` is the bucket itself
        length -= 1
    return list(by_id.values())


def merge(live: Any, config: Any, schema: Schema, types: Types) -> Any:
    """Merge an applied configuration into a live value: granular maps by key, associative lists by key, sets as
    unions, atomic values replaced (structured-merge-diff's merge)."""
    if isinstance(config, dict) and isinstance(live, dict) and not types.map_atomic(schema):
        out = dict(live)
        for key, value in config.items():
            out[key] = merge(live.get(key), value, types.field(schema, key), types) if key in live else \
                copy.deepcopy(value)
        return out
    if isinstance(config, list) and isinstance(live, list):
        kind, keys = types.list_kind(schema)
        if kind == "map":
            item_schema = types.items(schema)
            defaults = types.key_defaults(item_schema, keys)
            out_list = [copy.deepcopy(x) for x in live]
            index = {key_element(x, keys, defaults): i for i, x in enumerate(out_list)}
            for item in config:
                element = key_element(item, keys, defaults)
                if element in index:
                    out_list[index[element]] = merge(out_list[index[element]], item, item_schema, types)
                else:
                    index[element] = len(out_list)
                    out_list.append(copy.deepcopy(item))
            return out_list
        if kind == "set":
            out_list = list(live)
            for item in config:
                if item not in out_list:
                    out_list.append(item)
            return out_list
    return copy.deepcopy(config)


def remove_path(obj: Any, path: Path, types: Types, schema: Schema) -> None:
    """Delete the field, map key or list item at ``path`` from ``obj`` in place (absent paths are ignored)."""
    if not path:
        return
    head, rest = path[0], path[1:]
    kind, _, name = head.partition(":")
    if kind == "f" and isinstance(obj, dict):
        if not rest:
            obj.pop(name, None)
        elif name in obj:
            child_schema = types.field(schema, name)
            remove_path(obj[name], rest, types, child_schema)
        return
    if isinstance(obj, list):
        list_kind, keys = types.list_kind(schema)
        defaults = types.key_defaults(types.items(schema), keys) if list_kind == "map" else {}
        for i, item in enumerate(obj):
            element = key_element(item, keys, defaults) if list_kind == "map" else value_element(item)
            if element == head:
                if not rest:
                    del obj[i]
                else:
                    remove_path(item, rest, types, types.items(schema))
                return


class ApplyConflict(errors.StatusError):
    """The 409 of an apply that changes fields other managers own; ``conflicts`` lists (owner, path) pairs
    (structured-merge-diff's ``merge.Conflicts``), so a caller may filter them (kube's lastAppliedManager)."""

    def __init__(self, conflicts: list[tuple[Entry, Path]], message: str, details: Mapping[str, Any]):
        super().__init__(409, "Conflict", message, details)
        self.conflicts = conflicts


def conflict_error(conflicts: list[tuple[Entry, Path]]) -> ApplyConflict:
    """kube's 409 for apply conflicts: ``Apply failed with 1 conflict: conflict with "m" using v1: .data.a``.

    Several conflicts are grouped by manager (sorted), one ``- <path>`` line each.
    """
    causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {e.describe()}",
               "field": path_string(p)} for e, p in conflicts]
    if len(conflicts) == 1:
        entry, path = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {entry.describe()}: {path_string(path)}"
    else:
        by_manager: dict[str, list[Path]] = {}
        for entry, path in conflicts:
            by_manager.setdefault(entry.describe(), []).append(path)
        lines = []
        for manager in sorted(by_manager):
            lines.append(f"conflicts with {manager}:")
            lines.extend(f"- {path_string(p)}" for p in by_manager[manager])
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return ApplyConflict(conflicts, message, {"causes": causes})


def apply(live: Mapping[str, Any] | None, config: Mapping[str, Any], manager: str, api_version: str, time: str,
          types: Types, force: bool = False, subresource: str = "", reset: Iterable[str] = ()) -> dict[str, Any]:
    """Server-side apply ``config`` as ``manager`` onto ``live`` (None: create); returns the new object.

    The result carries the new ``metadata.managedFields``. Raises 409
    Conflict (:func:`conflict_error`) when the configuration changes a field
    another manager owns and ``force`` is False; with ``force`` those fields
    move to ``manager``. Fields ``manager`` applied before and omits now are
    removed unless another manager owns them (or something below them).
    """
    reset = tuple(reset)
    base: dict[str, Any] = copy.deepcopy(dict(live)) if live else {}
    applied = field_set(config, types, reset)
    # The whole configuration is merged (kube's liveObject.Merge(config)): the strategy then resets what it resets
    # (spec on /status, status on the main resource); ``reset`` only keeps the applier from owning those fields.
    tracked_config = _tracked(config, ())
    merged = merge(base, tracked_config, types.root, types) if base else copy.deepcopy(dict(config))
    for key in ("apiVersion", "kind"):
        if key in config:
            merged[key] = config[key]
    before, _ = flatten(base, types, reset)
    after, structs = flatten(merged, types, reset)
    changed = {p for p, v in after.items() if p not in structs and (p not in before or (
        v is not _LEAF and before[p] != v))}
    me = Entry(manager, APPLY, api_version, applied, time, subresource)
    others: list[Entry] = []
    previous: FieldSet = frozenset()
    conflicts: list[tuple[Entry, Path]] = []
    previous_time = ""
    for e in entries(live):
        if e.same_owner(me):
            previous, previous_time = e.fields, e.time
            continue
        for p in sorted(e.fields & applied & changed):
            conflicts.append((e, p))
        others.append(e)
    if conflicts and not force:
        raise conflict_error(conflicts)
    if conflicts:
        taken = {p for _, p in conflicts}
        others = [Entry(e.manager, e.operation, e.api_version, e.fields - taken, e.time, e.subresource)
                  for e in others]
    owned_by_others = set().union(*(e.fields for e in others)) if others else set()
    removed: list[Path] = []
    for path in sorted(previous - applied, key=len):
        if any(path[:len(r)] == r for r in removed) or _covers(applied, path) or _covers(owned_by_others, path):
            continue
        remove_path(merged, path, types, types.root)
        removed.append(path)
    present, _ = flatten(merged, types, reset)
    final = [Entry(e.manager, e.operation, e.api_version, frozenset(
        p for p in e.fields if p in present or _under(p, reset)), e.time, e.subresource) for e in others]
    if base and _without_managed_fields(merged) == _without_managed_fields(base):
        # structured-merge-diff's Apply returns no object when the merge changed nothing, and kube's
        # managedFieldsUpdater then keeps the applier's time (none for a new applier): a no-op apply writes nothing
        me.time = previous_time
    final.append(me)
    merged.setdefault("metadata", {})["managedFields"] = encode(final)
    return merged


def _without_managed_fields(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A shallow copy of ``obj`` whose metadata lacks ``managedFields`` (what structured-merge-diff compares)."""
    out = dict(obj)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        out["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return out




def allowed_conflicts_from_last_applied(live: Mapping[str, Any], api_version: str, types: Types,
                                        reset: Iterable[str] = ()) -> FieldSet | None:
    """The fields client-side apply recorded in ``live``'s last-applied annotation that still hold the recorded
    value (kube's lastAppliedManager.allowedConflictsFromLastApplied); None when there is no usable annotation.

    The annotation must be a JSON object of ``api_version`` (the request's group/version). The answer is the
    annotation's field set less the fields whose value differs from ``live`` or that ``live`` no longer has
    (``Compare``'s Modified and Removed; Added is outside the set anyway).
    """
    annotations = (live.get("metadata") or {}).get("annotations") or {}
    raw = annotations.get(LAST_APPLIED) if isinstance(annotations, dict) else None
    if not isinstance(raw, str) or not raw:
        return None
    try:
        last = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(last, dict) or last.get("apiVersion") != api_version:
        return None
    recorded, _ = flatten(last, types, reset)
    current, _ = flatten(live, types, reset)
    same = {p for p, v in recorded.items() if p in current and (
        v is current[p] if v is _LEAF or current[p] is _LEAF else v == current[p])}
    return frozenset(field_set(last, types, reset) & same)


def _go_v(value: Any) -> str:
    """Go's ``%v`` of a value sigs.k8s.io/yaml decoded into ``interface{}`` (every number a float64)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return gofmt.go_float(float(value))
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_v(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go_v(v) for v in value) + "]"
    return gofmt.go_value(value)


def _go_sharp_v(value: Any) -> str:
    """Go's ``%#v`` of such a value inside ``interface{}`` (``"a"``, ``1``, ``map[string]interface {}{"a":1}``)."""
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "map[string]interface {}{" + ", ".join(
            f"{json.dumps(k, ensure_ascii=False)}:{_go_sharp_v(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(_go_sharp_v(v) for v in value) + "}"
    return _go_v(value)


def _go_type(value: Any) -> str:
    """Go's ``%T`` of such a value."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    return "float64"


def _scalar_kind(schema: Schema) -> str:
    """kube-openapi schemaconv's scalar of a primitive schema: ``numeric``, ``string``, ``boolean``, ``untyped``
    (a string of another format, int-or-string, Quantity's oneOf) or ``""`` (not a scalar)."""
    if schema.get("x-kubernetes-int-or-string"):
        return "untyped"
    raw = schema.get("type")
    types = [t for t in (raw if isinstance(raw, list) else [raw]) if t and t != "null"]
    if not types:
        return "untyped" if "oneOf" in schema or "anyOf" in schema else ""
    kind = types[0]
    if kind in ("integer", "number"):
        return "numeric"
    if kind == "boolean":
        return "boolean"
    if kind == "string":
        return "string" if schema.get("format", "") in ("", "byte", "date-time") else "untyped"
    return ""


def _shape(schema: Schema) -> str:
    """``struct``, ``map``, ``list``, a scalar kind (:func:`_scalar_kind`) or ``""`` (untyped: anything goes)."""
    if schema.get("x-kubernetes-preserve-unknown-fields") and not schema.get("properties"):
        return ""
    if schema.get("properties"):
        return "struct"
    raw = schema.get("type")
    types = [t for t in (raw if isinstance(raw, list) else [raw]) if t and t != "null"]
    if types and types[0] == "object":
        return "map" if schema.get("additionalProperties") else ""
    if types and types[0] == "array":
        return "list"
    return _scalar_kind(schema)


def type_errors(value: Any, types: Types, schema: Schema | None = None, path: str = "") -> list[str]:
    """structured-merge-diff's validation of an apply configuration against its type (typed.ParseableType
    .FromUnstructured, ``typed/helpers.go`` and ``validate.go`` of structured-merge-diff v6), each error as
    ``<path>: <message>``, in walk order (a map's keys sorted; kube walks Go's map order):

    - a struct's key it does not declare: ``.spec.foo: field not declared in schema`` — and, as kube stops
      walking that map there, its later keys are not checked;
    - a scalar of the wrong type: ``expected numeric (int or float), got string`` (``%T``), ``expected string,
      got &value.valueUnstructured{Value:1}`` (``%#v``), ``expected boolean, got &{yes}`` (``%v``), ``expected any
      scalar, got &{map[]}`` (int-or-string, Quantity);
    - ``expected map, got &{[]}`` and ``expected list, got &{map[]}`` (``%v``; every number a float64, as
      sigs.k8s.io/yaml decodes);
    - an associative list: ``.spec.template.spec.containers: element 1: associative list with keys has an
      element that omits key field "name" (and doesn't have default value)`` (the rest of the list is not
      checked), ``... may not have non-map elements``, ``duplicate entries for key [name="a"]``; a set:
      ``element 0: associative list without keys has an element that's a map type``.

    Nulls are valid everywhere; an untyped schema (no type, ``x-kubernetes-preserve-unknown-fields``) accepts
    anything below it.
    """
    schema = types.resolve(types.root if schema is None and not path else schema)
    if value is None:
        return []
    shape = _shape(schema)
    here = path
    if shape in ("struct", "map"):
        if not isinstance(value, dict):
            return [f"{here}: expected map, got &{{{_go_v(value)}}}"]
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        open_map = shape == "map" or schema.get("x-kubernetes-preserve-unknown-fields")
        out: list[str] = []
        for key in sorted(value):
            child = f"{path}.{key}"
            if key in props:
                out.extend(type_errors(value[key], types, dict(props[key]), child))
            elif isinstance(extra, dict) and extra:
                out.extend(type_errors(value[key], types, dict(extra), child))
            elif open_map:
                continue
            else:
                out.append(f"{child}: field not declared in schema")
                break
        return out
    if shape == "list":
        if not isinstance(value, list):
            return [f"{here}: expected list, got &{{{_go_v(value)}}}"]
        kind, keys = types.list_kind(schema)
        item_schema = types.items(schema)
        defaults = types.key_defaults(item_schema, keys)
        out = []
        seen: set[str] = set()
        for i, item in enumerate(value):
            if kind == "map" and keys:
                if item is None:
                    return [*out, f"{here}: element {i}: associative list with keys may not have a null element"]
                if not isinstance(item, dict):
                    return [*out, f"{here}: element {i}: associative list with keys may not have non-map elements"]
                missing = [k for k in keys if k not in item and k not in defaults and k != "protocol"]
                if missing:
                    return [*out, f"{here}: element {i}: associative list with keys has an element that omits key "
                                  f"field {json.dumps(missing[0])} (and doesn't have default value)"]
                element = path_string((key_element(item, keys, defaults),))
            elif kind in ("map", "set"):
                problem = ("associative list without keys has an element that's a map type" if isinstance(item, dict)
                           else "not supported: associative list with lists as elements" if isinstance(item, list)
                           else "associative list without keys has an element that's an explicit null"
                           if item is None else "")
                if problem:
                    return [*out, f"{here}: element {i}: {problem}"]
                element = path_string((value_element(item),))
            else:
                element = f"[{i}]"
            if kind in ("map", "set"):
                if element in seen:
                    out.append(f"{here}: duplicate entries for key {element}")
                seen.add(element)
            out.extend(type_errors(item, types, item_schema, path + element))
        return out
    if shape == "numeric" and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return [f"{here}: expected numeric (int or float), got {_go_type(value)}"]
    if shape == "string" and not isinstance(value, str):
        return [f"{here}: expected string, got &value.valueUnstructured{{Value:{_go_sharp_v(value)}}}"]
    if shape == "boolean" and not isinstance(value, bool):
        return [f"{here}: expected boolean, got &{{{_go_v(value)}}}"]
    if shape == "untyped" and isinstance(value, (dict, list)):
        return [f"{here}: expected any scalar, got &{{{_go_v(value)}}}"]
    return []
