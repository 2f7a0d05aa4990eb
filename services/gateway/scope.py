"""Per-request state handed to the verb handlers, and helpers they share.

A :class:`RequestScope` is built once by the handler chain (chain.py) after
authentication, flow control and authorization; handlers never re-parse the
URL (STYLE.md habit 4).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web
from multidict import MultiMapping

from kapi import errors, events, gofmt, jsonutil, schema
from kapi.attributes import Attributes
from kapi.k8sproto import goorder
from kapi.resources import REGISTRY, Resource
from kapi.revisions import as_revision
from kapi.selectors import FieldLabels, SelectorError, parse_field_selector
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import negotiation, table
from services.gateway.requestinfo import RequestInfo
from services.gateway.warning import add_warnings

if TYPE_CHECKING:
    from services.gateway.backends import Backends


# kube-apiserver gzips responses larger than this when the client accepts gzip (defaultGzipThresholdBytes).
GZIP_THRESHOLD_BYTES = 128 * 1024


@dataclass
class RequestScope:
    """One resource request: what it addresses, who sent it, how to answer, and the backends to use."""

    request: web.Request
    info: RequestInfo
    attrs: Attributes
    resource: Resource
    query: MultiMapping[str]
    output: negotiation.Output
    backends: Backends
    timeout: float  # seconds this request may still take (non-long-running requests)
    # the request's warning recorder: the list of its RequestContext (routes.py), so a refusal sends them too
    warnings: list[str] = field(default_factory=list)
    applying: bool = False  # a server-side apply: managedFields come from the apply, not from Update tracking
    # a PATCH's Content-Type and, for a strategic merge patch, the patch as Go's %+v prints it: admission shows
    # them in kube's 422 ``patch: Invalid value`` when the patched object does not decode (handlers/patch.go)
    patch_type: str = ""
    patch_value: str = ""

    def key(self, name: str | None = None, namespace: str | None = None) -> storage_pb2.ResourceKey:
        """The storage ResourceKey of this request's collection or object."""
        ns = self.info.namespace if namespace is None else namespace
        # events.k8s.io events are the core Events, stored once (kapi.events converts them).
        group = "" if (self.resource.group, self.resource.resource) == ("events.k8s.io", "events") \
            else self.resource.group
        return storage_pb2.ResourceKey(group=group, resource=self.resource.resource,
                                       namespace=ns if self.resource.namespaced else "",
                                       name=self.info.name if name is None else name)

    def field_selector(self) -> str:
        """The fieldSelector for storage: an events.k8s.io one converted to the core Event's labels (400 for a
        label its conversion refuses, :data:`kapi.events.FIELD_LABELS`); a cluster-scoped custom resource's
        checked by the apiextensions crConverter's rule (``field label not supported: metadata.namespace``:
        only namespaced ones have it); any other as given (storage converts those with the kind's conversion)."""
        text = self.param("fieldSelector")
        resource = self.resource
        if not text:
            return text
        labels: FieldLabels | None = None
        if (resource.group, resource.resource) == ("events.k8s.io", "events"):
            labels = events.FIELD_LABELS
        elif not resource.namespaced and not REGISTRY.is_static(resource):
            labels = FieldLabels(frozenset({"metadata.name", *self.selectable_fields()}))
        if labels is None:
            return text
        try:
            return parse_field_selector(text, labels).text()
        except SelectorError as exc:
            raise errors.bad_request(str(exc)) from None

    @property
    def content_type(self) -> str:
        """The request body's media type without parameters; "" when absent (decoded as JSON, as kube does)."""
        return self.request.headers.get("Content-Type", "").split(";")[0].strip().lower()

    def param(self, name: str, default: str = "") -> str:
        """The first value of query parameter ``name``."""
        return self.query.get(name, default)

    def selectable_fields(self) -> list[str]:
        """Extra field-selector labels of this resource: a CRD version's ``selectableFields`` (else none)."""
        custom = self.backends.custom_resources
        return custom.selectable_fields(self.resource) if custom is not None else []

    def dry_run(self) -> bool:
        """``dryRun=All`` -> True; absent -> False; any other value -> the verb's options 422
        (:func:`dry_run_causes`, :func:`invalid_options`)."""
        values = self.query.getall("dryRun", [])
        if values:
            causes = dry_run_causes(values)
            if causes:
                raise invalid_options(self.info.verb, causes)
        return bool(values)

    def field_validation(self) -> str:
        """``fieldValidation``: "", Ignore, Warn or Strict; anything else -> the verb's options 422
        (:func:`field_validation_causes`, :func:`invalid_options`)."""
        value = self.param("fieldValidation")
        if value:
            causes = field_validation_causes(value)
            if causes:
                raise invalid_options(self.info.verb, causes)
        return value

    def respond(self, body: Any, status: int = 200, composed: bool = False) -> web.Response:
        """Encode ``body`` (a dict, or JSON bytes of one object) in the negotiated form.

        ``composed``: ``body`` is an object the gateway built itself and never stored (a review's answer, a
        TokenRequest), so its keys are put in kube's encoding order here (:func:`kapi.k8sproto.goorder.wire_order`:
        kube encodes the Go struct); stored objects come from storage already in that order and are not walked, nor
        are Status answers (kapi.errors builds them in Go order)."""
        if composed and isinstance(body, dict) and body.get("kind") != "Status":
            body = goorder.wire_order(body)
        if isinstance(body, (bytes, bytearray)):
            if self.output.mime == negotiation.JSON and not self.output.table and not self.output.partial_metadata:
                return self.send(jsonutil.go_escape(bytes(body)), negotiation.JSON, status)
            body = jsonutil.loads(bytes(body))
        is_object = body.get("kind") == self.resource.kind
        if self.output.partial_metadata and (is_object or body.get("kind") == self.resource.list_kind):
            negotiation.check_partial(self.output, not is_object, go_type(self.resource, list_=not is_object))
        if self.output.table and is_object:
            body = table.table(self.resource, [body], {"resourceVersion": (body.get("metadata") or {}).get(
                "resourceVersion", "")}, negotiation.include_object(self.param("includeObject")), self.output.version)
        elif self.output.partial_metadata and is_object:
            body = {"kind": "PartialObjectMetadata", "apiVersion": self.output.meta_api_version,
                    "metadata": body.get("metadata") or {}}
        data, content_type = negotiation.encode(body, self.output)
        return self.send(data, content_type, status)

    def send(self, data: bytes, content_type: str, status: int = 200) -> web.Response:
        """``data`` (JSON already HTML-escaped as Go's encoder: :func:`kapi.jsonutil.go_escape`) as the response:
        newline-terminated as json.Encoder writes it, or, pretty-printed (:func:`negotiation.pretty`: ``pretty=true``,
        a curl or browser User-Agent), Go's MarshalIndent form without the newline (kube's JSON serializer with
        Pretty)."""
        if content_type == negotiation.JSON:
            request = self.request
            if negotiation.pretty(request.rel_url.raw_query_string, self.query, request.headers.get("User-Agent", "")):
                data = jsonutil.dumps_go_indent(jsonutil.loads(data))
            elif not data.endswith(b"\n"):  # kube's JSON serializer ends every body with a newline (json.Encoder)
                data += b"\n"
        response = web.Response(body=data, status=status, content_type=content_type)
        if len(data) > GZIP_THRESHOLD_BYTES and "gzip" in self.request.headers.get("Accept-Encoding", ""):
            response.enable_compression(web.ContentCoding.gzip)
        add_warnings(response, self.warnings)
        return response


