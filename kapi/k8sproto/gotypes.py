"""Go field facts of the k8s.io/api types: pointer, omitempty, inline.

``gofields.json`` (made by scripts/gen_gofields.py from the Go runtime type
descriptors of the pinned kubectl 1.37 binary) gives, per protobuf message
of ``schema.json`` and per field (by its ``schema.json`` name), a flags
string: ``p`` the Go field is a pointer (``*int32``), ``o`` its json tag has
``omitempty``, ``i`` it is embedded inline; ``""`` a plain value field with
neither; ``?`` no Go field of that name in the release (a field newer than
the binary, or a hand-written marshaller's wire field such as
``Time.seconds``). Two behaviours depend on them:

* what a protobuf body's zero scalar becomes (``decoder``): Go decodes the
  wire into the struct and kube serves it through encoding/json, so a zero
  of a non-pointer ``omitempty`` field disappears, a plain one is written
  (``"name": ""``) and a pointer's is kept as sent (``replicas: 0``);
* which struct nodes server-side apply records (``kapi.k8sproto.goshape``):
  structured-merge-diff marks ``.`` on pointer structs and list items only.

``gofields_source.json`` (made by scripts/gen_gofields_source.py from the
groups' ``types.go`` json and protobuf tags) gives the same flags for the
messages of ``schema.json`` the kubectl table lacks (kube-aggregator's
apiregistration.k8s.io APIService, which kubectl does not link; groups
added to ``schema.json`` before gofields.json was regenerated).
:func:`table` is the union; where both have a message, kubectl's wins.
"""

from __future__ import annotations

import functools
import json
import os

GOFIELDS_PATH = os.path.join(os.path.dirname(__file__), "gofields.json")
GOFIELDS_SOURCE_PATH = os.path.join(os.path.dirname(__file__), "gofields_source.json")


def _messages(path: str) -> dict[str, dict[str, str]]:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)["messages"]


@functools.cache
def table() -> dict[str, dict[str, str]]:
    """{message full name: {field name: flags}}: the kubectl table, plus the types.go table's messages that it
    lacks; messages neither has (no Go struct) are absent. Shared (cached): read it, do not modify it."""
    return {**_messages(GOFIELDS_SOURCE_PATH), **_messages(GOFIELDS_PATH)}


def flags(message: str, field: str) -> str | None:
    """The flags of one field (``"po"``, ``"o"``, ``""``, ...), or None when unknown (``?`` or no entry)."""
    value = table().get(message, {}).get(field)
    return None if value is None or value == "?" else value
