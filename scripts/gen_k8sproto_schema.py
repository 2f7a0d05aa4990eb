"""Generate ``kapi/k8sproto/schema.json`` from Kubernetes ``generated.proto`` files.

Usage::

    .venv/bin/python scripts/gen_k8sproto_schema.py SRC_DIR [-o kapi/k8sproto/schema.json]
    .venv/bin/python scripts/gen_k8sproto_schema.py SRC_DIR --merge kapi/k8sproto/schema.json

``SRC_DIR`` holds Kubernetes ``generated.proto`` files laid out by import path
(``k8s.io/api/core/v1/generated.proto``,
``k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto``, ...); every
``*.proto`` under it is read. With ``--merge TABLE`` an existing table is
extended instead of replaced: its messages and kinds are kept, the new
files' messages are added (a message of the same full name is replaced by
the new file's), type references resolve against both, and ``sources`` is
the union (the output defaults to ``TABLE`` then). The upstream texts of a
table's earlier files need not be on disk for that. The proto text is not part of this repository:
fetch it at development time (see below). The output is a compact table of
facts (message names, field numbers, JSON names, types) that
:mod:`kapi.k8sproto` decodes request bodies with.

Schema format (JSON)::

    {
      "messages": {
        "<message full name>": {
          "fields": {"<number>": [json_name, type, mode]},
          "list": true          # only for list-wrapper messages (see below)
        }
      },
      "kinds": [[group, version, kind, message full name], ...],
      "anyVersionKinds": {kind: message full name}
    }

``type`` is a proto scalar (``string``, ``int64``, ``bool``, ``bytes``, ...)
or a message full name (no leading dot). ``mode`` is ``""`` (singular),
``"r"`` (repeated), ``"i"`` (an embedded Go struct, ``json:",inline"``: its
fields are merged into the parent object) or ``"m"`` (a map; then ``type`` is
``[key type, value type]``).

List wrappers: a message annotated ``+protobuf.nullable=true`` whose only
field is ``repeated X items = 1`` exists so a Go map can hold slices
(meta/v1 ``Verbs``, authentication/authorization ``ExtraValue``); Go's JSON
encoder writes it as a bare array, so it is flagged ``"list": true``.

Kinds: every message of an API group package (``k8s.io.api.<dir>.<version>``,
or one of ``PACKAGE_GROUPS``, the groups served from outside k8s.io/api)
whose field 1 is ``metadata`` of type ``ObjectMeta`` or ``ListMeta`` is a
kind of that group/version, except the templates listed in ``NOT_KINDS``.
The group name comes from ``GROUP_NAMES`` (each package's ``GroupName``
constant in k8s.io/api ``register.go``) or ``PACKAGE_GROUPS``.
``anyVersionKinds`` are the meta/v1 option kinds that ``metav1.AddToGroupVersion`` registers in every
group/version (a typed client sends ``DeleteOptions`` under the version of
the resource it deletes).

Embedded structs: the proto files do not say which Go fields are embedded
with ``json:",inline"``; ``INLINE`` lists them (facts from the k8s.io/api
``types.go`` JSON tags). Likewise ``JSON_NAMES`` lists the few fields whose
protobuf tag name differs from their JSON name (authentication/v1
``BoundObjectReference.uID`` is JSON ``uid``; admissionregistration/v1 names
a few fields by their Go name, ``Webhooks``, ``Expression``, ``Name``).
tests/test_k8sproto.py checks the whole table
against the kube 1.37 JSON schemas shipped in the ``kubernetes-validate``
wheel, so a missing or wrong entry fails a test.

Source of the committed table (condensed transcriptions of these upstream
files, fetched with the search tool's ``read_file`` and kept outside the
repo; comments dropped but ``+protobuf.nullable`` annotations kept):

- kubernetes/kubernetes ``staging/src/k8s.io/api/core/v1/generated.proto``
  at commit 0032f46b5dcb893b0684679408a2da9bd26a0859 (the 1.36 tree:
  PodSpec.workloadRef, hostnameOverride, FileKeySelector).
- ``staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto`` as of
  the 1.33+ tree (read from adivyoseph/ai_kubelet at commit
  2066c48b0a8ca3f1ce92e1b1c4cae857b3a41be1; FieldSelectorRequirement,
  DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential).
- ``staging/src/k8s.io/apimachinery/pkg/runtime/generated.proto`` (commit
  203d8ac83844b8ea8ece8ece7630cb22ef8f327d), ``pkg/util/intstr`` (commit
  009a4a8bc0b3dde74bdce54289f58bf82efaf5e9), ``pkg/api/resource`` (commit
  0f9f0907d6dbe57e78d61f3432bf9b63514b540a).
- ``staging/src/k8s.io/api/rbac/v1/generated.proto`` (commit
  081ac6b5a9004b7c6cfe6a8b8f83e60eca58a010).
- ``staging/src/k8s.io/api/authentication/v1/generated.proto`` (commit
  155f0631f25771b91aa35aaabd253468a8dd723e) plus ``SelfSubjectReview``,
  laid out as in ``authentication/v1beta1`` (commit
  025f2834a128798cef30018a5e6a6ae82b5ad885); ``authorization/v1`` (commit
  061200305a7b1c9aac1f8a9756879ea11c913b88).
- ``coordination/v1`` (commit 1672e6d6b8becd8b9595597d4957830f0fd07b7e),
  ``events/v1`` (0a89386760cca2dc968f25890019cf6f188bdcaf), ``apps/v1``
  (0122c43a017029d0572474da5a6382e1463f9710), ``batch/v1``
  (008b3652959ca58af8be3fb5b6ecfe9ae7638282), ``scheduling/v1``
  (01d0b7277d400d6aa9fc676abb4826700ec869fe), all kubernetes/kubernetes
  ``staging/src/k8s.io/api/<group>/v1/generated.proto``; ``policy/v1`` read
  from LogicalShark/kubernetes at commit
  af8834bd98a52b13ffc9a8bea8ad9131463e5b99 (a 1.36+ tree with Eviction);
  ``networking/v1`` (kubernetes/kubernetes commit
  008b3652959ca58af8be3fb5b6ecfe9ae7638282).
- ``autoscaling/v2`` (commit 030880a5dc5449403c6d1f0aa146a7dc21d6c6dc),
  ``autoscaling/v1`` (the HorizontalPodAutoscaler messages only),
  ``certificates/v1`` (023207f43e695fcfb6262e13df0313c60d805dbb),
  ``discovery/v1`` (025f2834a128798cef30018a5e6a6ae82b5ad885, plus the
  1.33 ``EndpointHints.forNodes = 2``/``ForNode``), ``node/v1``
  (034debc18008c8ebfe1971d7d402dcf2b50b84c2), ``storage/v1``
  (00a7fbe7c74d25dc0ba4b87f16f9db3d7df463a3).
- Added later with ``--merge`` (the earlier files were no longer on disk):
  ``admissionregistration/v1`` read from liggitt/kubernetes at commit
  1cc50ce310930b6b1743b36441fcc59099d21f6f (a 1.36+ tree with the v1
  MutatingAdmissionPolicy kinds); ``flowcontrol/v1`` (kubernetes/kubernetes
  commit 09d8c148526962d60892148817fedda0c7e896f4); ``resource/v1`` read
  from thc1006/kubernetes at commit
  3fa5afbe7fc43e6c605f07b2bed6e8608547cd8e (a 1.37 tree with DeviceTaintRule;
  its pre-release ``Device.nodeAllocatableResourceMappings = 13`` left out,
  as kube 1.37 replaced it by ``nodeAllocatableResources`` of another
  message); kube-aggregator
  ``staging/src/k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/generated.proto``
  (kubernetes/kubernetes commit 0a2f5b122db7f5dab90e3b6384811a68dd030ca3).
  apiextensions.k8s.io/v1 (CustomResourceDefinition; its generated.proto
  read at kubernetes/kubernetes commit
  046d201c45cebd19eb1fc4612426761c64802825) is not in the table:
  its ``JSONSchemaProps`` holds ``JSON`` ({1: raw bytes}, JSON any value),
  ``JSONSchemaPropsOrArray`` ({1: schema, 2: repeated schemas}, JSON an
  object or an array), ``JSONSchemaPropsOrBool`` ({1: allows, 2: schema},
  JSON a bool or an object) and ``JSONSchemaPropsOrStringArray`` ({1:
  schema, 2: repeated string}, JSON an object or an array), whose JSON form
  depends on which protobuf field is set (their hand-written MarshalJSON);
  the table's modes cannot say that, so the decoder and encoder would need
  special cases for them first. autoscaling/v1 ``Scale``/``ScaleSpec``/
  ``ScaleStatus`` (kubernetes/kubernetes commit
  06726ca7f82742f67b39ac2802abe997082c2723) are not merged in yet either:
  tests/gateway/test_negotiation.py still uses Scale as its example of a
  kind without a protobuf message.
- The output's ``sources`` key lists every file the table was built from.

Field numbers never change in Kubernetes protos (new fields get new numbers),
so a table from a slightly older tree decodes newer clients' bodies; fields
it does not know are skipped, as Go's generated Unmarshal skips them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass, field

SCALARS = frozenset({
    "double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64",
    "fixed32", "fixed64", "sfixed32", "sfixed64", "bool", "string", "bytes",
})

META = "k8s.io.apimachinery.pkg.apis.meta.v1"

# Package directory under k8s.io/api -> API group name (register.go GroupName).
GROUP_NAMES = {
    "core": "",
    "admissionregistration": "admissionregistration.k8s.io",
    "apps": "apps",
    "authentication": "authentication.k8s.io",
    "authorization": "authorization.k8s.io",
    "autoscaling": "autoscaling",
    "batch": "batch",
    "certificates": "certificates.k8s.io",
    "coordination": "coordination.k8s.io",
    "discovery": "discovery.k8s.io",
    "events": "events.k8s.io",
    "flowcontrol": "flowcontrol.apiserver.k8s.io",
    "networking": "networking.k8s.io",
    "node": "node.k8s.io",
    "policy": "policy",
    "rbac": "rbac.authorization.k8s.io",
    "resource": "resource.k8s.io",
    "scheduling": "scheduling.k8s.io",
    "storage": "storage.k8s.io",
}

# Protobuf packages outside k8s.io/api (without the version) -> API group name.
PACKAGE_GROUPS = {
    "k8s.io.kube_aggregator.pkg.apis.apiregistration": "apiregistration.k8s.io",
}

# Messages with ObjectMeta metadata that are not kinds (templates, wrappers).
NOT_KINDS = frozenset({
    "k8s.io.api.core.v1.PodTemplateSpec",
    "k8s.io.api.core.v1.PersistentVolumeClaimTemplate",
    "k8s.io.api.core.v1.PodStatusResult",
    "k8s.io.api.apps.v1.ControllerRevisionSpec",
    "k8s.io.api.batch.v1.JobTemplateSpec",
    "k8s.io.api.resource.v1.ResourceClaimTemplateSpec",
})

# meta/v1 kinds registered in every group/version (metav1.AddToGroupVersion).
ANY_VERSION_KINDS = ("ListOptions", "GetOptions", "DeleteOptions", "CreateOptions", "UpdateOptions",
                     "PatchOptions", "WatchEvent")

# (message full name, proto field name) of Go fields embedded with json:",inline".
INLINE = frozenset({
    ("k8s.io.api.core.v1.ConfigMapEnvSource", "localObjectReference"),
    ("k8s.io.api.core.v1.ConfigMapKeySelector", "localObjectReference"),
    ("k8s.io.api.core.v1.ConfigMapProjection", "localObjectReference"),
    ("k8s.io.api.core.v1.ConfigMapVolumeSource", "localObjectReference"),
    ("k8s.io.api.core.v1.SecretEnvSource", "localObjectReference"),
    ("k8s.io.api.core.v1.SecretKeySelector", "localObjectReference"),
    ("k8s.io.api.core.v1.SecretProjection", "localObjectReference"),
    ("k8s.io.api.core.v1.EphemeralContainer", "ephemeralContainerCommon"),
    ("k8s.io.api.core.v1.Probe", "handler"),
    ("k8s.io.api.core.v1.Volume", "volumeSource"),
    ("k8s.io.api.core.v1.PersistentVolumeSpec", "persistentVolumeSource"),
    ("k8s.io.api.networking.v1.IngressRule", "ingressRuleValue"),
    ("k8s.io.api.admissionregistration.v1.RuleWithOperations", "rule"),
    ("k8s.io.api.admissionregistration.v1.NamedRuleWithOperations", "ruleWithOperations"),
    ("k8s.io.api.resource.v1.DeviceAllocationConfiguration", "deviceConfiguration"),
    ("k8s.io.api.resource.v1.DeviceClaimConfiguration", "deviceConfiguration"),
    ("k8s.io.api.resource.v1.DeviceClassConfiguration", "deviceConfiguration"),
})

# (message full name, proto field name) -> JSON name, where the Go protobuf tag name differs from the JSON tag.
JSON_NAMES = {
    ("k8s.io.api.authentication.v1.BoundObjectReference", "aPIVersion"): "apiVersion",
    ("k8s.io.api.authentication.v1.BoundObjectReference", "uID"): "uid",
    ("k8s.io.api.networking.v1.IngressClassParametersReference", "aPIGroup"): "apiGroup",
    ("k8s.io.api.admissionregistration.v1.MutatingWebhookConfiguration", "Webhooks"): "webhooks",
    ("k8s.io.api.admissionregistration.v1.ValidatingWebhookConfiguration", "Webhooks"): "webhooks",
    ("k8s.io.api.admissionregistration.v1.Validation", "Expression"): "expression",
    ("k8s.io.api.admissionregistration.v1.Variable", "Name"): "name",
    ("k8s.io.api.admissionregistration.v1.Variable", "Expression"): "expression",
}

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>//[^\n]*)
  | (?P<block>/\*.*?\*/)
  | (?P<str>"[^"\n]*"|'[^'\n]*')
  | (?P<ident>\.?[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<num>-?\d+)
  | (?P<sym>[{}<>=;,\[\]()])
""", re.VERBOSE | re.DOTALL)