_OPTIONS_KINDS = {"create": "CreateOptions", "update": "UpdateOptions", "patch": "PatchOptions",
                  "delete": "DeleteOptions", "deletecollection": "DeleteOptions"}
FIELD_VALIDATIONS = ("", "Ignore", "Strict", "Warn")  # ValidateFieldValidation's allowed values, sorted as it lists


def go_strings(values: list[Any]) -> str:
    """Go's ``%#v`` of a ``[]string``: ``[]string{"a", "b"}``."""
    return "[]string{" + ", ".join(gofmt.go_quote(v) for v in values) + "}"


def dry_run_causes(values: list[Any]) -> list[errors.Cause]:
    """ValidateDryRun (apimachinery ``meta/v1/validation``): every ``dryRun`` value must be ``All``, else one
    ``dryRun: Unsupported value: []string{"x"}: supported values: "All"`` cause naming the whole list."""
    if all(v == "All" for v in values):
        return []
    return [errors.Cause("FieldValueNotSupported", f'Unsupported value: {go_strings(values)}: supported values: '
                         '"All"', "dryRun")]


def field_validation_causes(value: str) -> list[errors.Cause]:
    """ValidateFieldValidation: ``fieldValidation: Unsupported value: "x": supported values: "", "Ignore",
    "Strict", "Warn"`` unless ``value`` is one of :data:`FIELD_VALIDATIONS`."""
    if value in FIELD_VALIDATIONS:
        return []
    return [errors.Cause("FieldValueNotSupported", f"Unsupported value: {gofmt.go_quote(value)}: supported values: "
                         + ", ".join(gofmt.go_quote(v) for v in FIELD_VALIDATIONS), "fieldValidation")]


