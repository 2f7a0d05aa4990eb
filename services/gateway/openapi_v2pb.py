"""``/openapi/v2`` as protobuf: the Swagger 2.0 document encoded as gnostic's ``openapi.v2.Document``.

kubectl fetches ``/openapi/v2`` with ``Accept:
application/com.github.proto-openapi.spec.v2@v1.0+protobuf`` whenever it
validates on the client side (``kubectl create|apply -f`` of a ``kind: List``,
or any object whose kind the server's OpenAPI does not mark as supporting
``fieldValidation``) and for ``kubectl explain --output plaintext-openapiv2``.
kube-apiserver answers with the same document as its JSON, converted by
gnostic (``openapi_v2.ParseDocument``) and marshalled
(k8s.io/kube-openapi ``pkg/handler``), with ``Content-Type:
application/com.github.proto-openapi.spec.v2.v1.0+protobuf`` for both the
deprecated ``@v1.0`` and the current ``.v1.0`` media types.

The conversion follows gnostic's rules: JSON objects keyed by free-form names
become ``repeated Named<T>`` in document order; ``x-`` keys become vendor
extensions (``NamedAny`` whose ``Any.yaml`` holds the value as YAML text);
values with several possible shapes (``type``, ``items``,
``additionalProperties``, parameters by ``in``, responses, security schemes)
pick their oneof branch from the JSON. Keys Swagger 2.0 does not define are
dropped (gnostic would refuse them; kube's published documents have none).
Messages: protos/openapi/v2/openapiv2.proto.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from kapi import jsonutil
from kapi_proto.openapi.v2 import openapiv2_pb2 as pb

# The media type kube-apiserver answers with (k8s.io/kube-openapi pkg/handler subTypeProtobuf), and the ones it accepts.
CONTENT_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
_PROTOBUF_TYPES = ("com.github.proto-openapi.spec.v2@v1.0+protobuf", "com.github.proto-openapi.spec.v2.v1.0+protobuf")

# --- YAML text of extension values (Any.yaml) ---------------------------------------------------------------------

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")
# Words YAML 1.1 (gopkg.in/yaml.v2, which kube-openapi uses to read extensions) resolves to booleans or null.
_RESERVED = frozenset(w for word in ("y", "yes", "n", "no", "true", "false", "on", "off", "null")
                      for w in (word, word.capitalize(), word.upper()))


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        if _PLAIN.fullmatch(value) and value not in _RESERVED:
            return value
        return jsonutil.dumps(value).decode()  # a JSON string is a valid YAML double-quoted scalar
    if value is None:
        return "null"
    return jsonutil.dumps(value).decode()  # true/false, integers, floats


def _emit(value: Any, indent: str, out: list[str]) -> None:
    """Append the block-style lines of a non-empty mapping or sequence, each prefixed by ``indent``."""
    if isinstance(value, dict):
        for key, item in value.items():
            name = _scalar(str(key))
            if isinstance(item, (dict, list)) and item:
                out.append(f"{indent}{name}:")
                _emit(item, indent + "  ", out)
            else:
                out.append(f"{indent}{name}: {_flow(item)}")
        return
    for item in value:
        if isinstance(item, (dict, list)) and item:
            start = len(out)
            _emit(item, indent + "  ", out)
            out[start] = f"{indent}- {out[start][len(indent) + 2:]}"
        else:
            out.append(f"{indent}- {_flow(item)}")


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return _scalar(value)


def yaml_text(value: Any) -> str:
    """``value`` (a JSON value) as block-style YAML text ending in a newline, as gnostic stores it in ``Any.yaml``.

    Strings are plain when unambiguous, else JSON-quoted (valid YAML double-quoted scalars).
    """
    if isinstance(value, (dict, list)) and value:
        lines: list[str] = []
        _emit(value, "", lines)
        return "\n".join(lines) + "\n"
    return _flow(value) + "\n"


# --- JSON -> messages -----------------------------------------------------------------------------------------------

_NAMED_MAPS = frozenset(("Definitions", "Properties", "ParameterDefinitions", "ResponseDefinitions", "Headers",
                         "Examples", "SecurityDefinitions", "Oauth2Scopes", "SecurityRequirement"))
_NON_BODY = {"header": "header_parameter_sub_schema", "formData": "form_data_parameter_sub_schema",
             "query": "query_parameter_sub_schema", "path": "path_parameter_sub_schema"}
_OAUTH2 = {"implicit": "oauth2_implicit_security", "password": "oauth2_password_security",
           "application": "oauth2_application_security", "accessCode": "oauth2_access_code_security"}
_KEYS: dict[str, dict[str, FieldDescriptor]] = {}


def _keys(descriptor: Descriptor) -> dict[str, FieldDescriptor]:
    """JSON key -> field of a message: the field's camelCase name, ``$ref`` for ``_ref``."""
    keys = _KEYS.get(descriptor.full_name)
    if keys is None:
        keys = {("$ref" if f.name == "_ref" else f.json_name): f for f in descriptor.fields
                if f.name != "vendor_extension"}
        _KEYS[descriptor.full_name] = keys
    return keys


