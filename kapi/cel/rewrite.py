"""Source rewriting for CEL syntax kube's cel-go has and the ``cel`` package cannot evaluate.

The ``cel`` package expands only the one-variable macros and rejects the
optional-field syntax, so before compiling for evaluation kapi rewrites:

- two-variable comprehensions (cel-go ext ``TwoVarComprehensions``, in kube's
  CEL environment since 1.33): ``X.all(k, v, P)``, ``X.exists(k, v, P)``,
  ``X.existsOne(k, v, P)``/``exists_one``, ``X.transformList(k, v, [F,] E)``
  and ``X.transformMap(k, v, [F,] E)`` become one-variable macros over the
  indices of a list or the keys of a map with ``v`` replaced by ``(X)[k]``;
- optional selection ``X.?f`` and indexing ``X[?k]`` become calls of the
  hidden functions ``kapi_optField``/``kapi_optIndex`` (an optional receiver
  chains: ``self.?a.?b.orValue(0)``).

``transformMapEntry``, ``sortBy``, ``cel.bind`` and optional list/map
literals (``[?x]``, ``{?k: v}``) are not rewritten. Source: cel-go
``ext`` package documentation ("TwoVarComprehensions", optional types).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kapi.cel.engine import cel
from kapi.cel.syntax import Tok, tokens

_TWO_VAR = {"all": "all", "exists": "exists", "existsOne": "exists_one", "exists_one": "exists_one",
            "transformList": "map", "transformMap": "map"}
_OPEN = {")": "(", "]": "[", "}": "{"}
_CLOSE = {v: k for k, v in _OPEN.items()}
_QUICK = re.compile(r"\.\?|\[\s*\?|\b(?:all|exists|existsOne|exists_one|transformList|transformMap)\s*\(")


def _end(t: Tok) -> int:
    return t.offset + len(t.text)


def _match_open(toks: list[Tok], j: int) -> int:
    depth = 0
    for i in range(j, -1, -1):
        if toks[i].text in _OPEN:
            depth += 1
        elif toks[i].text in _CLOSE:
            depth -= 1
            if depth == 0:
                return i
    raise ValueError("unbalanced")


def _match_close(toks: list[Tok], j: int) -> int:
    depth = 0
    for i in range(j, len(toks)):
        if toks[i].text in _CLOSE:
            depth += 1
        elif toks[i].text in _OPEN:
            depth -= 1
            if depth == 0:
                return i
    raise ValueError("unbalanced")


def _postfixable(t: Tok) -> bool:
    return (t.kind in ("ident", "str", "num") and t.text != "in") or t.text in _OPEN


def _receiver_start(toks: list[Tok], j: int) -> int:
    """Index of the first token of the member-chain expression that ends at token ``j``."""
    while True:
        t = toks[j]
        if t.text in _OPEN:
            o = _match_open(toks, j)
            if toks[o].text == "[" and o > 0 and _postfixable(toks[o - 1]):
                j = o - 1  # an index: the receiver continues before it
                continue
            start = o - 1 if toks[o].text == "(" and o > 0 and toks[o - 1].kind == "ident" and (
                toks[o - 1].text != "in") else o
        else:
            start = j
        if start >= 2 and toks[start - 1].text in (".", ".?"):
            j = start - 2
            continue
        return start


def _args(src: str, toks: list[Tok], open_i: int) -> tuple[list[str], int]:
    """Top-level argument texts of the call whose ``(`` is token ``open_i``, and the index of its ``)``."""
    close = _match_close(toks, open_i)
    args, depth, start = [], 0, _end(toks[open_i])
    for i in range(open_i + 1, close):
        t = toks[i]
        if t.text in _CLOSE:
            depth += 1
        elif t.text in _OPEN:
            depth -= 1
        elif t.text == "," and depth == 0:
            args.append(src[start:t.offset].strip())
            start = _end(t)
    args.append(src[start:toks[close].offset].strip())
    return args, close


def _substitute(expr: str, name: str, replacement: str) -> str:
    toks = tokens(expr)
    out, last = [], 0
    for i, t in enumerate(toks):
        if t.kind == "ident" and t.text == name and (i == 0 or toks[i - 1].text not in (".", ".?")):
            out.append(expr[last:t.offset])
            out.append(replacement)
            last = _end(t)
    out.append(expr[last:])
    return "".join(out)


def _rewrite_once(src: str) -> str | None:
    toks = tokens(src)
    for i, t in enumerate(toks):
        if t.text == ".?" and i + 1 < len(toks) and toks[i + 1].kind == "ident" and i > 0:
            start = _receiver_start(toks, i - 1)
            receiver = src[toks[start].offset:t.offset]
            return (src[:toks[start].offset] + f"kapi_optField({receiver}, '{toks[i + 1].text}')"
                    + src[_end(toks[i + 1]):])
        if t.text == "[" and i + 1 < len(toks) and toks[i + 1].text == "?" and i > 0 and _postfixable(toks[i - 1]):
            start = _receiver_start(toks, i - 1)
            close = _match_close(toks, i)
            receiver = src[toks[start].offset:t.offset]
            key = src[_end(toks[i + 1]):toks[close].offset].strip()
            return src[:toks[start].offset] + f"kapi_optIndex({receiver}, {key})" + src[_end(toks[close]):]
        if (t.kind == "ident" and t.text in _TWO_VAR and i >= 2 and toks[i - 1].text == "." and i + 1 < len(toks)
                and toks[i + 1].text == "("):
            args, close = _args(src, toks, i + 1)
            transform = t.text.startswith("transform")
            if len(args) < 3 or (not transform and len(args) != 3) or len(args) > 4:
                continue
            if not (re.fullmatch(r"[A-Za-z_]\w*", args[0]) and re.fullmatch(r"[A-Za-z_]\w*", args[1])):
                continue
            start = _receiver_start(toks, i - 2)
            x = src[toks[start].offset:toks[i - 1].offset]
            k, v = args[0], args[1]
            body = [_substitute(a, v, f"({x})[{k}]") for a in args[2:]]
            keys = f"(type({x}) == map ? ({x}).map({k}, {k}) : lists.range(size({x})))"
            if t.text == "transformMap":
                kept = f"{keys}.filter({k}, {body[0]})" if len(body) == 2 else keys
                # one pass yields [key, value] pairs: two passes over a map may list its keys in different orders
                new = f"kapi_pairsMap({kept}.map({k}, [{k}, {body[-1]}]))"
            else:
                new = f"{keys}.{_TWO_VAR[t.text]}({k}, {', '.join(body)})"
            return src[:toks[start].offset] + new + src[_end(toks[close]):]
    return None


def rewrite(source: str) -> str:
    """``source`` with two-variable comprehensions and optional selection rewritten (unchanged when none)."""
    if not _QUICK.search(source):
        return source
    for _ in range(200):
        try:
            out = _rewrite_once(source)
        except (ValueError, IndexError):
            return source  # unbalanced: let the compiler report it
        if out is None:
            return source
        source = out
    return source


def _opt_field(receiver: Any, name: str) -> cel.OptionalValue:
    if isinstance(receiver, cel.OptionalValue):
        if not receiver.has_value():
            return cel.OptionalValue.none()
        receiver = receiver.value()
    if isinstance(receiver, dict) and name in receiver:
        return cel.OptionalValue.of(receiver[name])
    return cel.OptionalValue.none()


def _opt_index(receiver: Any, key: Any) -> cel.OptionalValue:
    if isinstance(receiver, cel.OptionalValue):
        if not receiver.has_value():
            return cel.OptionalValue.none()
        receiver = receiver.value()
    if isinstance(receiver, dict) and key in receiver:
        return cel.OptionalValue.of(receiver[key])
    if isinstance(receiver, list) and isinstance(key, int) and not isinstance(key, bool) and 0 <= key < len(receiver):
        return cel.OptionalValue.of(receiver[key])
    return cel.OptionalValue.none()


def _pairs_map(pairs: list[list[Any]]) -> dict[Any, Any]:
    return {pair[0]: pair[1] for pair in pairs}


#: The hidden functions rewritten sources call (registered by services.admission.matching, not accepted in user rules).
HIDDEN: dict[str, Callable[..., Any]] = {"kapi_optField": _opt_field, "kapi_optIndex": _opt_index,
                                         "kapi_pairsMap": _pairs_map}