def invalid_options(verb: str, causes: list[errors.Cause]) -> errors.StatusError:
    """The 422 a write's handler answers when its options do not validate: ``CreateOptions.meta.k8s.io "" is
    invalid: dryRun: ...`` (UpdateOptions, PatchOptions, DeleteOptions by ``verb``; errors.NewInvalid of
    GroupKind meta.k8s.io/<Kind>Options, no name; handlers/create.go, update.go, patch.go, delete.go)."""
    return errors.invalid(_OPTIONS_KINDS.get(verb, "CreateOptions"), "", causes, "meta.k8s.io")


# The anonymous struct kube's JSON serializer first decodes a body into (SimpleMetaFactory.Interpret), as Go's
# reflect names it in an unmarshal error.
#: the struct the JSON serializer's SimpleMetaFactory.Interpret unmarshals into, as Go's %v prints its type
TYPE_META_STRUCT = ('struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
                     'Kind string "json:\\"kind,omitempty\\"" }')


def unrecognized(scope: RequestScope, message: str, body: bytes, kind: str = "") -> errors.StatusError:
    """kube's transformDecodeError for a body its decoder found no kind in (handlers/rest.go): 400 ``the object
    provided is unrecognized (must be of type <Kind>): <decoder error> (<summarizeData(body, 30)>)``; ``kind``:
    the type the handler decodes into (default: the resource's kind)."""
    return errors.bad_request(f"the object provided is unrecognized (must be of type {kind or scope.resource.kind}"
                              f"): {message} ({_summarize(body)})")


def _decode_any(scope: RequestScope, body: bytes, kind: str = "") -> Any:
    """A create's or update's body decoded by its Content-Type; a body the decoder cannot read or that is not an
    object is :func:`unrecognized` (see :func:`decode_request`)."""
    header = scope.request.headers.get("Content-Type", "")
    mime = negotiation.negotiate_input(header)  # 415 for a media type no serializer has, parameters checked too
    try:
        data = negotiation.decode_body(body, mime)
    except errors.StatusError as err:
        if err.code != 400 or mime == negotiation.PROTOBUF:
            raise
        raise unrecognized(scope, err.message, body, kind) from None
    if mime != negotiation.PROTOBUF and data is not None and not isinstance(data, dict):
        raise unrecognized(scope, "couldn't get version/kind; json parse error: json: cannot unmarshal "
                           f"{go_json_type(data)} into Go value of type {TYPE_META_STRUCT}", body, kind)
    return data


def decode_request(scope: RequestScope, body: bytes, name_from_url: bool) -> dict[str, Any]:
    """The body of a create or update (POST, PUT; also reviews) decoded and checked (:func:`decode_object`).

    A JSON or YAML body the decoder cannot read (a syntax error, YAML that is no JSON, too deep), or one that is
    not an object, is kube's transformDecodeError (:func:`unrecognized`): ``couldn't get version/kind; json
    parse error: ...`` / ``error converting YAML to JSON: ...`` with the body's summary; 413 and 415 pass
    through, as do protobuf errors."""
    return decode_object(_decode_any(scope, body), scope, name_from_url=name_from_url, body=body)