def _scalar_value(field: FieldDescriptor, value: Any) -> Any:
    """``value`` coerced to the field's scalar type, or None when the JSON value has another type."""
    kind = field.type
    if kind == FieldDescriptor.TYPE_STRING:
        return value if isinstance(value, str) else None
    if kind == FieldDescriptor.TYPE_BOOL:
        return value if isinstance(value, bool) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if kind == FieldDescriptor.TYPE_DOUBLE:
        return float(value)
    return int(value) if float(value).is_integer() else None


def _set(msg: Message, field: FieldDescriptor, value: Any) -> None:
    """Store the JSON ``value`` in ``msg.<field>`` (scalar, message, or repeated of either)."""
    repeated = field.is_repeated
    if field.message_type is None:
        if repeated:
            items = [v for v in (value if isinstance(value, list) else [value])
                     if _scalar_value(field, v) is not None]
            getattr(msg, field.name).extend(items)
        elif (v := _scalar_value(field, value)) is not None:
            setattr(msg, field.name, v)
        return
    if repeated:
        container = getattr(msg, field.name)
        for item in value if isinstance(value, list) else [value]:
            _convert(container.add(), item)
        return
    sub = getattr(msg, field.name)
    sub.SetInParent()
    _convert(sub, value)


def _extension(msg: Message, key: str, value: Any) -> None:
    entry = msg.vendor_extension.add()  # type: ignore[attr-defined]
    entry.name = key
    entry.value.yaml = yaml_text(value)


def _fill(msg: Message, obj: Any) -> None:
    """The generic case: JSON object keys to fields, ``x-`` keys to vendor extensions, unknown keys dropped."""
    if not isinstance(obj, dict):
        return
    keys = _keys(msg.DESCRIPTOR)
    has_extensions = "vendor_extension" in msg.DESCRIPTOR.fields_by_name
    for key, value in obj.items():
        if key.startswith("x-"):
            if has_extensions:
                _extension(msg, key, value)
        elif (field := keys.get(key)) is not None:
            _set(msg, field, value)


def _named(msg: Any, obj: Any) -> None:
    """A JSON object keyed by names into ``msg.additional_properties`` (repeated Named<T>), in document order."""
    if not isinstance(obj, dict):
        return
    value_field = msg.DESCRIPTOR.fields_by_name["additional_properties"].message_type.fields_by_name["value"]
    container = msg.additional_properties
    for key, value in obj.items():
        entry = container.add()
        entry.name = key
        _set(entry, value_field, value)


def _convert(msg: Message, value: Any) -> None:  # noqa: C901 - one branch per gnostic shape, kept in one table
    """Fill ``msg`` from the JSON ``value`` by the message's gnostic shape."""
    name = msg.DESCRIPTOR.name
    m: Any = msg
    if name == "Any":
        m.yaml = yaml_text(value)
    elif name == "TypeItem" or name == "StringArray":
        m.value.extend(v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str))
    elif name == "ItemsItem":
        for item in value if isinstance(value, list) else [value]:
            _fill(m.schema.add(), item)
    elif name == "AdditionalPropertiesItem":
        if isinstance(value, bool):
            m.boolean = value
        else:
            m.schema.SetInParent()
            _fill(m.schema, value)
    elif name in _NAMED_MAPS:
        _named(m, value)
    elif not isinstance(value, dict):
        return
    elif name == "Paths":
        for key, item in value.items():
            if key.startswith("x-"):
                _extension(m, key, item)
            else:
                entry = m.path.add()
                entry.name = key
                entry.value.SetInParent()
                _fill(entry.value, item)
    elif name == "Responses":
        for key, item in value.items():
            if key.startswith("x-"):
                _extension(m, key, item)
            else:
                entry = m.response_code.add()
                entry.name = key
                _convert(entry.value, item)
    elif name in ("ParametersItem", "ResponseValue"):
        if "$ref" in value:
            _fill(m.json_reference, value)
        else:
            _convert(m.parameter if name == "ParametersItem" else m.response, value)
    elif name == "Parameter":
        if value.get("in") == "body":
            _fill(m.body_parameter, value)
        else:
            _convert(m.non_body_parameter, value)
    elif name == "NonBodyParameter":
        branch = _NON_BODY.get(value.get("in", ""))
        if branch:
            _fill(getattr(m, branch), value)
    elif name == "SchemaItem":
        _fill(m.file_schema if value.get("type") == "file" else m.schema, value)
    elif name == "SecurityDefinitionsItem":
        kind = value.get("type")
        branch = ("basic_authentication_security" if kind == "basic" else "api_key_security" if kind == "apiKey"
                  else _OAUTH2.get(value.get("flow", "")) if kind == "oauth2" else None)
        if branch:
            _fill(getattr(m, branch), value)
    else:
        _fill(msg, value)


