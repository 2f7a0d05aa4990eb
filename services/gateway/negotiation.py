"""Content negotiation: decode request bodies and choose the response form.

Requests may be JSON, YAML or Kubernetes protobuf (``Content-Type``);
responses are JSON, YAML, Kubernetes protobuf (``Accept:
application/vnd.kubernetes.protobuf``, for built-in kinds with a message in
kapi.k8sproto's schema: kube serves protobuf for every built-in kind and not
for custom resources), or a server-side ``Table`` (``Accept:
application/json;as=Table;v=v1;g=meta.k8s.io``, as kubectl asks for; JSON
only). Source: "API concepts: Receiving resources as Tables", "API concepts:
Protobuf encoding" and k8s.io/apiserver pkg/endpoints/handlers/negotiation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from kapi import errors, gofmt, jsonutil, k8sproto, limits, safedecode

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
    """One Accept entry: type/subtype plus parameters (``as``, ``v``, ``g``)."""

    mime: str
    params: tuple[tuple[str, str], ...] = ()

    def param(self, name: str) -> str:
        """A parameter's value, or ""."""
        return dict(self.params).get(name, "")


@dataclass(frozen=True)
class Output:
    """The negotiated response: ``mime`` (JSON, YAML or PROTOBUF) and ``table`` (serve a meta.k8s.io Table)."""

    mime: str = JSON
    table: bool = False
    table_version: str = "v1"
    partial_metadata: bool = False  # as=PartialObjectMetadata(List)


def parse_accept(header: str) -> list[MediaType]:
    """Split an Accept header into media types in the order given (kube ignores q weights for these)."""
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


def negotiate(accept: str, allow_table: bool = True, protobuf: bool = False) -> Output:
    """Choose the response form for a resource request: the first Accept entry kapi can serve.

    ``protobuf``: the resource's kind has a protobuf message (a built-in kind;
    routes.py decides), so ``application/vnd.kubernetes.protobuf`` is
    servable (without ``as=``; a ``stream=watch`` parameter is allowed, as
    client-go's watch Accept has it). ``as=PartialObjectMetadata(List);g=meta.k8s.io;v=v1``
    in protobuf is servable for every resource (the metadata client's Accept). Raises 406 NotAcceptable if no entry is
    servable, naming the media types kapi can produce for it
    (:data:`PRODUCES` / :data:`PRODUCES_PROTOBUF`; kube's errNotAcceptable
    words). An empty Accept or ``*/*`` gives JSON.
    """
    if not accept.strip():
        return Output()
    for media in parse_accept(accept):
        as_ = media.param("as")
        if media.mime in (JSON, "application/*", "*/*"):
            if as_ == "Table" and media.param("g") == "meta.k8s.io" and media.param("v") in ("v1", "v1beta1"):
                if allow_table:
                    return Output(JSON, table=True, table_version=media.param("v"))
                continue
            if as_ in ("PartialObjectMetadata", "PartialObjectMetadataList") and media.param("g") == "meta.k8s.io":
                return Output(JSON, partial_metadata=True)
            if as_:
                continue
            return Output(JSON)
        if media.mime in (YAML, "application/x-yaml", "text/yaml") and not as_:
            return Output(YAML)
        if media.mime == PROTOBUF:
            if as_ in ("PartialObjectMetadata", "PartialObjectMetadataList") and media.param("g") == "meta.k8s.io" \
                    and media.param("v") == "v1":  # every resource, custom ones too (kube PR #77817)
                return Output(PROTOBUF, partial_metadata=True)
            if protobuf and not as_:
                return Output(PROTOBUF)
    raise errors.not_acceptable("only the following media types are accepted: "
                                + ", ".join(PRODUCES_PROTOBUF if protobuf else PRODUCES))


def prefers_protobuf(accept: str) -> bool:
    """Whether the first Accept entry that is JSON, YAML or protobuf is protobuf (an error's Status is then
    protobuf, as kube's ErrorNegotiated answers in the negotiated form)."""
    if PROTOBUF not in accept:
        return False
    for media in parse_accept(accept):
        if media.mime == PROTOBUF and not media.param("as"):
            return True
        if media.mime in (JSON, YAML, "application/*", "*/*", "application/x-yaml", "text/yaml"):
            return False
    return False


def _yaml_error(exc: yaml.YAMLError) -> str:
    """go-yaml's one-line form (``yaml: line 2: mapping values are not allowed in this context``)."""
    mark = getattr(exc, "problem_mark", None)
    problem = (getattr(exc, "problem", None) or "invalid YAML").replace(" here", " in this context")
    return f"yaml: line {mark.line + 1}: {problem}" if mark is not None else f"yaml: {problem}"


def decode_body(body: bytes, content_type: str) -> Any:
    """Decode a JSON, YAML or Kubernetes protobuf (kapi.k8sproto) request body into Python data.

    Raises 415 for other content types and 400 BadRequest for malformed data
    (JSON syntax errors in Go's encoding/json words, as kube-apiserver reports them), including YAML alias
    bombs and documents nested deeper than ``kapi.safedecode.MAX_DEPTH`` (see :mod:`kapi.safedecode`).
    """
    mime = content_type.split(";")[0].strip().lower() or JSON
    if len(body) > limits.MAX_BODY_BYTES:
        raise errors.too_large()
    if mime in (JSON, MERGE_PATCH, JSON_PATCH, STRATEGIC_MERGE_PATCH):
        prefix = "couldn't get version/kind; json parse error: " if mime == JSON else "error decoding patch: "
        try:
            value = jsonutil.loads(body)
        except ValueError as exc:  # kube's words: the body decoder, or the patcher's strict decode
            if "depth limit" in str(exc):  # orjson stops at 1024 levels; Go's words for any char that goes deeper
                at = int(getattr(exc, "pos", 0) or 0)
                char = "{" if body.rfind(b"{", 0, at + 1) > body.rfind(b"[", 0, at + 1) else "["
                raise errors.bad_request(f"{prefix}invalid character '{char}' exceeded max depth") from None
            raise errors.bad_request(prefix + jsonutil.syntax_error(body, exc)) from None
        too_deep = safedecode.json_depth_error(body, value)
        if too_deep:
            raise errors.bad_request(prefix + too_deep)
        return value
    if mime in (YAML, "application/x-yaml", "text/yaml", APPLY_PATCH):
        try:
            return safedecode.load_yaml(body)
        except yaml.YAMLError as exc:
            raise errors.bad_request(f"error converting YAML to JSON: {_yaml_error(exc)}") from None
    if mime == k8sproto.MEDIA_TYPE:
        return k8sproto.decode(body)
    raise errors.unsupported_media_type(mime)


def encode(obj: Any, output: Output) -> tuple[bytes, str]:
    """Encode ``obj`` in the negotiated form; returns (body bytes, Content-Type).

    PROTOBUF: kube's envelope (:func:`kapi.k8sproto.encode`); an object the schema cannot encode (a kind
    without a message, such as autoscaling/v1 Scale, or a value of the wrong type) is answered as JSON.
    """
    if output.mime == PROTOBUF and isinstance(obj, dict):
        try:
            return k8sproto.encode(obj), PROTOBUF
        except k8sproto.EncodeError:
            return jsonutil.dumps(obj), JSON
    if output.mime == YAML:
        return yaml.safe_dump(obj, sort_keys=False, allow_unicode=True).encode(), YAML
    return jsonutil.dumps(obj), JSON


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
    if (content_type.split(";")[0].strip().lower() or JSON) not in (YAML, "application/x-yaml", "text/yaml"):
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
