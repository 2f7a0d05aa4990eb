"""Label and field selectors: parsing and matching, as k8s.io/apimachinery does them.

Label selectors (``pkg/labels/selector.go``) are a comma-separated AND of
requirements: ``a=b``, ``a==b``, ``a!=b``, ``a in (x,y)``, ``a notin (x)``,
``a`` (exists), ``!a`` (does not exist), ``a>1``, ``a<1`` (integer
comparisons, "gt"/"lt"). Keys must be qualified names and values valid label
values (:mod:`kapi.validation`); errors carry kube's messages (``unable to parse requirement: ...``,
``found 'x', expected: ...``).

Field selectors (``pkg/fields/selector.go``) are a comma-separated AND of
``field=value``, ``field==value``, ``field!=value`` terms with ``\\``, ``,``
and ``=`` escaped by a backslash in values. Which fields exist is the
resource's business: :func:`parse_field_selector` takes the kind's
:class:`FieldLabels` (its field label conversion) and refuses the other fields
with that conversion's message.

Both parsers raise :class:`SelectorError` (a ValueError); the storage service
turns it into a 400 BadRequest. Reference: "Labels and Selectors" and "Field
Selectors" in the Kubernetes documentation.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field

from kapi.validation import is_qualified_name, is_valid_label_value

__all__ = [
    "DEFAULT_FIELD_LABELS",
    "FieldLabels",
    "FieldRequirement",
    "FieldSelector",
    "LabelSelector",
    "Requirement",
    "SelectorError",
    "parse_field_selector",
    "parse_label_selector",
]


class SelectorError(ValueError):
    """A selector that does not parse or names an unsupported field; ``str()`` is kube's message."""


def _go_quote(value: object) -> str:
    text = str(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# --------------------------------------------------------------- label selectors

EXISTS, DOES_NOT_EXIST, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, IN, NOT_IN, GREATER_THAN, LESS_THAN = (
    "exists", "!", "=", "==", "!=", "in", "notin", "gt", "lt")
_BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)


@dataclass(frozen=True)
class Requirement:
    """One label requirement: ``key``, ``operator`` (one of the module constants) and sorted ``values``."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfies this requirement (labels.Requirement.Matches)."""
        op = self.operator
        if op in (EQUALS, DOUBLE_EQUALS, IN):
            return self.key in labels and labels[self.key] in self.values
        if op in (NOT_EQUALS, NOT_IN):
            return self.key not in labels or labels[self.key] not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GREATER_THAN, LESS_THAN):
            if self.key not in labels:
                return False
            try:
                have, want = int(labels[self.key]), int(self.values[0])
            except ValueError:
                return False
            return have > want if op == GREATER_THAN else have < want
        return False

    def __str__(self) -> str:
        if self.operator == EXISTS:
            return self.key
        if self.operator == DOES_NOT_EXIST:
            return "!" + self.key
        if self.operator in (IN, NOT_IN):
            return f"{self.key} {self.operator} ({','.join(self.values)})"
        symbol = {GREATER_THAN: ">", LESS_THAN: "<"}.get(self.operator, self.operator)
        return f"{self.key}{symbol}{self.values[0]}"


