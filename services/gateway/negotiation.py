"""Content negotiation: decode request bodies and choose the response form.

Requests may be JSON, YAML or Kubernetes protobuf (``Content-Type``);
responses are JSON, YAML, Kubernetes protobuf (``Accept:
application/vnd.kubernetes.protobuf``, for built-in kinds with a message in
kapi.k8sproto's schema: kube serves protobuf for every built-in kind and not
for custom resources), a server-side ``Table`` (``Accept:
application/json;as=Table;v=v1;g=meta.k8s.io``, as kubectl asks for; meta.k8s.io v1 or v1beta1, JSON or
YAML) or PartialObjectMetadata(List). Source: "API concepts: Receiving resources as Tables", "API concepts:
Protobuf encoding", k8s.io/apiserver pkg/endpoints/handlers/negotiation and handlers/response.go
(transformObject, optionsForTransform).
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import yaml

from kapi import errors, gofmt, goyaml, jsonutil, k8sproto, limits, safedecode

JSON = "application/json"
YAML = "application/yaml"
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
PATCH_TYPES = (MERGE_PATCH, JSON_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH)

PROTOBUF = k8sproto.MEDIA_TYPE

# Response media types kapi can encode, as a 406 names them: protobuf only for a kind that has a message
# (kube's legacy codecs list JSON, YAML, protobuf; a custom resource's serializer JSON and YAML).
PRODUCES = (JSON, YAML)
PRODUCES_PROTOBUF = (JSON, YAML, PROTOBUF)


@dataclass(frozen=True)
class MediaType:
    """One Accept entry: type/subtype, parameters (``as``, ``v``, ``g``, ``stream``...) and its ``q`` weight."""

    mime: str
    params: tuple[tuple[str, str], ...] = ()
    q: float = 1.0

    def param(self, name: str) -> str:
        """A parameter's value, or ""."""
        return dict(self.params).get(name, "")

    def has(self, name: str) -> bool:
        """Whether the entry names parameter ``name`` (with any value, even an empty one)."""
        return any(key == name for key, _ in self.params)


@dataclass(frozen=True)
class Output:
    """The negotiated response: ``mime`` (JSON, YAML or PROTOBUF), ``table`` (serve a meta.k8s.io Table) or
    ``partial_metadata`` (as=PartialObjectMetadata(List); ``partial_list`` for the List), ``version`` (the
    meta.k8s.io version asked for: v1 or v1beta1) and ``produces`` (the media types a 406 for this resource
    names)."""

    mime: str = JSON
    table: bool = False
    version: str = "v1"
    partial_metadata: bool = False  # as=PartialObjectMetadata(List)
    produces: tuple[str, ...] = PRODUCES
    partial_list: bool = False  # as=PartialObjectMetadataList (partial_metadata is True too)

    @property
    def table_version(self) -> str:
        """The Table's meta.k8s.io version (v1 or v1beta1)."""
        return self.version

    @property
    def meta_api_version(self) -> str:
        """The apiVersion of a Table or PartialObjectMetadata(List) body: ``meta.k8s.io/<version>``."""
        return f"meta.k8s.io/{self.version}"


def parse_accept(header: str) -> list[MediaType]:
    """Split an Accept header into media types in the order given (``q`` kept as a parameter)."""
    out: list[MediaType] = []
    for entry in header.split(","):
        pieces = [p.strip() for p in entry.split(";") if p.strip()]
        if not pieces:
            continue
        params = []
        for p in pieces[1:]:
            key, _, value = p.partition("=")
            params.append((key.strip().lower(), value.strip().strip('"')))
        out.append(MediaType(pieces[0].lower(), tuple(params)))
    return out


def _go_float(text: str) -> float:
    """strconv.ParseFloat's value, 0 where Go's parse fails (goautoneg ignores the error)."""
    if "_" in text or text != text.strip():  # Python's float takes digit separators and spaces; Go's does not
        return 0.0
    try:
        return float(text)
    except ValueError:
        return 0.0


