"""Compiling a CRD's ``x-kubernetes-validations`` CEL rules at CRD create/update, as apiextensions-apiserver does.

kube compiles every rule (and ``messageExpression``) with cel-go against
the declared type of the schema node it sits on and refuses the CRD with
``...x-kubernetes-validations[i].rule: Invalid value: apiextensions.
ValidationRule{...}: compilation failed: ERROR: <input>:1:6: undefined
field 'foo'\\n | self.foo == 1\\n | .....^``. kapi parses with the ``cel``
package (same ANTLR grammar and syntax messages as cel-go) and adds the
part of cel-go's type check that authors hit most: field selections from
``self``/``oldSelf`` through declared object properties (``undefined field
'x'``, reported at the ``.`` of the selection or the ``(`` of ``has()``,
as cel-go), and identifiers that are not declared variables (``undeclared
reference to 'spec' (in container '')``). Types kube derives from a schema
("Validation rules" in "Extend the Kubernetes API with
CustomResourceDefinitions"): an object with ``properties`` is a message
type whose fields are the properties (names escaped: ``__dash__``,
``__dot__``, ``__slash__``, ``__underscores__``, ``__<keyword>__``); the
root and ``x-kubernetes-embedded-resource`` objects also have
``apiVersion``, ``kind`` and ``metadata.name``/``metadata.generateName``
only; ``additionalProperties`` makes a map; int-or-string, schemas without
a type and ``additionalProperties: true`` objects are left dynamic (not
checked). Result types (``must evaluate to a bool``) and costs are not
checked. Function calls must name a function of kube's environment
(:data:`kapi.library.NAMES`, the registry evaluation uses too) or cel-go's
``undeclared reference to 'f' (in container '')`` is reported at the
call's ``(``. Source: k8s.io/apiextensions-apiserver ``pkg/apiserver/schema/cel``
and k8s.io/apiserver ``pkg/cel`` (escaping, declared types).
"""

from __future__ import annotations

import re
from typing import Any

from kapi.cel import library
from kapi.cel.engine import cel
from kapi.cel.syntax import CEL_RESERVED, Tok, escape, tokens

Obj = dict[str, Any]

_TYPE_IDENTS = frozenset({"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type", "dyn",
                          "true", "false", "null"})
_NAMESPACES = frozenset({"optional", "math", "strings", "cel", "sets", "format", "base64", "lists", "google",
                         "ip"})
_MACROS = frozenset({"all", "exists", "exists_one", "existsOne", "map", "filter", "transformList", "transformMap",
                     "transformMapEntry", "sortBy"})
_PARSE_PREFIX = re.compile(r"^Failed to parse expression .*?: (?=ERROR: )", re.DOTALL)


def _error(source: str, offset: int, message: str) -> str:
    """One cel-go issue: ``ERROR: <input>:L:C: msg`` plus the source line and a caret."""
    line_no = source.count("\n", 0, offset) + 1
    start = source.rfind("\n", 0, offset) + 1
    end = source.find("\n", offset)
    line = source[start:end if end >= 0 else len(source)].replace("\t", " ")
    column = offset - start
    return f"ERROR: <input>:{line_no}:{column + 1}: {message}\n | {line}\n | {'.' * column}^"