@dataclass(frozen=True)
class LabelSelector:
    """An AND of :class:`Requirement`; no requirements selects everything."""

    requirements: tuple[Requirement, ...] = ()

    @property
    def empty(self) -> bool:
        """True when the selector selects everything (labels.Selector.Empty)."""
        return not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Whether an object with ``labels`` (None = no labels) is selected."""
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


# Tokens of the label selector lexer (labels.Lexer).
_IDENT, _DOES_NOT_EXIST, _NOT_EQUALS, _OPEN, _CLOSE, _COMMA, _EQUALS, _DOUBLE_EQUALS, _GT, _LT, _IN, _NOT_IN, _END = (
    range(13))
_SYMBOLS = {"!": _DOES_NOT_EXIST, "!=": _NOT_EQUALS, "(": _OPEN, ")": _CLOSE, ",": _COMMA, "=": _EQUALS,
            "==": _DOUBLE_EQUALS, ">": _GT, "<": _LT}
_SPECIAL = set("=!(),><")


def _lex(text: str) -> list[tuple[int, str]]:
    tokens: list[tuple[int, str]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        if ch in _SPECIAL:
            two = text[i:i + 2]
            if two in _SYMBOLS:
                tokens.append((_SYMBOLS[two], two))
                i += 2
            else:
                tokens.append((_SYMBOLS[ch], ch))
                i += 1
            continue
        j = i
        while j < n and not text[j].isspace() and text[j] not in _SPECIAL:
            j += 1
        word = text[i:j]
        tokens.append(({"in": _IN, "notin": _NOT_IN}.get(word, _IDENT), word))
        i = j
    tokens.append((_END, ""))
    return tokens


class _LabelParser:
    """Recursive-descent parser mirroring labels.Parser, including its error messages."""

    def __init__(self, text: str):
        self.tokens = _lex(text)
        self.pos = 0

    def _lookahead(self, values: bool) -> tuple[int, str]:
        tok, lit = self.tokens[self.pos]
        if values and tok in (_IN, _NOT_IN):
            tok = _IDENT  # "in"/"notin" are plain identifiers where values are expected
        return tok, lit

    def _consume(self, values: bool) -> tuple[int, str]:
        tok, lit = self._lookahead(values)
        if self.pos < len(self.tokens) - 1:
            self.pos += 1
        return tok, lit

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            tok, lit = self._lookahead(True)
            if tok in (_IDENT, _DOES_NOT_EXIST):
                try:
                    requirements.append(self._requirement())
                except SelectorError as exc:
                    raise SelectorError(f"unable to parse requirement: {exc}") from None
                tok, lit = self._consume(True)
                if tok == _END:
                    return requirements
                if tok == _COMMA:
                    tok2, lit2 = self._lookahead(True)
                    if tok2 not in (_IDENT, _DOES_NOT_EXIST):
                        raise SelectorError(f"found '{lit2}', expected: identifier after ','")
                    continue
                raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            if tok == _END:
                return requirements
            raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def _requirement(self) -> Requirement:
        operator = ""
        tok, key = self._consume(True)
        if tok == _DOES_NOT_EXIST:
            operator = DOES_NOT_EXIST
            tok, key = self._consume(True)
        if tok != _IDENT:
            raise SelectorError(f"found '{key}', expected: identifier")
        key_errs = is_qualified_name(key)
        if key_errs:
            raise SelectorError(f"<nil>: Invalid value: {_go_quote(key)}: {'; '.join(key_errs)}")
        if self._lookahead(True)[0] in (_END, _COMMA) and operator != DOES_NOT_EXIST:
            operator = EXISTS
        if operator in (EXISTS, DOES_NOT_EXIST):
            return _new_requirement(key, operator, [])
        tok, lit = self._consume(False)
        ops = {_IN: IN, _NOT_IN: NOT_IN, _EQUALS: EQUALS, _DOUBLE_EQUALS: DOUBLE_EQUALS, _NOT_EQUALS: NOT_EQUALS,
               _GT: GREATER_THAN, _LT: LESS_THAN}
        if tok not in ops:
            raise SelectorError(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        operator = ops[tok]
        values = self._set_values() if operator in (IN, NOT_IN) else self._exact_value()
        return _new_requirement(key, operator, sorted(values))

    def _set_values(self) -> set[str]:
        tok, lit = self._consume(True)
        if tok != _OPEN:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self._lookahead(True)
        if tok in (_IDENT, _COMMA):
            values = self._identifiers()
            tok, _ = self._consume(True)
            if tok != _CLOSE:
                raise SelectorError(f"found '{lit}', expected: ')'")
            return values
        if tok == _CLOSE:
            self._consume(True)
            return {""}
        raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")

    def _identifiers(self) -> set[str]:
        values: set[str] = set()
        while True:
            tok, lit = self._consume(True)
            if tok == _IDENT:
                values.add(lit)
                tok2, lit2 = self._lookahead(True)
                if tok2 == _COMMA:
                    continue
                if tok2 == _CLOSE:
                    return values
                raise SelectorError(f"found '{lit2}', expected: ',' or ')'")
            if tok == _COMMA:  # "(," ",)" ",," stand for empty values
                if not values:
                    values.add("")
                tok2, _ = self._lookahead(True)
                if tok2 == _CLOSE:
                    values.add("")
                    return values
                if tok2 == _COMMA:
                    self._consume(True)
                    values.add("")
                continue
            raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def _exact_value(self) -> set[str]:
        tok, _ = self._lookahead(True)
        if tok in (_END, _COMMA):
            return {""}
        tok, lit = self._consume(True)
        if tok == _IDENT:
            return {lit}
        raise SelectorError(f"found '{lit}', expected: identifier")


def _new_requirement(key: str, operator: str, values: list[str]) -> Requirement:
    """labels.NewRequirement: validate the key, the value count for ``operator`` and every value."""
    errs: list[str] = []
    key_errs = is_qualified_name(key)
    if key_errs:
        errs.append(f"key: Invalid value: {_go_quote(key)}: {'; '.join(key_errs)}")
    shown = "[" + " ".join(values) + "]"
    if operator in (IN, NOT_IN) and not values:
        errs.append(f"values: Invalid value: {shown}: for 'in', 'notin' operators, values set can't be empty")
    if operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS) and len(values) != 1:
        errs.append(f"values: Invalid value: {shown}: exact-match compatibility requires one single value")
    if operator in (GREATER_THAN, LESS_THAN):
        if len(values) != 1:
            errs.append(f"values: Invalid value: {shown}: for 'Gt', 'Lt' operators, exactly one value is required")
        for i, value in enumerate(values):
            try:
                int(value, 10)
            except ValueError:
                errs.append(f"values[{i}]: Invalid value: {_go_quote(value)}: "
                            "for 'Gt', 'Lt' operators, the value must be an integer")
    for i, value in enumerate(values):
        value_errs = is_valid_label_value(value)
        if value_errs:
            errs.append(f"values[{i}][{key}]: Invalid value: {_go_quote(value)}: {'; '.join(value_errs)}")
    if errs:
        raise SelectorError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
    return Requirement(key, operator, tuple(values))


def parse_label_selector(text: str) -> LabelSelector:
    """Parse a label selector string (labels.Parse); "" selects everything.

    Raises :class:`SelectorError` with kube's message, e.g.
    ``unable to parse requirement: found '', expected: identifier`` or
    ``found ')', expected: !, identifier, or 'end of string'``.
    """
    return LabelSelector(tuple(_LabelParser(text).parse()))


# --------------------------------------------------------------- field selectors


@dataclass(frozen=True)
class FieldRequirement:
    """One field term: ``field`` equals (``operator`` "=") or differs from (``operator`` "!=") ``value``."""

    field: str
    operator: str
    value: str

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Whether ``fields`` satisfies the term; an absent field has the value ""."""
        have = fields.get(self.field, "")
        return have == self.value if self.operator == "=" else have != self.value