def decode_typed_body(scope: RequestScope, body: bytes, group: str, versions: tuple[str, ...], kind: str
                      ) -> dict[str, Any]:
    """The body of a subresource create whose storage decodes into a type other than the resource's (pods/eviction:
    policy Eviction, pods/binding: core Binding): ``group``/``kind`` in one of ``versions`` (a missing
    ``apiVersion`` or ``kind`` is the first version's). Raises kube's 400s (:func:`decode_request`'s for an
    unreadable or non-object body, ``<kind> in version "<v>" cannot be handled as a <Kind>: converting
    (<v>.<kind>) to (<package>.<Kind>): unknown conversion`` or ``... no kind ... is registered`` for a body of
    another kind), so nothing is written from a body of the wrong type."""
    data = _decode_any(scope, body, kind)
    if data is None:
        data = {}
    for key in ("apiVersion", "kind"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise unrecognized(scope, "couldn't get version/kind; json parse error: json: cannot unmarshal "
                               f"{go_json_type(data[key])} into Go struct field .{key} of type string", body, kind)
    default_version = f"{group}/{versions[0]}" if group else versions[0]
    api_version = data.get("apiVersion") or default_version
    body_group, _, body_version = api_version.rpartition("/")
    body_kind = data.get("kind") or kind
    if (body_group, body_kind) != (group, kind) or body_version not in versions:
        check_typed_kind(group, versions[0], kind, api_version, body_kind)
        raise errors.bad_request(f"the API version in the data ({api_version}) does not match the expected API "
                                 f"version ({default_version})")
    return data


def decode_object(data: Any, scope: RequestScope, name_from_url: bool, body: bytes | None = None) -> dict[str, Any]:
    """Check a decoded request body is an object of this resource and fill apiVersion/kind/namespace.

    Raises 400 BadRequest, with kube-apiserver's messages (its decoder's
    errors through ``transformDecodeError``, handlers/create.go), when:

    - the body is not an object;
    - ``apiVersion`` or ``kind`` is not a string: ``the object provided is
      unrecognized (must be of type <Kind>): couldn't get version/kind; json
      parse error: ... (<the body's first 30 bytes>)`` (``body`` is the raw
      request body the handler read, passed by every handler);
    - for a built-in resource, the body names another kind (a missing
      ``apiVersion`` or ``kind`` defaults to the URL's): one kapi serves
      gives ``<kind> in version "<v>" cannot be handled as a <Kind>:
      converting (<v>.<kind>) to (<internal package>.<Kind>): unknown
      conversion``, any other ``... no kind "<kind>" is registered for version
      "<apiVersion>" in scheme "pkg/api/legacyscheme/scheme.go:30"``; the same
      kind in another served version of the group decodes and is refused with
      ``the API version in the data (...) does not match the expected API
      version (...)``; custom resources keep the plain
      ``the kind in the data (X) does not match the expected kind (Y)`` (apply patches are checked before,
      by handlers/apply.py ``check_object_type``: ``invalid object type``);
    - its namespace or name disagree with the URL.
    """
    resource = scope.resource
    if not isinstance(data, dict):
        raise errors.bad_request("the body of the request must be a JSON or YAML object")
    for key in ("apiVersion", "kind"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise errors.bad_request(f"the object provided is unrecognized (must be of type {resource.kind}): "
                                     "couldn't get version/kind; json parse error: json: cannot unmarshal "
                                     f"{go_json_type(data[key])} into Go struct field .{key} of type string "
                                     f"({_summarize(_raw_body(data, body))})")
    api_version = data.get("apiVersion") or ""
    kind = data.get("kind") or ""
    if REGISTRY.is_static(resource) and resource.group not in _OWN_SCHEMES:
        check_typed_kind(resource.group, resource.version, resource.kind, api_version or resource.group_version,
                         kind or resource.kind)
    if api_version and api_version != resource.group_version:
        raise errors.bad_request(f"the API version in the data ({api_version}) does not match the expected API "
                                 f"version ({resource.group_version})")
    if kind and kind != resource.kind:
        raise errors.bad_request(f"the kind in the data ({kind}) does not match the expected kind "
                                 f"({resource.kind})")
    data["apiVersion"] = resource.group_version
    data["kind"] = resource.kind
    meta = data.get("metadata")
    if meta is None:
        meta = data["metadata"] = {}
    if not isinstance(meta, dict):
        raise errors.bad_request("metadata must be an object")
    check_identity(scope, meta, namespaced=resource.namespaced, name_from_url=name_from_url)
    if resource.namespaced:
        meta["namespace"] = scope.info.namespace
    else:
        meta.pop("namespace", None)
    return data


def check_identity(scope: RequestScope, meta: Mapping[str, Any], *, namespaced: bool = True,
                   name_from_url: bool = True, empty_name_ok: bool = False) -> None:
    """400 BadRequest when a body's ``metadata`` names another namespace or object than the URL (kube's
    checkName in handlers/rest.go): ``the namespace of the provided object does not match the namespace sent on
    the request``; ``the name of the object (x) does not match the name on the URL (y)``. ``empty_name_ok``: a
    body without a name is the URL's (a subresource's body, e.g. a Scale)."""
    if namespaced:
        body_ns = meta.get("namespace") or ""
        if body_ns and body_ns != scope.info.namespace:
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on "
                                     "the request")
    if name_from_url:
        body_name = meta.get("name") or ""
        if not (empty_name_ok and not body_name):
            check_name(scope, body_name)


def check_name(scope: RequestScope, name: str) -> None:
    """kube's checkName (handlers/rest.go) of an update's or patch's object name ``name`` ("" when unset) against
    the URL's: 400 ``the name of the object (<url> based on URL) was undeterminable: name must be provided`` for
    none (ContextBasedNaming.ObjectName's errEmptyName, namer.go), ``the name of the object (<name>) does not
    match the name on the URL (<url>)`` for another."""
    if not name:
        raise errors.bad_request(f"the name of the object ({scope.info.name} based on URL) was undeterminable: "
                                 "name must be provided")
    if name != scope.info.name:
        raise errors.bad_request(f"the name of the object ({name}) does not match the name on the URL "
                                 f"({scope.info.name})")


def go_json_type(value: Any) -> str:
    """The JSON type name encoding/json's UnmarshalTypeError gives a decoded value (``array``, ``number`` ...)."""
    return {bool: "bool", int: "number", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), "value")