class ProtoSyntaxError(ValueError):
    """A construct this parser does not understand (file, message)."""


@dataclass
class Field:
    """One parsed field: label ("optional"/"repeated"/"map"), type text, name, number."""

    label: str
    type: str
    name: str
    number: int
    map_key: str = ""


@dataclass
class Message:
    """One parsed message: full name, package, fields, and its leading comment."""

    full_name: str
    package: str
    comment: str
    fields: list[Field] = field(default_factory=list)


def tokenize(text: str) -> list[tuple[str, str]]:
    """Split proto text into (kind, value) tokens; line comments are kept as ("comment", text)."""
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ProtoSyntaxError(f"unexpected character {text[pos]!r} at offset {pos}")
        pos = m.end()
        kind = m.lastgroup or ""
        if kind in ("ws", "block"):
            continue
        out.append((kind, m.group()))
    return out


def parse(text: str, source: str = "<proto>") -> list[Message]:
    """Parse one proto2 file's messages (fields, maps, nested messages; options and imports skipped)."""
    toks = tokenize(text)
    package = ""
    messages: list[Message] = []
    stack: list[Message] = []
    comments: list[str] = []
    i = 0

    def expect(value: str) -> None:
        nonlocal i
        if i >= len(toks) or toks[i][1] != value:
            got = toks[i][1] if i < len(toks) else "end of file"
            raise ProtoSyntaxError(f"{source}: expected {value!r}, got {got!r}")
        i += 1

    def skip_statement() -> None:
        nonlocal i
        while i < len(toks) and toks[i][1] != ";":
            i += 1
        i += 1

    while i < len(toks):
        kind, value = toks[i]
        if kind == "comment":
            comments.append(value[2:].strip())
            i += 1
            continue
        if value in ("syntax", "import", "option"):
            skip_statement()
        elif value == "package":
            package = toks[i + 1][1]
            i += 2
            expect(";")
        elif value == "message":
            name = toks[i + 1][1]
            parent = stack[-1].full_name if stack else package
            msg = Message(f"{parent}.{name}" if parent else name, package, "\n".join(comments))
            messages.append(msg)
            stack.append(msg)
            i += 2
            expect("{")
        elif value == "}":
            if not stack:
                raise ProtoSyntaxError(f"{source}: unbalanced '}}'")
            stack.pop()
            i += 1
        elif value in ("optional", "repeated", "required") and stack:
            ftype, fname = toks[i + 1][1], toks[i + 2][1]
            i += 3
            expect("=")
            number = int(toks[i][1])
            i += 1
            skip_statement()  # [options] ;
            stack[-1].fields.append(Field(value if value != "required" else "optional", ftype, fname, number))
        elif value == "map" and stack:
            i += 1
            expect("<")
            key = toks[i][1]
            i += 1
            expect(",")
            vtype = toks[i][1]
            i += 1
            expect(">")
            fname = toks[i][1]
            i += 1
            expect("=")
            number = int(toks[i][1])
            i += 1
            skip_statement()
            stack[-1].fields.append(Field("map", vtype, fname, number, map_key=key))
        elif value in ("reserved", "extensions") and stack:
            skip_statement()
        elif value in ("enum", "oneof", "service", "extend"):
            raise ProtoSyntaxError(f"{source}: {value} is not supported")
        elif value == ";":
            i += 1
        else:
            raise ProtoSyntaxError(f"{source}: unexpected {value!r}")
        comments = []
    if stack:
        raise ProtoSyntaxError(f"{source}: unterminated message {stack[-1].full_name}")
    return messages