@dataclass(frozen=True)
class FieldSelector:
    """An AND of :class:`FieldRequirement`; no terms selects everything."""

    requirements: tuple[FieldRequirement, ...] = ()

    @property
    def empty(self) -> bool:
        """True when the selector selects everything (fields.Selector.Empty)."""
        return not self.requirements

    def text(self) -> str:
        """The selector as a fieldSelector string again (fields.Selector.String: values escaped by EscapeValue)."""
        def escape(value: str) -> str:
            return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")
        return ",".join(f"{r.field}{'!=' if r.operator == '!=' else '='}{escape(r.value)}" for r in self.requirements)

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Whether an object whose selectable fields are ``fields`` is selected."""
        return all(r.matches(fields) for r in self.requirements)

    def requires_exact_match(self, field: str) -> str | None:
        """The value ``field`` must equal for anything to match, or None (fields.Selector.RequiresExactMatch)."""
        for r in self.requirements:
            if r.field == field and r.operator == "=":
                return r.value
        return None


def _split_terms(text: str) -> list[str]:
    terms: list[str] = []
    start, escaped = 0, False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op):]
    return None


def _unescape(value: str) -> str:
    """fields.UnescapeValue: ``\\\\``, ``\\,`` and ``\\=`` are the only escapes; bare ``,`` or ``=`` is an error."""
    if "\\" not in value and "=" not in value and "," not in value:
        return value
    out: list[str] = []
    escaped = False
    for ch in value:
        if escaped:
            if ch not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            raise SelectorError(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if escaped:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


@dataclass(frozen=True)
class FieldLabels:
    """A kind's field label conversion (``Scheme.AddFieldLabelConversionFunc`` in kube's ``conversion.go`` files).

    ``accepted``: the labels a field selector may name; ``aliases``: labels
    accepted and renamed (a Pod's ``spec.host`` is ``spec.nodeName``);
    ``refusal``: the error for any other label, a ``str.format`` template with
    ``{label}`` (as is) and ``{quoted}`` (Go's ``%q``).
    """

    accepted: frozenset[str]
    aliases: Mapping[str, str] = dataclass_field(default_factory=dict)
    refusal: str = "field label not supported: {label}"

    def __contains__(self, label: object) -> bool:
        """Whether a field selector may name ``label`` (accepted as is or through an alias)."""
        return label in self.accepted or label in self.aliases

    def convert(self, label: str) -> str:
        """The label the objects' field set uses for ``label``; raises :class:`SelectorError` (kube's message)."""
        if label in self.aliases:
            return self.aliases[label]
        if label in self.accepted:
            return label
        raise SelectorError(self.refusal.format(label=label, quoted=_go_quote(label)))


#: runtime.DefaultMetaV1FieldSelectorConversion: the conversion of every kind that registers none
DEFAULT_FIELD_LABELS = FieldLabels(
    frozenset({"metadata.name", "metadata.namespace"}),
    refusal='{quoted} is not a known field selector: only "metadata.name", "metadata.namespace"')


def parse_field_selector(text: str, supported: Collection[str] | FieldLabels) -> FieldSelector:
    """Parse a field selector (fields.ParseSelector) and convert its fields with ``supported``.

    ``supported``: the kind's :class:`FieldLabels`, or a set of labels (converted as
    ``field label not supported: <field>`` refuses the others). "" selects
    everything. Raises :class:`SelectorError`: ``invalid selector: '<text>';
    can't understand '<term>'`` for a term with no operator, the conversion's
    refusal for a field it does not accept (kube's ListResource turns it into a
    400 BadRequest). Requirements name the converted labels.
    """
    labels = supported if isinstance(supported, FieldLabels) else FieldLabels(frozenset(supported))
    terms = sorted(_split_terms(text))
    requirements: list[FieldRequirement] = []
    for term in terms:
        if term == "":
            continue
        split = _split_term(term)
        if split is None:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{term}'")
        field, op, raw = split
        value = _unescape(raw)
        requirements.append(FieldRequirement(labels.convert(field), "!=" if op == "!=" else "=", value))
    return FieldSelector(tuple(requirements))


_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def label_selector_matches(selector: Mapping[str, object], labels: Mapping[str, str]) -> bool:
    """Whether a metav1.LabelSelector object (``matchLabels`` + ``matchExpressions``) selects ``labels``.

    As apimachinery's ``LabelSelectorAsSelector(...).Matches``: every
    ``matchLabels`` pair and every requirement must hold, and ``{}`` selects
    everything (callers decide what an absent selector means). Raises
    SelectorError for a requirement that is not an object or has an unknown
    operator (kube refuses to build such a selector).
    """
    pairs = selector.get("matchLabels")
    for key, value in (pairs.items() if isinstance(pairs, Mapping) else ()):
        if labels.get(key) != value:
            return False
    expressions = selector.get("matchExpressions")
    for expr in expressions if isinstance(expressions, list) else ():
        if not isinstance(expr, Mapping):
            raise SelectorError("a label selector requirement must be an object")
        key, op = str(expr.get("key") or ""), expr.get("operator")
        values = expr.get("values") if isinstance(expr.get("values"), list) else []
        if op not in _SELECTOR_OPERATORS:
            raise SelectorError(f"{_go_quote(op)} is not a valid label selector operator")
        present = key in labels
        if op == "In":
            ok = present and labels[key] in values  # type: ignore[operator]
        elif op == "NotIn":
            ok = not present or labels[key] not in values  # type: ignore[operator]
        else:
            ok = present == (op == "Exists")
        if not ok:
            return False
    return True
