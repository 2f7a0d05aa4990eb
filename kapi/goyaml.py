"""YAML as kube-apiserver writes it (``Accept: application/yaml``): go-yaml v2's encoding of the JSON object.

kube's YAML serializer marshals the object to JSON and converts it with sigs.k8s.io/yaml's JSONToYAML, which
decodes the JSON into generic maps and encodes them with go-yaml v2. That fixes what PyYAML would otherwise
choose differently:

- map keys in go-yaml's ``keyList.Less`` order (:func:`go_key_order`: runs of digits compare as numbers, a
  non-letter sorts before a letter), not the object's field order;
- a string that would read back as something else when plain (go-yaml's ``resolve``: ``"123"``, ``"true"``,
  ``"n"``, ``""``, ``"1:20"``, a timestamp such as ``"2026-12-03T08:59:31Z"``) in double quotes, where PyYAML
  uses single ones; a string with a newline in literal block style (``|-``);
- no folding of long lines.

The rest (plain scalars where the content allows them, else single quotes, two-space indentation, block
sequences at their key's indentation, ``{}`` and ``[]`` for empty collections) is libyaml's emitter in both.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

import yaml

# go-yaml v2 resolve.go: the plain scalars it maps to a non-string by exact text (bools, nulls, infinities, NaN).
_RESOLVE_MAP = frozenset((
    "y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE",
    "n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE",
    "", "~", "null", "Null", "NULL",
    ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"))
_HINTED = frozenset("yYnNtTfFoO~+-.0123456789")  # resolveTable: first characters that may resolve to a non-string
_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")  # yamlStyleFloat
_BASE60 = re.compile(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$")  # isBase60Float
_GO_INT = re.compile(r"^[-+]?(0[xX][0-9a-fA-F]+|0[oO]?[0-7]+|0[bB][01]+|[1-9][0-9]*|0)$")  # ParseInt(s, 0, 64)
# parseTimestamp's formats: 2006-1-2T15:4:5.999999999Z07:00 (or t, or a space and no zone), and 2006-1-2
_TIMESTAMP = re.compile(r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
                        r"(([Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]{1,9})?(Z|[-+][0-9]{2}:[0-9]{2}))"
                        r"|( [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]{1,9})?))?$")


def resolves_to_non_string(text: str) -> bool:
    """Whether go-yaml v2 would read ``text`` written plain as anything but a string (so it quotes it)."""
    if text and text[0] not in _HINTED:
        return False
    if text in _RESOLVE_MAP:
        return True
    if _BASE60.match(text):
        return True
    if text[0] == ".":
        return bool(_FLOAT.match(text))
    if text[0] in "+-0123456789":
        if text[0] in "0123456789" and _TIMESTAMP.match(text):
            return True
        plain = text.replace("_", "")
        return bool(_GO_INT.match(plain) or _FLOAT.match(plain))
    return False


def _digits(text: str, start: int) -> tuple[int, int]:
    end, value = start, 0
    while end < len(text) and text[end].isdigit():
        value = value * 10 + int(text[end])
        end += 1
    return value, end


def _go_less(a: str, b: str) -> bool:
    """go-yaml v2 keyList.Less for two string keys."""
    for i in range(min(len(a), len(b))):
        if a[i] == b[i]:
            continue
        al, bl = a[i].isalpha(), b[i].isalpha()
        if al and bl:
            return a[i] < b[i]
        if al or bl:
            return bl
        an, ai = _digits(a, i)
        bn, bi = _digits(b, i)
        if a[i] == "0" or b[i] == "0":
            j = i - 1
            while j >= 0 and a[j].isdigit():
                if a[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return a[i] < b[i]
    return len(a) < len(b)


def go_key_order(keys: Any) -> list[Any]:
    """``keys`` sorted as go-yaml v2 sorts map keys (strings; other keys by their text)."""
    return sorted(keys, key=functools.cmp_to_key(
        lambda x, y: -1 if _go_less(str(x), str(y)) else (1 if _go_less(str(y), str(x)) else 0)))


class _Dumper(yaml.SafeDumper):
    """SafeDumper with go-yaml v2's key order and string styles, and no anchors or aliases: go-yaml writes a value
    as often as it occurs (it encodes JSON, which shares nothing), where PyYAML would write ``&id001`` for a dict
    or list the Python object happens to hold twice."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    if "\n" in text:
        style: str | None = "|"
    elif resolves_to_non_string(text):
        style = '"'
    else:
        style = None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


def _represent_map(dumper: yaml.SafeDumper, value: Mapping[Any, Any]) -> yaml.MappingNode:
    return dumper.represent_mapping("tag:yaml.org,2002:map", [(k, value[k]) for k in go_key_order(value)])


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(dict, _represent_map)


def dumps(obj: Any) -> bytes:
    """``obj`` (JSON-shaped data) as kube-apiserver's YAML bytes."""
    text = yaml.dump(obj, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=float("inf"),
                     default_flow_style=False)
    return text.encode()
