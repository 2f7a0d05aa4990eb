"""CEL source at the token level, shared by the CRD rule checks and the evaluation rewrites.

:func:`tokens` splits an expression into string, number, identifier and
operator tokens (enough to find selections, calls and macros without a full
parser); :func:`escape` is kube's escaping of property names for CEL
(``__dash__``, ``__dot__``, ``__slash__``, ``__underscores__``,
``__<keyword>__``). Source: k8s.io/apiserver ``pkg/cel`` ("Escaping") and
the CEL language definition (lexis, reserved words).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CEL_RESERVED = frozenset({"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
                          "function", "if", "import", "let", "loop", "package", "namespace", "return", "var", "void",
                          "while"})
_ACCESSIBLE = re.compile(r"^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$")
_TOKEN = re.compile(r"""
    (?P<ws>\s+|//[^\n]*)
  | (?P<str>(?:[rR][bB]?|[bB][rR]?)?
        (?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
  | (?P<num>0[xX][0-9a-fA-F]+[uU]?|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?[uU]?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>==|!=|<=|>=|&&|\|\||\.\?|[^\s])
""", re.VERBOSE | re.DOTALL)


@dataclass(frozen=True)
class Tok:
    """One CEL token: kind (``str``, ``num``, ``ident`` or ``op``), its text, and its offset in the source."""

    kind: str
    text: str
    offset: int


def escape(name: str) -> str | None:
    """The CEL field name of property ``name`` (kube's escaping), or None when not accessible from CEL."""
    if name in CEL_RESERVED:
        return f"__{name}__"
    if not _ACCESSIBLE.match(name):
        return None
    return name.replace("__", "__underscores__").replace(".", "__dot__").replace("-", "__dash__").replace(
        "/", "__slash__")


def tokens(source: str) -> list[Tok]:
    """The tokens of ``source`` without whitespace and comments (a lexer for checks and rewrites, not a parser)."""
    out = []
    for m in _TOKEN.finditer(source):
        kind = m.lastgroup or "op"
        if kind != "ws":
            out.append(Tok(kind, m.group(), m.start()))
    return out