def resolve(type_name: str, scope: str, known: set[str]) -> str:
    """Resolve a type reference as protoc does: absolute (leading dot), else innermost scope outward."""
    if type_name in SCALARS:
        return type_name
    if type_name.startswith("."):
        return type_name[1:]
    parts = scope.split(".")
    while parts:
        candidate = ".".join(parts + [type_name])
        if candidate in known:
            return candidate
        parts.pop()
    if type_name in known:
        return type_name
    raise ProtoSyntaxError(f"unknown type {type_name!r} referenced from {scope}")


def group_version(package: str) -> tuple[str, str] | None:
    """("apps", "v1") for package k8s.io.api.apps.v1 (or a ``PACKAGE_GROUPS`` package); None for non-API
    packages."""
    base, _, version = package.rpartition(".")
    if base in PACKAGE_GROUPS and re.fullmatch(r"v[0-9a-z]+", version):
        return PACKAGE_GROUPS[base], version
    m = re.fullmatch(r"k8s\.io\.api\.([a-z0-9]+)\.(v[0-9a-z]+)", package)
    if not m or m.group(1) not in GROUP_NAMES:
        return None
    return GROUP_NAMES[m.group(1)], m.group(2)


def build(messages: list[Message], base: dict[str, object] | None = None) -> dict[str, object]:
    """Turn parsed messages into the schema table (see module docstring); with ``base`` (a table as this
    function returns it) the result extends it: its messages and kinds are kept, the parsed messages added or,
    for the same full name, replacing them; references resolve against both."""
    base_messages: dict[str, object] = dict(base["messages"]) if base else {}  # type: ignore[call-overload]
    known = {m.full_name for m in messages} | set(base_messages)
    table: dict[str, dict[str, object]] = {}
    kinds: list[list[str]] = []
    for msg in sorted(messages, key=lambda m: m.full_name):
        fields: dict[str, list[object]] = {}
        for f in msg.fields:
            ftype = resolve(f.type, msg.full_name, known)
            json_name = JSON_NAMES.get((msg.full_name, f.name), f.name)
            if f.label == "map":
                fields[str(f.number)] = [json_name, [f.map_key, ftype], "m"]
            elif (msg.full_name, f.name) in INLINE:
                if ftype in SCALARS:
                    raise ProtoSyntaxError(f"inline field {msg.full_name}.{f.name} is not a message")
                fields[str(f.number)] = [json_name, ftype, "i"]
            else:
                fields[str(f.number)] = [json_name, ftype, "r" if f.label == "repeated" else ""]
        entry: dict[str, object] = {"fields": fields}
        if ("+protobuf.nullable=true" in msg.comment and len(msg.fields) == 1
                and msg.fields[0].label == "repeated" and msg.fields[0].name == "items"
                and msg.fields[0].number == 1):
            entry["list"] = True
        table[msg.full_name] = entry
        gv = group_version(msg.package)
        first = fields.get("1")
        if (gv and first and first[0] == "metadata" and first[1] in (f"{META}.ObjectMeta", f"{META}.ListMeta")
                and msg.full_name not in NOT_KINDS):
            kinds.append([gv[0], gv[1], msg.full_name.rsplit(".", 1)[1], msg.full_name])
    missing_inline = sorted(f"{m}.{f}" for m, f in INLINE
                            if m in table and f not in {v[0] for v in table[m]["fields"].values()})  # type: ignore
    if missing_inline:
        raise ProtoSyntaxError(f"INLINE names fields that do not exist: {missing_inline}")
    if base:
        parsed = set(table)
        table = {**base_messages, **table}  # type: ignore[dict-item]
        kinds += [list(k) for k in base["kinds"] if k[3] not in parsed]  # type: ignore[attr-defined]
        kinds.sort(key=lambda k: (k[3], k[0], k[1]))
    any_version = {k: f"{META}.{k}" for k in ANY_VERSION_KINDS if f"{META}.{k}" in table}
    return {"messages": table, "kinds": kinds, "anyVersionKinds": any_version}