# Groups kube serves from a scheme of their own (apiextensions-apiserver, kube-aggregator), not legacyscheme.
_OWN_SCHEMES = frozenset({"apiextensions.k8s.io", "apiregistration.k8s.io"})
LEGACY_SCHEME = "pkg/api/legacyscheme/scheme.go:30"  # the scheme kube-apiserver's built-ins decode with


def _internal_package(group: str) -> str:
    """The Go package of a built-in group's internal types (``core`` for the core group and events.k8s.io)."""
    return "core" if group in ("", "events.k8s.io") else group.split(".")[0]


def go_type(resource: Resource, list_: bool = False) -> str:
    """Go's ``%T`` of the object (``list_``: the list) kube's handler reads for ``resource``: the registry's
    internal type for a built-in kind (``*core.ConfigMap``, ``*apps.DeploymentList``, ``*apiserverinternal.
    StorageVersion``), ``*unstructured.Unstructured(List)`` for a custom resource."""
    if not REGISTRY.is_static(resource):
        return "*unstructured.UnstructuredList" if list_ else "*unstructured.Unstructured"
    package = "apiserverinternal" if resource.group == "internal.apiserver.k8s.io" else \
        _internal_package(resource.group)
    return f"*{package}.{resource.kind}{'List' if list_ else ''}"


def check_typed_kind(target_group: str, target_version: str, target_kind: str, api_version: str, kind: str) -> None:
    """kube's typed decode of a body of ``api_version``/``kind`` into the internal type of ``target_group``
    ``target_kind`` (served at ``target_version``): raises its 400 when the body's kind is not registered or does
    not convert (see :func:`decode_object`)."""
    group, _, version = api_version.rpartition("/")
    if (group, kind) == (target_group, target_kind) and version == target_version:
        return
    prefix = f"{kind} in version {gofmt.go_quote(version)} cannot be handled as a {target_kind}: "
    if REGISTRY.by_kind(group, version, kind) is None:
        raise errors.bad_request(f"{prefix}no kind {gofmt.go_quote(kind)} is registered for version "
                                 f"{gofmt.go_quote(api_version)} in scheme {gofmt.go_quote(LEGACY_SCHEME)}")
    if (_internal_package(group), kind) != (_internal_package(target_group), target_kind):
        raise errors.bad_request(f"{prefix}converting ({version}.{kind}) to "
                                 f"({_internal_package(target_group)}.{target_kind}): unknown conversion")


def _raw_body(data: dict[str, Any], body: bytes | None) -> bytes:
    """The request body as sent (``body``, which every handler passes), else ``data`` re-encoded."""
    return body if body is not None else jsonutil.dumps(data)


def _summarize(body: bytes) -> str:
    """kube's ``summarizeData(body, 30)``: an object's first 30 bytes as text, anything else in hex."""
    if not body:
        return "<empty>"
    head = body[:30]
    text = head.decode("utf-8", "replace") if body[:1] == b"{" else head.hex()
    return text + (" ..." if len(body) > 30 else "")



