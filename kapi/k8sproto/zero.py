"""The JSON kube-apiserver writes for a zero Go object of a built-in kind: a watch BOOKMARK's object.

kube's watch cache builds a bookmark from ``c.newFunc()``, a new empty typed
object of the resource's kind, and sets only its ``resourceVersion`` (and, at
the end of a sendInitialEvents stream, the ``k8s.io/initial-events-end``
annotation); the watch handler encodes it as every object, with
encoding/json over the Go struct (k8s.io/apiserver
``pkg/storage/cacher/cacher.go`` and ``cache_watcher.go``, the bookmark
event; ``pkg/storage/cacher/ready`` aside). So the object carries every
field the zero struct always writes::

    {"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"314"},"spec":{"containers":null},"status":{}}

:func:`zero_object` derives that form for any kind of the protobuf table
from its messages (``schema.json``) and the Go facts of ``gofields.json``
(:mod:`kapi.k8sproto.gotypes`), following encoding/json:

* a non-pointer struct field is written whatever its tag (``omitempty``
  never omits a struct), holding its own zero fields: ``spec``, ``status``,
  ``strategy``, ``template``;
* a slice or map without ``omitempty`` is ``null`` (``containers``); with it,
  absent;
* a pointer without ``omitempty`` is ``null`` (a Deployment's ``selector``);
  with it, absent;
* a scalar without ``omitempty`` is its zero (``""``, ``0``, ``false``);
* the apimachinery specials marshal their zero: ``metav1.Time`` and
  ``MicroTime`` ``null``, Quantity ``"0"``, IntOrString ``0``, Duration
  ``"0s"``, RawExtension and FieldsV1 ``null``; ObjectMeta's
  ``creationTimestamp`` is ``omitzero`` and left out (as kapi writes it
  everywhere: docs/kube-parity.md, the metav1.Time row).

Custom resources are ``unstructured.Unstructured``: the CRD's NewFunc gives
an object with only ``apiVersion`` and ``kind`` (apiextensions-apiserver
``pkg/registry/customresource/etcd.go``), written with sorted keys
(:func:`unstructured_object`).

kube builds the bookmark from the *internal* type and converts it to the
version it serves, so where the internal field is a plain value and the
versioned one a pointer, the conversion points at the zero and it is
written: ``spec.replicas: 0`` of a Deployment, ReplicaSet, StatefulSet
(pkg/apis/apps/v1 ``zz_generated.conversion.go``,
``Convert_int32_To_Pointer_int32(&in.Replicas, ...)``) and
ReplicationController (pkg/apis/core/v1 ``conversion.go``)
(:data:`_CONVERTED_ZEROS`). A DaemonSet's conversion also writes its
internal ``spec.templateGeneration`` (0 in the zero object) as the
``deprecated.daemonset.template.generation`` annotation, ``"0"``
(``Convert_apps_DaemonSet_To_v1_DaemonSet``; :data:`_CONVERTED_ANNOTATIONS`).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator
from typing import Any

from kapi.k8sproto import decoder, goorder, gotypes

_OBJECT_META = "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta"

#: ``omitzero`` fields (Go 1.24): left out when zero, whatever else their tag says.
_OMITZERO = frozenset({(_OBJECT_META, "creationTimestamp")})

#: the JSON of a zero value of each special message (apimachinery's MarshalJSON of the zero struct)
_SPECIAL_ZERO: dict[str, Any] = {
    decoder.TIME: None, decoder.MICRO_TIME: None, decoder.QUANTITY: "0", decoder.INT_OR_STRING: 0,
    decoder.DURATION: "0s", decoder.RAW_EXTENSION: None, decoder.FIELDS_V1: None,
}
_SCALAR_ZERO: dict[str, Any] = {"string": "", "bytes": None, "bool": False}

#: {kind message: {spec field: value}}: pointers kube's internal-to-versioned conversion sets from a plain
#: internal field, so the zero object has them (module docstring).
_CONVERTED_ZEROS: dict[str, dict[str, Any]] = {
    "k8s.io.api.apps.v1.Deployment": {"replicas": 0},
    "k8s.io.api.apps.v1.ReplicaSet": {"replicas": 0},
    "k8s.io.api.apps.v1.StatefulSet": {"replicas": 0},
    "k8s.io.api.core.v1.ReplicationController": {"replicas": 0},
}

#: {kind message: {annotation: value}}: annotations kube's internal-to-versioned conversion writes from an internal
#: field of the zero object (module docstring).
_CONVERTED_ANNOTATIONS: dict[str, dict[str, str]] = {
    "k8s.io.api.apps.v1.DaemonSet": {"deprecated.daemonset.template.generation": "0"},
}


def _go_fields(message: decoder.Message) -> Iterator[tuple[str, Any, str, Any, str]]:
    """(name, type, mode, map value type, Go flags) of every JSON field of ``message``'s Go struct, inline members'
    fields in place; fields Go never writes (no Go facts, omitzero) are skipped."""
    facts = gotypes.table().get(message.name, {})
    for name, ftype, mode, vtype in message.fields.values():
        flags = facts.get(name, "?")
        if flags == "?" or (message.name, name) in _OMITZERO:
            continue
        if mode == "i":
            if isinstance(ftype, decoder.Message):
                yield from _go_fields(ftype)
            continue
        yield name, ftype, mode, vtype, flags


def _fields(message: decoder.Message, out: dict[str, Any]) -> None:
    """Add to ``out`` every field the zero Go struct of ``message`` writes (inline members' fields in place)."""
    for name, ftype, mode, _vtype, flags in _go_fields(message):
        _zero_field(out, name, ftype, mode, flags)


def _zero_field(out: dict[str, Any], name: str, ftype: Any, mode: str, flags: str) -> None:
    """Set ``out[name]`` to the zero value's JSON of one (non-inline) field, or leave it out if Go omits it."""
    omitempty, pointer = "o" in flags, "p" in flags
    if mode in ("r", "m") or (isinstance(ftype, decoder.Message) and ftype.is_list) or pointer:
        if not omitempty:
            out[name] = None
    elif isinstance(ftype, decoder.Message):
        if ftype.special is None:
            out[name] = copy.deepcopy(_zero_struct(ftype.name))
        elif ftype.name in _SPECIAL_ZERO:
            out[name] = _SPECIAL_ZERO[ftype.name]
    elif not omitempty:
        out[name] = _SCALAR_ZERO.get(ftype, 0)


@functools.cache
def _zero_struct(name: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    _fields(decoder.schema().messages[name], out)
    return out


def _is_go_zero(value: Any, ftype: Any) -> bool:
    """Whether a scalar JSON value is the Go zero of its protobuf scalar type (what ``omitempty`` leaves out)."""
    if ftype == "string":
        return value == ""
    if ftype == "bool":
        return value is False
    if ftype == "bytes":
        return value in ("", None)
    return type(value) in (int, float) and value == 0


def _written(obj: dict[str, Any], message: decoder.Message, fill: bool = True) -> dict[str, Any]:
    """``obj`` as encoding/json writes its decoded ``message`` struct: ``omitempty`` zeros left out and, with
    ``fill``, the always-written fields added and nulls read as Go does; without ``fill`` only the leaving out."""
    out = dict(obj)
    for name, ftype, mode, vtype, flags in _go_fields(message):
        omitempty, pointer = "o" in flags, "p" in flags
        if name not in out:
            if fill:
                _zero_field(out, name, ftype, mode, flags)
            continue
        value = out[name]
        struct = ftype if isinstance(ftype, decoder.Message) and ftype.special is None and not ftype.is_list \
            else None
        if mode in ("r", "m") or (isinstance(ftype, decoder.Message) and ftype.is_list):
            if omitempty and ((fill and value is None) or value == [] or value == {}):
                del out[name]
            elif struct is not None and mode == "r" and isinstance(value, list):
                out[name] = [_written(i, struct, fill) if isinstance(i, dict) else i for i in value]
            elif mode == "m" and isinstance(value, dict) and isinstance(vtype, decoder.Message) \
                    and vtype.special is None and not vtype.is_list:
                out[name] = {k: _written(v, vtype, fill) if isinstance(v, dict) else v for k, v in value.items()}
            continue
        if value is None and not fill:
            continue
        if value is None:
            if pointer and omitempty:
                del out[name]
            elif struct is not None and not pointer:
                out[name] = copy.deepcopy(_zero_struct(struct.name))
            continue
        if struct is not None and isinstance(value, dict):
            out[name] = _written(value, struct, fill)
        elif not isinstance(ftype, decoder.Message) and omitempty and not pointer and _is_go_zero(value, ftype):
            del out[name]
    return out


def fill_go_fields(obj: dict[str, Any], api_version: str, kind: str) -> None:
    """:func:`as_go_writes` in place, for ``obj`` of the built-in kind ``api_version``/``kind`` (a request body
    may lack its own apiVersion and kind): a kind's strategy gives the object it stores what encoding/json of
    the decoded struct would write (the Event kinds' ``default``)."""
    written = as_go_writes({**obj, "apiVersion": api_version, "kind": kind})
    had_type: dict[str, Any] = {k: obj[k] for k in ("apiVersion", "kind") if k in obj}
    obj.clear()
    obj.update({k: v for k, v in written.items() if k not in ("apiVersion", "kind")})
    obj.update(had_type)


def omit_empty(obj: dict[str, Any], group: str, version: str, kind: str) -> None:
    """Leave out of ``obj`` (a decoded request body of the built-in kind ``group/version, Kind=kind``), in place
    and at any depth, what kube's Go struct does not keep: an ``omitempty`` field's empty slice or map
    (``labels: {}``, ``finalizers: []``, ``ports: []``) and a non-pointer ``omitempty`` scalar's zero
    (``hostNetwork: false``, ``hostPort: 0``, ``name: ""``). kube stores the struct as protobuf, where an
    empty map or slice and a zero scalar leave no trace, and encoding/json writes none of them, so neither
    the stored object nor any answer has them (k8s.io/api ``types.go`` json tags, ``generated.pb.go``).
    ``metadata.managedFields: []`` stays: the field manager reads an empty list as "reset the managed
    fields" before the object is stored (apiserver ``fieldmanager/internal/fieldmanager.go``
    isResetManagedFields). Nothing is added (cf. :func:`as_go_writes`); nulls are left to
    :func:`kapi.schema.nulls_to_zero`. A kind the protobuf table lacks is left as it is."""
    message = decoder.schema().lookup(group, version, kind)
    if message is None:
        return
    meta = obj.get("metadata")
    reset = isinstance(meta, dict) and meta.get("managedFields") == []
    written = _written(obj, message, fill=False)
    if reset and isinstance(written.get("metadata"), dict):
        written["metadata"]["managedFields"] = []
    obj.clear()
    obj.update(written)


def as_go_writes(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` (a built-in object with apiVersion and kind) as encoding/json writes it once decoded into its Go
    struct: the fields the struct always writes added when absent (:func:`zero_object`'s rules: a plain string
    ``""``, a non-pointer Time ``null``, a non-pointer struct ``{}``, a slice without omitempty ``null``), and
    ``omitempty`` zeros left out (``""``, ``0``, ``false``, an empty slice or map, a nil pointer), in nested
    structs and list items alike. Values of the wrong JSON type are left to validation. A kind the protobuf
    table lacks is returned as it is. Returns a new dict (nested values shared where unchanged)."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return obj
    group, _, version = api_version.rpartition("/")
    message = decoder.schema().lookup(group, version, kind)
    return obj if message is None else _written(obj, message)


def zero_object(api_version: str, kind: str, metadata: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The zero object of the built-in kind ``api_version``/``kind`` as kube's encoding/json writes it, with
    ``metadata`` (ObjectMeta JSON, e.g. ``{"resourceVersion": "314"}``) in place of the zero ObjectMeta's
    ``{}``, in Go's key order (``kind``, ``apiVersion``, then the struct's fields); a DaemonSet's metadata gains
    ``deprecated.daemonset.template.generation: "0"`` among its annotations. None for a kind the protobuf
    table lacks (custom resources: :func:`unstructured_object`). Returns a new dict."""
    group, _, version = api_version.rpartition("/")
    message = decoder.schema().lookup(group, version, kind)
    if message is None:
        return None
    body = copy.deepcopy(_zero_struct(message.name))
    converted = _CONVERTED_ZEROS.get(message.name)
    if converted is not None:
        body["spec"] = {**converted, **body["spec"]}
    if metadata is not None:
        body["metadata"] = dict(metadata)
    annotations = _CONVERTED_ANNOTATIONS.get(message.name)
    if annotations is not None:
        given = body["metadata"].get("annotations")
        body["metadata"]["annotations"] = {**(given if isinstance(given, dict) else {}), **annotations}
    return goorder.wire_order({"kind": kind, "apiVersion": api_version, **body})


def unstructured_object(api_version: str, kind: str, metadata: dict[str, Any]) -> dict[str, Any]:
    """A custom resource's bookmark object: ``apiVersion``, ``kind`` and ``metadata``, keys sorted at every level
    (Unstructured's encoding). Returns a new dict."""
    result: dict[str, Any] = goorder.sorted_deep({"apiVersion": api_version, "kind": kind, "metadata": metadata})
    return result