def document(swagger: dict[str, Any]) -> pb.Document:
    """The gnostic ``Document`` of a Swagger 2.0 document (parsed JSON); never raises on unexpected shapes."""
    doc = pb.Document()
    _fill(doc, swagger)
    return doc


_V3_ONLY = ("allOf", "oneOf", "anyOf", "not")


def crd_schema_v2(schema: Any) -> Any:
    """A CustomResourceDefinition's ``openAPIV3Schema`` as kube publishes it in ``/openapi/v2`` (a new value).

    As apiextensions-apiserver ``ToStructuralOpenAPIV2``: ``allOf``/``oneOf``/
    ``anyOf``/``not`` are dropped; a ``nullable`` schema loses its type,
    items and properties (and leaves its parent's ``required``);
    ``x-kubernetes-preserve-unknown-fields`` drops items and properties; an
    array left without items loses its type. kubectl's OpenAPI v2 models
    (k8s.io/kube-openapi pkg/util/proto) then accept any value there instead
    of refusing unknown fields or failing on the whole document.
    """
    if not isinstance(schema, dict):
        return schema
    out = {k: v for k, v in schema.items() if k not in _V3_ONLY}
    if out.pop("nullable", False):
        for key in ("type", "items", "properties"):
            out.pop(key, None)
    if out.get("x-kubernetes-preserve-unknown-fields") is True:
        out.pop("items", None)
        out.pop("properties", None)
    if out.get("type") == "array" and not isinstance(out.get("items"), dict):
        out.pop("type")
        out.pop("items", None)
    properties = out.get("properties")
    if isinstance(properties, dict):
        nullable = {k for k, v in properties.items() if isinstance(v, dict) and v.get("nullable") is True}
        if nullable and isinstance(out.get("required"), list):
            out["required"] = [r for r in out["required"] if r not in nullable]
        out["properties"] = {k: crd_schema_v2(v) for k, v in properties.items()}
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), dict):
            out[key] = crd_schema_v2(out[key])
    return out


# --- the cached encodings of the gateway's /openapi/v2 ------------------------------------------------------------

class Encoded:
    """One ``/openapi/v2`` JSON document and its derived forms, computed on first use.

    ``etag`` is kube-apiserver's: the upper-case hex SHA-512 of the JSON, quoted.
    """

    def __init__(self, json_bytes: bytes) -> None:
        self.json = json_bytes
        self.etag = '"' + hashlib.sha512(json_bytes).hexdigest().upper() + '"'
        self._protobuf: bytes | None = None
        self._protobuf_gzip: bytes | None = None

    @property
    def protobuf(self) -> bytes:
        """The serialized ``openapi.v2.Document``."""
        if self._protobuf is None:
            self._protobuf = document(jsonutil.loads(self.json)).SerializeToString()
        return self._protobuf

    @property
    def protobuf_gzip(self) -> bytes:
        """:attr:`protobuf` gzip-compressed (for ``Accept-Encoding: gzip``)."""
        if self._protobuf_gzip is None:
            self._protobuf_gzip = gzip.compress(self.protobuf, compresslevel=6, mtime=0)
        return self._protobuf_gzip


_current: Encoded | None = None


def encoded(json_bytes: bytes) -> Encoded:
    """The cached :class:`Encoded` of ``json_bytes``.

    ``services.gateway.openapi.swagger_v2()`` returns the same bytes object
    until ``set_custom()`` (a CRD change) clears its cache, so an identity
    check is the cache key: a new document drops the old encodings.
    """
    global _current
    if _current is None or _current.json is not json_bytes:
        _current = Encoded(json_bytes)
    return _current


def negotiate(accept: str) -> str | None:
    """The form of ``/openapi/v2`` to serve for an Accept header: ``"json"``, ``"protobuf"``, or None (406).

    As kube-openapi's handler: clauses ordered by q (then specific before
    wildcard), the first clause matching ``application/json`` or one of the
    protobuf media types wins, JSON first for wildcards; an empty Accept is
    ``*/*``.
    """
    clauses: list[tuple[float, int, int, str, str]] = []
    for index, part in enumerate((accept or "*/*").split(",")):
        media, *params = [p.strip() for p in part.split(";")]
        if not media:
            continue
        kind, _, sub = media.lower().partition("/")
        q = 1.0
        for param in params:
            key, _, val = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(val)
                except ValueError:
                    q = 0.0
        if q > 0:
            clauses.append((-q, (kind == "*") + (sub == "*"), index, kind, sub or "*"))
    for _, _, _, kind, sub in sorted(clauses):
        if kind not in ("application", "*"):
            continue
        if sub in ("json", "*"):
            return "json"
        if sub in _PROTOBUF_TYPES:
            return "protobuf"
    return None