def resource_version_of(scope: RequestScope, obj: dict[str, Any]) -> str:
    """``metadata.resourceVersion`` of a request object as a string ("" if absent); a non-string is kube's decode
    error (400 ``<Kind> in version "v1" cannot be handled as a <Kind>: json: cannot unmarshal object into Go struct
    field ObjectMeta.metadata.resourceVersion of type string``)."""
    meta = obj.get("metadata")
    value = meta.get("resourceVersion") if isinstance(meta, dict) else None
    if value is None or isinstance(value, str):
        return value or ""
    kind, version = scope.resource.kind, scope.resource.version
    raise errors.bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: json: cannot unmarshal '
                             f"{go_json_type(value)} into Go struct field ObjectMeta.metadata.resourceVersion of "
                             "type string")


def parse_resource_version(text: str) -> int:
    """A resourceVersion string as a revision; "" -> 0. Anything but decimal digits (kube's ``ParseUint``), or a
    number past int64 (no etcd revision reaches it; storage answered a 504 "Too large resource version" and a
    watch hung) -> 400 ``invalid resource version "<text>"``."""
    if not text:
        return 0
    revision = as_revision(text)
    if revision is None:
        raise errors.bad_request(f"invalid resource version {gofmt.go_quote(text)}")
    return revision


def success_status(scope: RequestScope, obj: dict[str, Any]) -> dict[str, Any]:
    """The ``Status`` Success body kube returns for a delete."""
    meta = obj.get("metadata") or {}
    details: dict[str, Any] = {"name": meta.get("name", ""), "kind": scope.resource.resource}
    if scope.resource.group:
        details["group"] = scope.resource.group
    if meta.get("uid"):
        details["uid"] = meta["uid"]
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}


def _unknown_fields(scope: RequestScope, obj: Mapping[str, Any] | None) -> list[str] | None:
    """The unknown-field paths of a built-in kind's decoded ``obj`` (kapi.schema, document order); None for custom
    resources (their schema is the admission service's) or when there is no object or schema."""
    r = scope.resource
    if obj is None or not REGISTRY.is_static(r) or not schema.has_schema(r.group, r.version, r.kind):
        return None
    return schema.validate(copy.deepcopy(dict(obj)), r.group, r.version, r.kind).unknown


def check_duplicates(scope: RequestScope, body: bytes, obj: Mapping[str, Any] | None = None) -> None:
    """Apply fieldValidation to keys a JSON or YAML body repeats: Strict -> 400, Warn (default) -> warnings, Ignore
    -> none. JSON: ``duplicate field "data.a"``; YAML: go-yaml's ``line 5: key "a" already set in map`` lines after
    ``yaml: unmarshal errors:`` (one warning each).

    ``obj`` (the decoded body) lets a built-in kind's unknown fields count as kube's typed decoder sees them: a
    repeated unknown key, or one under an unknown field, is no duplicate, and the Strict 400 lists the unknown
    and duplicate fields together in the decoder's order (``strict decoding error: unknown field "spec.x",
    duplicate field "metadata.labels.a"``; YAML: the ``yaml:`` error, then the unknown fields), as
    k8s.io/apimachinery's strictDecodingError. Without duplicates the unknown fields are left to admission
    (kapi.schema.apply_field_validation); under Warn they are its warnings, after these.
    """
    directive = scope.field_validation() or "Warn"
    if directive == "Ignore":
        return
    duplicates = negotiation.duplicate_fields(body, scope.content_type)
    lines = negotiation.yaml_duplicate_keys(body, scope.content_type)
    if not duplicates and not lines:
        return
    unknown = _unknown_fields(scope, obj) if directive == "Strict" or duplicates else None
    if unknown is not None and duplicates:
        errors_found = negotiation.strict_field_errors(body, scope.content_type, unknown)
        messages = [m for m in errors_found if m.startswith("duplicate field ")]
        if not messages:
            return  # only unknown keys repeat: admission reports the unknown fields
    else:
        messages = [f'duplicate field "{path}"' for path in duplicates]
        errors_found = messages
    if directive == "Strict":
        kind, version = scope.resource.kind, scope.resource.version
        if messages:
            detail = ", ".join(errors_found)
        else:
            detail = "yaml: unmarshal errors:\n  " + "\n  ".join(lines) + "".join(
                f", unknown field {gofmt.go_quote(path)}" for path in unknown or ())
        raise errors.bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: strict decoding '
                                 "error: " + detail)
    scope.warnings.extend(messages or lines)
