"""Generate ``kapi/k8sproto/gofields_source.json``: Go pointer / omitempty / inline facts read from ``types.go``.

``kapi/k8sproto/gofields.json`` (scripts/gen_gofields.py) reads these facts
from the pinned kubectl binary's Go type descriptors, which hold only the
types kubectl links. This script gives the same facts, in the same form, for
the messages of ``schema.json`` that table does not cover, from the Go
source: the ``types.go`` files of the groups, kept outside the repository
like the proto texts of scripts/gen_k8sproto_schema.py (fetched at
development time with the search tool's ``read_file``, laid out by Go
package path under ``SRC_DIR``: ``k8s.io/api/resource/v1/types.go``,
``k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/types.go``, ...). Run::

    .venv/bin/python scripts/gen_gofields_source.py SRC_DIR [-o kapi/k8sproto/gofields_source.json]

Every ``*.go`` file under ``SRC_DIR`` is read; its directory is its Go
package, and the protobuf package of its structs is that path with ``/``
as ``.`` and ``-`` as ``_`` (go-to-protobuf's naming:
``k8s.io/kube-aggregator/...`` is ``k8s.io.kube_aggregator...``). For each
``type X struct { ... }`` each field line (``Name Type `tags```, or an
embedded ``Type `tags```) gives:

* ``p``: the Go type is a pointer (``*T``);
* ``o``: the json tag has ``omitempty`` or ``omitzero``;
* ``i``: the field is embedded inline (``json:",inline"``, or an embedded
  struct without a json name, which encoding/json flattens);

keyed as ``schema.json`` names fields: the json tag's name, else the
protobuf tag's ``name=`` (an inline member such as
``RuleWithOperations.rule``), else the Go name with a lower-case first
letter. A ``json:"-"`` field is skipped. A schema field without such a Go
field is ``?``; a message without a struct is listed under
``notGoStructs``. Only the struct declarations, field names and tags are
read (a condensed transcription without comments is enough); the header
comment of each file (its lines before ``package``) is copied into the
output's ``source`` so the table names the upstream file and commit it came
from.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA = os.path.join(ROOT, "kapi", "k8sproto", "schema.json")
KUBECTL_TABLE = os.path.join(ROOT, "kapi", "k8sproto", "gofields.json")
OUT = os.path.join(ROOT, "kapi", "k8sproto", "gofields_source.json")

_STRUCT = re.compile(r"^type\s+(\w+)\s+struct\s*\{\s*$")
_FIELD = re.compile(r"^\s*(?:(\w+)\s+)?(\S+)\s+`([^`]*)`\s*(?://.*)?$")
_TAG = re.compile(r'(\w+):"([^"]*)"')


class GoSyntaxError(ValueError):
    """A struct body line this reader does not understand (file, line)."""


def proto_package(go_package: str) -> str:
    """``k8s.io/kube-aggregator/pkg/apis/apiregistration/v1`` -> ``k8s.io.kube_aggregator.pkg.apis...v1``."""
    return go_package.strip("/").replace("/", ".").replace("-", "_")


def field_flags(go_type: str, tag: str, embedded: bool) -> tuple[str, str] | None:
    """(schema name, flags) of one Go struct field, or None for a ``json:"-"`` field."""
    tags = dict(_TAG.findall(tag))
    name, *opts = tags.get("json", "").split(",")
    if name == "-":
        return None
    flags = ""
    if go_type.startswith("*"):
        flags += "p"
    if {"omitempty", "omitzero"} & set(opts):
        flags += "o"
    if "inline" in opts or (embedded and not name):
        flags += "i"
    proto = [p[5:] for p in tags.get("protobuf", "").split(",") if p.startswith("name=")]
    if not name:
        if proto:
            name = proto[0]
        else:
            go_name = go_type.lstrip("*").rsplit(".", 1)[-1]
            name = go_name[:1].lower() + go_name[1:]
    return name, flags


def parse(text: str, source: str = "<go>") -> dict[str, dict[str, str]]:
    """{struct name: {schema field name: flags}} of the struct declarations in one Go file."""
    structs: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if current is None:
            m = _STRUCT.match(stripped)
            if m:
                current = structs[m.group(1)] = {}
            continue
        if stripped == "}":
            current = None
            continue
        if not stripped or stripped.startswith("//"):
            continue
        m = _FIELD.match(line)
        if not m:
            raise GoSyntaxError(f"{source}:{number}: cannot read struct field {stripped!r}")
        go_name, go_type, tag = m.groups()
        got = field_flags(go_type, tag, embedded=go_name is None)
        if got is not None:
            current[got[0]] = got[1]
    if current is not None:
        raise GoSyntaxError(f"{source}: unterminated struct")
    return structs


def header(text: str) -> str:
    """The comment lines before ``package`` (without the ``//``), joined by spaces."""
    lines = []
    for line in text.splitlines():
        if line.startswith("package "):
            break
        if line.startswith("//"):
            lines.append(line[2:].strip())
    return " ".join(lines)


def read_tree(src_dir: str) -> tuple[dict[str, dict[str, str]], list[dict[str, str]]]:
    """Every ``*.go`` under ``src_dir``: ({proto message full name: {field: flags}}, [{"file", "note"}])."""
    messages: dict[str, dict[str, str]] = {}
    sources: list[dict[str, str]] = []
    for root, _dirs, files in sorted(os.walk(src_dir)):
        for name in sorted(files):
            if not name.endswith(".go"):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src_dir)
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            package = proto_package(os.path.dirname(rel))
            for struct, fields in parse(text, path).items():
                messages[f"{package}.{struct}"] = fields
            sources.append({"file": rel.replace(os.sep, "/"), "note": header(text)})
    return messages, sources