def _go_float32(text: str) -> float:
    """strconv.ParseFloat(text, 32) as goautoneg keeps it: the float32 nearest the value, ±Inf beyond float32's
    range (Go returns them with its range error), 0 where the syntax is refused."""
    value = _go_float(text)
    try:
        return float(struct.unpack("f", struct.pack("f", value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def _split(text: str, sep: str) -> tuple[str, str]:
    """goautoneg's nextSplitElement: the text before the first ``sep`` and the rest after it ("" when none)."""
    head, _, rest = text.partition(sep)
    return head, rest


def clauses(header: str) -> list[MediaType]:
    """The Accept header's clauses as goautoneg's ParseAccept makes them (munnerz/goautoneg, which kube's
    NegotiateMediaTypeOptions uses): comma-separated entries trimmed of spaces (only spaces); the media range
    ``type/subtype`` compared as written (no case folding: ``Application/JSON`` matches no serializer), ``*``
    alone meaning ``*/*``, an entry without a subtype or with a second ``/`` dropped; parameters split at
    ``;`` and ``=``, one without a value (``as=``) or with a second ``=`` dropped, names and values trimmed of
    spaces and kept as written (quotes too); ``q`` (its text untrimmed, a float32, 0 when it does not parse)
    taken out of the parameters (default 1). Then sorted with goautoneg's comparison (higher q first; a concrete
    type, then subtype, before a wildcard) by an insertion sort, as Go's sort.Sort does for the short slices
    Accept headers are."""
    out: list[MediaType] = []
    remaining = header
    while remaining:
        part, remaining = _split(remaining, ",")
        part = part.strip(" ")
        media_range, params_text = _split(part, ";")
        kind, rest = _split(media_range, "/")
        kind = kind.strip(" ")
        if not rest:
            if kind != "*":
                continue
            subtype = "*"
        else:
            subtype, extra = _split(rest, "/")
            if extra:
                continue
            subtype = subtype.strip(" ")
        q = 1.0
        params: list[tuple[str, str]] = []
        while params_text:
            param, params_text = _split(params_text, ";")
            key, value = _split(param, "=")
            if not value:
                continue
            value, extra = _split(value, "=")
            if extra:
                continue
            key = key.strip(" ")
            if key == "q":
                q = _go_float32(value)
            else:
                params.append((key, value.strip(" ")))
        out.append(MediaType(f"{kind}/{subtype}", tuple(params), q))

    def less(a: MediaType, b: MediaType) -> bool:
        a_type, _, a_sub = a.mime.partition("/")
        b_type, _, b_sub = b.mime.partition("/")
        return a.q > b.q or (a_type != "*" and b_type == "*") or (a_sub != "*" and b_sub == "*")

    for i in range(1, len(out)):
        j = i
        while j > 0 and less(out[j], out[j - 1]):
            out[j], out[j - 1] = out[j - 1], out[j]
            j -= 1
    return out


# The serializers of a resource's endpoint, in kube's order (SupportedMediaTypes); YAML has no stream serializer.
_SERIALIZERS = (JSON, YAML, PROTOBUF)


def _specificity(clause: MediaType, mime: str) -> int:
    """2 for an exact match of ``mime``, 1 for type/*, 0 for */*, -1 for none (kube's clauseSpecificity)."""
    c_type, _, c_sub = clause.mime.partition("/")
    m_type, _, m_sub = mime.partition("/")
    if c_type == m_type and c_sub == m_sub:
        return 2
    if c_type == m_type and c_sub == "*":
        return 1
    if c_type == "*" and c_sub == "*":
        return 0
    return -1


def _choose(accept: str, conversions: bool, allow_table: bool, protobuf: bool) -> Output | None:
    """kube's NegotiateMediaTypeOptions over this endpoint's serializers, or None (nothing acceptable)."""
    produces = PRODUCES_PROTOBUF if protobuf else PRODUCES
    if not accept.strip():
        return Output(produces=produces)
    parsed = clauses(accept)
    rejected = set()
    for mime in _SERIALIZERS:  # a serializer whose most specific clause has q <= 0 is refused (RFC 9110)
        best = -1
        for clause in parsed:
            spec = _specificity(clause, mime)
            if spec > best:
                best = spec
                if clause.q <= 0:
                    rejected.add(mime)
                else:
                    rejected.discard(mime)
    for clause in parsed:
        if clause.q <= 0:
            continue
        for mime in _SERIALIZERS:
            if mime in rejected or _specificity(clause, mime) < 0:
                continue
            out = _options(clause, mime, conversions, allow_table, protobuf, produces)
            if out is not None:
                return out
    return None


def _options(clause: MediaType, mime: str, conversions: bool, allow_table: bool, protobuf: bool,
             produces: tuple[str, ...]) -> Output | None:
    """kube's acceptMediaTypeOptions and the request scope's AllowsMediaTypeTransform for one clause and
    serializer: ``stream`` must be ``watch`` on a serializer that streams, ``sv`` the meta group's version (v1);
    ``as``/``g``/``v`` (any of them) ask for a conversion, allowed only to meta.k8s.io v1 or v1beta1 Table (JSON or
    YAML) or PartialObjectMetadata(List) (any serializer; protobuf: v1 only, the version kapi's schema has)."""
    stream, sv = clause.param("stream"), clause.param("sv")
    if stream and (mime == YAML or stream != "watch"):
        return None
    if sv and sv != "v1":
        return None
    if not any(clause.has(key) for key in ("as", "g", "v")):
        if mime == PROTOBUF and not protobuf:
            return None
        return Output(mime, produces=produces)
    if not conversions:
        return None
    kind, group, version = clause.param("as"), clause.param("g"), clause.param("v")
    if group != "meta.k8s.io" or version not in ("v1", "v1beta1"):
        return None
    if kind == "Table":
        if allow_table and mime in (JSON, YAML):
            return Output(mime, table=True, version=version, produces=produces)
        return None
    if kind in ("PartialObjectMetadata", "PartialObjectMetadataList"):
        if mime == PROTOBUF and version != "v1":
            return None
        return Output(mime, partial_metadata=True, version=version, produces=produces,
                      partial_list=kind == "PartialObjectMetadataList")
    return None


def negotiate(accept: str, allow_table: bool = True, protobuf: bool = False) -> Output:
    """Choose the response form for a resource request as kube-apiserver's NegotiateOutputMediaType does.

    Clauses in goautoneg's order (:func:`clauses`: by ``q``, concrete before wildcard; ``q=0`` refuses a
    media type), each tried against JSON, YAML and protobuf in turn. ``protobuf``: the resource's kind has a
    protobuf message (a built-in kind; routes.py decides), so ``application/vnd.kubernetes.protobuf`` is
    servable without a conversion. Conversions (``as``/``g``/``v``): a meta.k8s.io v1 or v1beta1 Table, in
    JSON or YAML; PartialObjectMetadata(List) in any form, for every resource (the metadata client's Accept,
    kube PR #77817). An entry naming an unknown ``as``, another group or version, or ``g``/``v`` without
    ``as`` is skipped, so a later entry (``application/json``) can still serve. Raises 406 NotAcceptable if
    no entry is servable, naming the media types kapi can produce for it (:data:`PRODUCES` /
    :data:`PRODUCES_PROTOBUF`; kube's NewNotAcceptableError words). An empty Accept gives JSON.
    """
    out = _choose_cached(accept, True, allow_table, protobuf) if len(accept) <= _CACHED_ACCEPT else \
        _choose(accept, True, allow_table, protobuf)
    if out is None:
        raise errors.not_acceptable("only the following media types are accepted: "
                                    + ", ".join(PRODUCES_PROTOBUF if protobuf else PRODUCES))
    return out


# Clients send a handful of Accept headers over and over (kubectl's, client-go's, the Python client's): the
# choice, a pure function of them, is kept for the short ones (an Output is immutable) so each request pays a
# dict lookup instead of parsing the clauses again.
_CACHED_ACCEPT = 512


@functools.lru_cache(maxsize=256)
def _choose_cached(accept: str, conversions: bool, allow_table: bool, protobuf: bool) -> Output | None:
    return _choose(accept, conversions, allow_table, protobuf)


def check_partial(output: Output, is_list: bool, go_type: str) -> None:
    """406 NotAcceptable where the PartialObjectMetadata form asked for does not fit the answer, as kube's
    doTransformObject (handlers/response.go: asPartialObjectMetadata, asPartialObjectMetadataList) refuses it
    after the object or list was read: ``as=PartialObjectMetadata`` on a list is ``you requested
    PartialObjectMetadata, but the requested object is a list (<go_type>)``, ``as=PartialObjectMetadataList`` on
    one object ``you requested PartialObjectMetadataList, but the requested object is not a list (<go_type>)``.
    ``go_type`` is Go's ``%T`` of the object kube's handler holds (``*core.ConfigMapList``,
    ``*unstructured.Unstructured``). Nothing for other forms."""
    if output.partial_metadata and not output.partial_list and is_list:
        raise errors.not_acceptable("you requested PartialObjectMetadata, but the requested object is a list "
                                    f"({go_type})")
    if output.partial_list and not is_list:
        raise errors.not_acceptable("you requested PartialObjectMetadataList, but the requested object is not a "
                                    f"list ({go_type})")


def check_watch(output: Output) -> None:
    """406 for a watch whose negotiated form has no streaming serializer (YAML), as kube's
    NegotiateOutputMediaTypeStream: the message names the stream media types (``application/json;stream=watch``,
    and protobuf's where the kind has it)."""
    if output.mime == YAML:
        raise errors.not_acceptable("only the following media types are accepted: "
                                    + ", ".join(f"{m};stream=watch" for m in output.produces if m != YAML))


INCLUDE_OBJECT = ("Metadata", "None", "Object")


def include_object(value: str) -> str:
    """The Table's ``includeObject`` (TableOptions): None, Metadata (also for "") or Object; anything else is
    kube's 400 from optionsForTransform (ValidateTableOptions' field.Invalid)."""
    if value and value not in INCLUDE_OBJECT:
        raise errors.bad_request(f"Unable to convert to Table as requested: includeObject: Invalid value: "
                                 f"{gofmt.go_quote(value)}: must be 'Metadata', 'Object', 'None', or empty")
    return value or "Metadata"


def prefers_protobuf(accept: str) -> bool:
    """Whether an error's Status is protobuf (:func:`error_output`)."""
    out = error_output(accept)
    return out is not None and out.mime == PROTOBUF


# The Accept values clients send with nearly every request, whose error form is JSON without parsing them.
_ERROR_JSON_ACCEPT = frozenset(("", "*/*", JSON, f"{JSON}, */*", f"{JSON},*/*"))
_ERROR_JSON = Output(produces=PRODUCES_PROTOBUF)


def error_output(accept: str) -> Output | None:
    """The form of an error's Status: kube's ErrorNegotiated negotiates with DefaultEndpointRestrictions (no
    conversions: an entry with ``as``/``g``/``v`` is skipped; ``stream=watch`` allowed) over JSON, YAML and
    protobuf, for every resource (:func:`clauses`: case-sensitive, by ``q``). None when no entry is acceptable
    (``Accept: text/html``, ``Application/JSON``, a Table-only Accept): WriteObjectNegotiated then writes the
    Status with WriteRawJSON rather than hide it behind a 406 (:func:`kapi.jsonutil.dumps_go_indent`; kube's
    responsewriters/writers.go)."""
    if accept in _ERROR_JSON_ACCEPT:
        return _ERROR_JSON
    if len(accept) <= _CACHED_ACCEPT:
        return _choose_cached(accept, False, False, True)
    return _choose(accept, False, False, True)


_PRETTY_AGENTS = ("curl", "Wget", "Mozilla/5.0")
_GO_TRUE = frozenset(("1", "t", "T", "TRUE", "true", "True"))  # strconv.ParseBool's true; anything else false


def pretty(raw_query: str, query: Any, user_agent: str) -> bool:
    """Whether a JSON answer is pretty-printed, as kube's isPrettyPrint (endpoints/handlers/negotiation): where the
    raw query string contains ``pretty`` and its first ``pretty`` value is non-empty, that value parsed by
    strconv.ParseBool (``1``, ``t``, ``T``, ``TRUE``, ``true``, ``True``; an unparsable one is false); else a
    ``User-Agent`` starting ``curl``, ``Wget`` or ``Mozilla/5.0`` (browsers and command-line tools). ``query``: the
    decoded parameters (a MultiDict). The pretty form is :func:`kapi.jsonutil.dumps_go_indent`."""
    if "pretty" in raw_query:
        value = query.get("pretty", "")
        if value:
            return value in _GO_TRUE
    return user_agent.startswith(_PRETTY_AGENTS)


def _yaml_error(exc: yaml.YAMLError) -> str:
    """go-yaml's one-line form (``yaml: line 2: mapping values are not allowed in this context``)."""
    mark = getattr(exc, "problem_mark", None)
    problem = (getattr(exc, "problem", None) or "invalid YAML").replace(" here", " in this context")
    return f"yaml: line {mark.line + 1}: {problem}" if mark is not None else f"yaml: {problem}"


def _json_syntax_error(body: bytes, exc: ValueError, prefix: str) -> NoReturn:
    """Raise kube's 400 for a JSON body the decoder refused (Go's encoding/json words)."""
    if "depth limit" in str(exc):  # orjson stops at 1024 levels; Go's words for any char that goes deeper
        at = int(getattr(exc, "pos", 0) or 0)
        char = "{" if body.rfind(b"{", 0, at + 1) > body.rfind(b"[", 0, at + 1) else "["
        raise errors.bad_request(f"{prefix}invalid character '{char}' exceeded max depth") from None
    raise errors.bad_request(prefix + jsonutil.syntax_error(body, exc)) from None


# The request body media types of a resource's serializer (kube's SupportedMediaTypes: legacy codecs and a
# custom resource's alike), in its order, as a 415 names them.
CONSUMES = (JSON, YAML, PROTOBUF)
_TSPECIALS = frozenset('()<>@,;:\\"/[]?=')


def _token(text: str) -> tuple[str, str]:
    """Go mime's consumeToken: the leading run of token characters (printable ASCII, no space, no tspecial)."""
    end = 0
    while end < len(text) and 0x20 < ord(text[end]) < 0x7F and text[end] not in _TSPECIALS:
        end += 1
    return text[:end], text[end:]


def _value(text: str) -> tuple[str, str]:
    """Go mime's consumeValue: a token, or a quoted-string (backslash escapes; "" and ``text`` when unclosed)."""
    if not text.startswith('"'):
        return _token(text)
    out: list[str] = []
    i = 1
    while i < len(text):
        char = text[i]
        if char == '"':
            return "".join(out), text[i + 1:]
        if char == "\\" and i + 1 < len(text) and text[i + 1] in _TSPECIALS:
            i += 1
            char = text[i]
        elif char in "\r\n":
            return "", text
        out.append(char)
        i += 1
    return "", text


def parse_media_type(header: str) -> str | None:
    """Go's mime.ParseMediaType as kube's NegotiateInputSerializerForMediaType uses it: the media type before the
    first ``;``, trimmed and lower-cased (``Application/JSON`` is ``application/json``), or None where Go
    returns an error: no type token, no token after ``/``, anything after the subtype, a parameter that is no
    ``; token=value`` (value a token or a quoted-string; a trailing ``;`` is allowed), or a parameter name given
    twice with different values (names fold case)."""
    base = header.split(";", 1)[0]
    mime = base.strip().lower()
    kind, rest = _token(mime)
    if not kind:
        return None
    if rest:
        if not rest.startswith("/"):
            return None
        subtype, rest = _token(rest[1:])
        if not subtype or rest:
            return None
    params, seen = header[len(base):], dict[str, str]()
    while params.lstrip():
        params = params.lstrip()
        param = _media_param(params)
        if param is None:
            return mime if params.strip() == ";" else None
        key, value, params = param
        if seen.setdefault(key, value) != value:
            return None
    return mime


def _media_param(text: str) -> tuple[str, str, str] | None:
    """Go mime's consumeMediaParam: ``; name = value`` (spaces allowed around each piece) as (the lower-cased
    name, the value, the rest), or None where ``text`` starts with no such parameter."""
    if not text.startswith(";"):
        return None
    key, rest = _token(text[1:].lstrip())
    rest = rest.lstrip()
    if not key or not rest.startswith("="):
        return None
    rest = rest[1:].lstrip()
    value, left = _value(rest)
    if not value and left == rest:
        return None
    return key.lower(), value, left


def negotiate_input(content_type: str) -> str:
    """The serializer of a create or update body (also delete options, evictions, token requests), as kube's
    NegotiateInputSerializerForMediaType chooses it: an empty Content-Type is JSON (the first serializer); else
    :func:`parse_media_type` must give exactly ``application/json``, ``application/yaml`` or
    ``application/vnd.kubernetes.protobuf`` (``text/yaml``, ``application/x-yaml`` and the patch types are no
    serializer's); anything else is 415 UnsupportedMediaType ``the body of the request was in an unknown format
    - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf``."""
    if not content_type:
        return JSON
    mime = parse_media_type(content_type)
    if mime not in CONSUMES:
        raise errors.StatusError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                                 "accepted media types include: " + ", ".join(CONSUMES))
    return mime


def decode_body(body: bytes, content_type: str) -> Any:
    """Decode a JSON, YAML or Kubernetes protobuf (kapi.k8sproto) request body into Python data.

    ``content_type``: the request's Content-Type, or a patch type the patch handler accepted. Raises 415 for
    a media type no serializer has (:func:`negotiate_input`, before 413) and 400 BadRequest for malformed data
    (JSON syntax errors in Go's encoding/json words, as kube-apiserver reports them), including YAML alias
    bombs and documents nested deeper than ``kapi.safedecode.MAX_DEPTH`` (see :mod:`kapi.safedecode`).
    """
    mime = content_type.split(";")[0].strip().lower()
    if mime not in PATCH_TYPES:
        mime = negotiate_input(content_type)
    if len(body) > limits.MAX_BODY_BYTES:
        raise errors.too_large()
    if mime in (JSON, MERGE_PATCH, JSON_PATCH, STRATEGIC_MERGE_PATCH):
        prefix = "couldn't get version/kind; json parse error: " if mime == JSON else "error decoding patch: "
        try:
            value = jsonutil.loads(body)
        except ValueError as first:  # kube's words: the body decoder, or the patcher's strict decode
            try:
                value = jsonutil.loads_lenient(body, first)  # bad UTF-8 is U+FFFD in Go, not an error
            except ValueError as exc:
                _json_syntax_error(body, exc, prefix)
        too_deep = safedecode.json_depth_error(body, value)
        if too_deep:
            raise errors.bad_request(prefix + too_deep)
        if jsonutil.LONG_DIGITS.search(body):  # a number beyond int64 is a float, as in kube's unstructured data
            value = jsonutil.int64_floats(value)
        return value
    if mime in (YAML, APPLY_PATCH):
        try:
            return safedecode.load_yaml(body)
        except yaml.YAMLError as exc:
            text = str(exc) if isinstance(exc, safedecode.UnsupportedValueError) else _yaml_error(exc)
            raise errors.bad_request(f"error converting YAML to JSON: {text}") from None
    if mime == k8sproto.MEDIA_TYPE:
        return k8sproto.decode(body)
    raise errors.unsupported_media_type(mime)  # not reached: negotiate_input refused it


def encode(obj: Any, output: Output) -> tuple[bytes, str]:
    """Encode ``obj`` in the negotiated form; returns (body bytes, Content-Type).

    PROTOBUF: kube's envelope (:func:`kapi.k8sproto.encode`); an object the schema cannot encode (a kind
    without a message, such as autoscaling/v1 Scale, or a value of the wrong type) is answered as JSON. JSON is
    compact and HTML-escaped as Go's encoding/json writes it (:func:`kapi.jsonutil.go_escape`), without the
    trailing newline (the caller adds it).
    """
    if output.mime == PROTOBUF and isinstance(obj, dict):
        try:
            return k8sproto.encode(obj), PROTOBUF
        except k8sproto.EncodeError:
            return jsonutil.go_escape(jsonutil.dumps(obj)), JSON
    if output.mime == YAML:
        return goyaml.dumps(obj), YAML
    return jsonutil.go_escape(jsonutil.dumps(obj)), JSON


def duplicate_fields(body: bytes, content_type: str) -> list[str]:
    """Paths of keys a JSON object body repeats (``data.a``), for strict field validation; [] for other bodies.

    kube-apiserver's strict JSON decoder reports them as ``duplicate field "<path>"``
    (fieldValidation Strict: 400; Warn: a warning).
    """
    return [path for kind, path in _strict_findings(body, content_type, ()) if kind == "duplicate"]


def strict_field_errors(body: bytes, content_type: str, unknown: list[str]) -> list[str]:
    """kube's strict decoding errors of a JSON body decoded into a typed object, in the order its decoder meets
    them, each message once (sigs.k8s.io/json ``saveStrictError`` dedupes): ``unknown field "<path>"`` for the
    paths in ``unknown`` (the kind has no such field; the decoder skips its value, so nothing under it is
    reported and a repeated unknown key is no duplicate) and ``duplicate field "<path>"`` for a known field or
    map key an object repeats. Unknown paths not met in the body (none expected) follow. [] for other bodies.
    """
    return [f"{kind} field {gofmt.go_quote(path)}" for kind, path in _strict_findings(body, content_type, unknown)]


def _strict_findings(body: bytes, content_type: str, unknown: Sequence[str]) -> list[tuple[str, str]]:
    """("unknown" | "duplicate", path) in the decoder's order, each once; [] for bodies that are not JSON or do
    not parse (the main decoder reports those). See :func:`strict_field_errors`."""
    import json

    if (content_type.split(";")[0].strip().lower() or JSON) != JSON:
        return []
    unknown_paths = set(unknown)
    out: list[tuple[str, str]] = []

    def emit(finding: tuple[str, str]) -> None:
        if finding not in out:
            out.append(finding)

    def walk(value: Any, path: str) -> None:
        if isinstance(value, _Pairs):
            seen: set[str] = set()
            for key, item in value:
                child = f"{path}.{key}" if path else key
                if child in unknown_paths:
                    emit(("unknown", child))
                    continue
                if key in seen:
                    emit(("duplicate", child))
                seen.add(key)
                walk(item, child)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                walk(item, f"{path}[{i}]")

    try:
        walk(json.loads(body, object_pairs_hook=_Pairs), "")
    except (ValueError, RecursionError):
        return []
    for path in unknown:
        emit(("unknown", path))
    return out


def yaml_duplicate_keys(body: bytes, content_type: str) -> list[str]:
    """go-yaml's strict-mode errors for keys a YAML body's mappings repeat: ``line 5: key "a" already set in map``
    (1-based line of the repeated key), in document order; [] for other bodies or YAML the decoder refuses.

    kube-apiserver decodes YAML bodies strictly under fieldValidation Strict (400 ``strict decoding error: yaml:
    unmarshal errors:`` and these lines) and Warn (one warning each), as sigs.k8s.io/yaml's UnmarshalStrict.
    """
    if (content_type.split(";")[0].strip().lower() or JSON) != YAML:
        return []
    try:
        root = yaml.compose(body, Loader=safedecode.KubeLoader)  # noqa: S506 - a SafeLoader; nodes only
    except (yaml.YAMLError, RecursionError):
        return []  # the main decoder reports malformed bodies
    found: list[str] = []
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in seen:
                        found.append(f'line {key.start_mark.line + 1}: key "{key.value}" already set in map')
                    seen.add(key.value)
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return sorted(found, key=lambda m: int(m.split(":")[0].split()[1]))


class _Pairs(list):  # type: ignore[type-arg]
    """A JSON object as its (key, value) pairs in order, duplicates kept."""


# --- go-restful's route selection (kube-apiserver's router for built-in resources) ---------------------------
# kube's API installer (endpoints/installer.go) declares each route of a built-in resource with Produces(...) and,
# for PATCH, Consumes(...); go-restful's RouterJSR311.detectRoute (jsr311.go, route.go matchesContentType and
# matchesAccept) refuses a request no route of its path and method matches before kube's handlers run. Custom
# resources are served by the apiextensions handler without go-restful, so none of this applies to them.

# The legacy codecs' media types (negotiation.MediaTypesForSerializer: mediaTypes, streamMediaTypes), in order.
ROUTE_MEDIA_TYPES = (JSON, YAML, PROTOBUF)
ROUTE_STREAM_MEDIA_TYPES = (f"{JSON};stream=watch", f"{PROTOBUF};stream=watch")
# The Produces of a list or watch route (LIST, WATCH, WATCHLIST), and of pods/log (LogREST's ProducesMIMETypes,
# rest.StorageMetadata, in front of the media types).
_LIST_PRODUCES = ROUTE_MEDIA_TYPES + ROUTE_STREAM_MEDIA_TYPES
_LOG_PRODUCES = ("text/plain", *ROUTE_MEDIA_TYPES)
# Connecter routes (exec, attach, portforward, proxy) Produce and Consume */*: go-restful lets any request through.
_CONNECT_SUBRESOURCES = frozenset(("exec", "attach", "portforward", "proxy"))
# Accept values that pass every route without parsing (absent: go-restful's */*; what clients send).
_ROUTE_ACCEPTED = frozenset(("", "*/*", JSON, PROTOBUF, f"{PROTOBUF}, {JSON}", f"{PROTOBUF},{JSON}", YAML))


def route_produces(group: str, resource: str, subresource: str, verb: str) -> tuple[str, ...] | None:
    """The Produces of kube's route for a built-in resource's ``verb`` (a RequestInfo verb), or None for a connecter
    route (``*/*``): the legacy codecs' media types (JSON, YAML, protobuf); list and watch routes add the stream
    media types (``application/json;stream=watch``, ``application/vnd.kubernetes.protobuf;stream=watch``); pods/log
    puts its storage's ``text/plain`` first (installer.go: ``storageMeta.ProducesMIMETypes(verb)`` then
    ``mediaTypes`` or ``allMediaTypes``). A module constant each: no allocation per request."""
    if subresource in _CONNECT_SUBRESOURCES:
        return None
    if verb in ("list", "watch"):
        return _LIST_PRODUCES
    if subresource == "log" and resource == "pods" and not group:
        return _LOG_PRODUCES
    return ROUTE_MEDIA_TYPES


@functools.lru_cache(maxsize=256)
def _route_ranges(header: str) -> frozenset[str]:
    """go-restful's view of a header (matchesAccept, matchesContentType): its comma-separated entries, each cut at
    its first ``;`` and trimmed of spaces only, kept as written (no case folding)."""
    return frozenset(entry.split(";", 1)[0].strip(" ") for entry in header.split(","))


def _restful_error(code: int, message: str) -> errors.StatusError:
    """go-restful's ServiceError as kube's serviceErrorHandler writes it: apierrors.NewGenericServerResponse keeps
    the server message for 406 and 415, reason NotAcceptable / UnsupportedMediaType, an empty ``details: {}``."""
    reason = "NotAcceptable" if code == 406 else "UnsupportedMediaType"
    return errors.StatusError(code, reason, message, empty_details=True)


def check_route_accept(accept: str, produces: tuple[str, ...] | None) -> None:
    """406 where go-restful's matchesAccept finds no entry of ``accept`` (the request's first Accept header) in the
    route's ``produces`` (:func:`route_produces`): ``406: Not Acceptable\\n\\nAvailable representations: <produces
    joined by ", ">``. An absent Accept is ``*/*``; an entry matches when, cut at its first ``;`` and trimmed of
    spaces, it is ``*/*`` or exactly (case-sensitive) one of the route's media types, so
    ``application/json;as=Table;g=meta.k8s.io;v=v1`` passes and ``application/*``, ``Application/JSON`` and
    ``text/html`` do not. ``produces`` None (a connecter route) lets everything through. The common Accept values
    cost one set lookup, the others one cached parse (jsr311.go detectRoute, route.go matchesAccept)."""
    if produces is None or accept in _ROUTE_ACCEPTED:
        return
    ranges = _route_ranges(accept)
    if "*/*" in ranges or not ranges.isdisjoint(produces):
        return
    raise _restful_error(406, "406: Not Acceptable\n\nAvailable representations: " + ", ".join(produces))


def check_route_content_type(content_type: str, consumes: Sequence[str]) -> None:
    """415 ``415: Unsupported Media Type`` where go-restful's matchesContentType finds no entry of ``content_type``
    in the route's Consumes (kube's PATCH routes consume their patch types only; every other route ``*/*``): each
    comma-separated entry cut at its first ``;``, trimmed of spaces, compared as written; an absent Content-Type on a
    PATCH is ``application/octet-stream`` (only GET, HEAD, OPTIONS, DELETE and TRACE may omit it). Checked after the
    method (405) and before the Accept (:func:`check_route_accept`), as detectRoute does."""
    if _route_ranges(content_type or "application/octet-stream").isdisjoint(consumes):
        raise _restful_error(415, "415: Unsupported Media Type")