def main(argv: list[str] | None = None) -> int:
    """Parse every ``*.proto`` under SRC_DIR and write the schema JSON; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("src_dir", help="directory holding k8s.io/**/generated.proto files")
    parser.add_argument("-o", "--output", default=None,
                        help="output file (default: the --merge table, else kapi/k8sproto/schema.json)")
    parser.add_argument("--merge", metavar="TABLE", default=None,
                        help="extend this existing schema table with SRC_DIR's messages instead of replacing it")
    args = parser.parse_args(argv)
    output = args.output or args.merge or os.path.join(os.path.dirname(__file__), "..", "kapi", "k8sproto",
                                                       "schema.json")
    base = None
    if args.merge:
        with open(args.merge, encoding="utf-8") as fh:
            base = json.load(fh)
    messages: list[Message] = []
    sources: list[str] = []
    for root, _dirs, files in sorted(os.walk(args.src_dir)):
        for name in sorted(files):
            if name.endswith(".proto"):
                path = os.path.join(root, name)
                sources.append(os.path.relpath(path, args.src_dir))
                with open(path, encoding="utf-8") as fh:
                    messages.extend(parse(fh.read(), path))
    schema = build(messages, base)
    if base:
        sources = sorted(set(sources) | set(base.get("sources", [])))
    schema = {"sources": sorted(sources), **schema}
    with open(output, "w", encoding="utf-8") as fh:
        json.dump(schema, fh, sort_keys=True, separators=(",", ":"))
        fh.write("\n")
    print(f"{len(schema['messages'])} messages, {len(schema['kinds'])} kinds -> {output}",  # type: ignore
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