def build(schema: dict[str, object], kubectl: dict[str, object], go: dict[str, dict[str, str]],
          sources: list[dict[str, str]]) -> dict[str, object]:
    """The table: for each schema message that the kubectl table (``messages``) does not cover, its flags."""
    covered = set(kubectl.get("messages", {}))  # type: ignore[arg-type]
    table: dict[str, dict[str, str]] = {}
    missing: list[str] = []
    for message, spec in sorted(schema["messages"].items()):  # type: ignore[attr-defined]
        if message in covered:
            continue
        fields = go.get(message)
        if fields is None:
            missing.append(message)
            continue
        table[message] = {json_name: fields.get(json_name, "?") for json_name, _t, _m in spec["fields"].values()}
    return {
        "about": "Go pointer (p) / omitempty (o) / inline (i) per protobuf field of the schema.json messages that "
                 "kubectl's table (gofields.json) lacks; generated by scripts/gen_gofields_source.py from types.go",
        "source": sources,
        "messages": table,
        "notGoStructs": missing,
    }


def main(argv: list[str] | None = None) -> int:
    """Read SRC_DIR's Go files and write the table; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("src_dir", help="directory holding k8s.io/**/types.go files laid out by Go package path")
    parser.add_argument("-o", "--output", default=OUT)
    parser.add_argument("--schema", default=SCHEMA)
    parser.add_argument("--kubectl-table", default=KUBECTL_TABLE)
    args = parser.parse_args(argv)
    with open(args.schema, encoding="utf-8") as fh:
        schema = json.load(fh)
    with open(args.kubectl_table, encoding="utf-8") as fh:
        kubectl = json.load(fh)
    go, sources = read_tree(args.src_dir)
    doc = build(schema, kubectl, go, sources)
    with open(args.output, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=0, sort_keys=True)
        fh.write("\n")
    table = doc["messages"]
    print(f"{len(table)} messages, {sum(map(len, table.values()))} fields; "  # type: ignore[arg-type]
          f"not Go structs: {doc['notGoStructs']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