_META = {"type": "object", "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}}}


def _fields(schema: Obj, resource_root: bool) -> dict[str, Obj] | None:
    """CEL fields of an object schema (escaped name -> schema), or None when the node is not a checked object."""
    if not isinstance(schema, dict) or schema.get("x-kubernetes-int-or-string"):
        return None
    if schema.get("type") != "object" or "additionalProperties" in schema:
        return None
    props = schema.get("properties")
    out: dict[str, Obj] = {}
    for name, sub in (props if isinstance(props, dict) else {}).items():
        escaped = escape(str(name))
        if escaped is not None and isinstance(sub, dict):
            out[escaped] = sub
    if resource_root or schema.get("x-kubernetes-embedded-resource"):
        out.update({"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": _META})
    return out


def _step(schema: Obj, name: str, resource_root: bool) -> tuple[bool, Obj | None]:
    """Select ``name`` on ``schema``: (known, the field's schema or None when unchecked from here on)."""
    extra = schema.get("additionalProperties") if isinstance(schema, dict) else None
    if isinstance(extra, dict) and schema.get("type") == "object":
        return True, extra
    fields = _fields(schema, resource_root)
    if fields is None:
        return True, None
    if name not in fields:
        return False, None
    return True, fields[name]


# In kube's environment but not evaluated by the ``cel`` package (see kapi.cel.library): accepted, as kube does.
_ACCEPTED_UNEVALUATED = frozenset({"cel.bind", "optMap", "optFlatMap", "format.dns1123Label",
                                   "format.dns1123Subdomain", "format.dns1035Label", "format.qualifiedName",
                                   "format.dns1123LabelPrefix", "format.dns1123SubdomainPrefix",
                                   "format.dns1035LabelPrefix", "format.labelValue", "format.uri", "format.uuid",
                                   "format.byte", "format.date", "format.datetime", "format.named", "validate",
                                   "getTimezone", "strings.format"})


def _function_name(toks: list[Tok], i: int) -> str:
    """The called function's name at identifier ``i`` (followed by ``(``): ``f``, or ``ns.f`` for a namespace."""
    if i >= 2 and toks[i - 1].text == "." and toks[i - 2].kind == "ident" and toks[i - 2].text in _NAMESPACES and (
            i < 3 or toks[i - 3].text not in (".", ".?")):
        return f"{toks[i - 2].text}.{toks[i].text}"
    return toks[i].text


def _type_errors(source: str, schema: Obj, resource_root: bool) -> list[tuple[int, str]]:
    toks = tokens(source)
    errs: list[tuple[int, str]] = []
    bound: set[str] = set()
    for i, t in enumerate(toks):  # comprehension and cel.bind variables
        if t.kind != "ident" or i + 2 >= len(toks) or toks[i + 1].text != "(":
            continue
        macro = t.text in _MACROS and i > 0 and toks[i - 1].text == "."
        binder = t.text == "bind" and i > 1 and toks[i - 1].text == "." and toks[i - 2].text == "cel"
        if (macro or binder) and toks[i + 2].kind == "ident":
            bound.add(toks[i + 2].text)
            if macro and i + 4 < len(toks) and toks[i + 3].text == "," and toks[i + 4].kind == "ident" and (
                    i + 5 < len(toks) and toks[i + 5].text == ","):
                bound.add(toks[i + 4].text)
    depth = 0
    for i, t in enumerate(toks):
        if t.text == "{":
            depth += 1
        elif t.text == "}":
            depth = max(0, depth - 1)
        if t.kind == "ident" and i + 1 < len(toks) and toks[i + 1].text == "(":
            name = _function_name(toks, i)
            if name not in library.NAMES and name not in _ACCEPTED_UNEVALUATED and name not in _MACROS:
                errs.append((toks[i + 1].offset, f"undeclared reference to '{name}' (in container '')"))
            continue
        if t.kind != "ident" or (i > 0 and toks[i - 1].text in (".", ".?")):
            continue
        nxt = toks[i + 1].text if i + 1 < len(toks) else ""
        if nxt == "(" or (nxt == ":" and depth > 0):
            continue
        if t.text not in ("self", "oldSelf"):
            if t.text not in bound | _TYPE_IDENTS | _NAMESPACES | CEL_RESERVED:
                errs.append((t.offset, f"undeclared reference to '{t.text}' (in container '')"))
            continue
        current: Obj | None = schema
        root = resource_root
        j = i + 1
        while current is not None and j + 1 < len(toks) and toks[j].text == "." and toks[j + 1].kind == "ident":
            if j + 2 < len(toks) and toks[j + 2].text == "(":
                break  # a method call
            name = toks[j + 1].text
            known, current = _step(current, name, root)
            root = False
            if not known:
                in_has = (i >= 2 and toks[i - 1].text == "(" and toks[i - 2].text == "has"
                          and (i < 3 or toks[i - 3].text != ".") and j + 2 < len(toks) and toks[j + 2].text == ")")
                errs.append((toks[i - 1].offset if in_has else toks[j].offset, f"undefined field '{name}'"))
                break
            j += 2
    return errs


def compile_errors(source: str, schema: Obj, resource_root: bool, check_types: bool = True) -> str | None:
    """cel-go's issues for ``source`` on a node of ``schema`` (``ERROR: <input>:...`` lines), or None if it compiles.

    ``resource_root``: the node is the root of the custom resource (apiVersion, kind and metadata are
    declared). ``check_types`` False only checks syntax (kube's stored-expression leniency).
    """
    try:
        cel.compile(source)
    except (ValueError, RuntimeError, TypeError) as err:
        text = _PARSE_PREFIX.sub("", str(err)).replace("\n| ", "\n | ")
        parts = re.split(r"\n(?=ERROR: )", text)
        # optional syntax (self.?x, [?0], {?k: v}) parses in kube's cel-go, not in the cel package
        kept = [p for p in parts if "Incomplete `" not in p and ": unsupported syntax '" not in p]
        if kept:
            return "\n".join(kept)
        if any("Incomplete `" in p for p in parts):
            return text
    if not check_types:
        return None
    errs = sorted(_type_errors(source, schema, resource_root))
    return "\n".join(_error(source, offset, message) for offset, message in errs) or None


def uses_old_self(source: str) -> bool:
    """The expression references the ``oldSelf`` variable (a transition rule)."""
    toks = tokens(source)
    return any(t.kind == "ident" and t.text == "oldSelf" and (i == 0 or toks[i - 1].text not in (".", ".?"))
               for i, t in enumerate(toks))
