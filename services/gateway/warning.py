"""The request's warning recorder: the ``Warning`` headers of one response, success or refusal.

kube-apiserver keeps a recorder in the request context
(k8s.io/apiserver ``pkg/warning``, installed by
``pkg/endpoints/filters/warning.go`` WithWarningRecorder) and writes each
warning to the response headers as it is added, so every answer written
afterwards carries it: the object, and just as well the 422, 403 or 409
that refuses the request. kapi's recorder is the ``warnings`` list of the
request's :class:`~services.gateway.context.RequestContext` (the
:class:`~services.gateway.scope.RequestScope` shares it): a successful
answer adds it in ``RequestScope.respond``, a refusal in the panic-recovery
filter (services/gateway/filters/recovery.py). What a request gathers, in
the order kube adds it: a deprecated version's warning (before the handler
runs), unknown or duplicate fields under ``fieldValidation=Warn`` (decoding),
mutating webhooks' (even a denying one's), PrepareForCreate's, then, once
validation passed, WarningsOnCreate/WarningsOnUpdate's, validating webhooks'
and ValidatingAdmissionPolicies' (``rest.BeforeCreate``/``BeforeUpdate``, the
webhook dispatchers). A refusal by the admission service brings the
warnings gathered there in :attr:`kapi.errors.StatusError.warnings`.
"""

from __future__ import annotations

from collections.abc import Iterable

from aiohttp import web

# kube's warning recorder (k8s.io/apiserver pkg/endpoints/filters/warning.go): once the warnings of one response
# pass 4096 runes in all, each is cut to 256 runes, and those that still do not fit are dropped.
WARNINGS_TOTAL_RUNES = 4 * 1024
WARNING_ITEM_RUNES = 256


def quoted_header_text(text: str) -> str:
    """``text`` as the body of an HTTP quoted-string (RFC 9110 5.6.4), safe in any header.

    ``"`` and ``\\`` become quoted pairs; control characters (C0, DEL, C1),
    which no header may carry and which made aiohttp drop the connection
    after the response was committed, are written as Go's ``\\xNN`` escape
    (so a client reads ``\\x00``), as kube's ``%q`` of a field name shows them.
    """
    out = []
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif code < 0x20 and ch != "\t" or 0x7F <= code < 0xA0:
            out.append(f"\\\\x{code:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\ufffd")
        else:
            out.append(ch)
    return "".join(out)


def add_warnings(response: web.StreamResponse, warnings: Iterable[str]) -> None:
    """Add ``Warning: 299 - "<text>"`` headers (RFC 7234 warn-code 299, as kube-apiserver sends).

    Each text is escaped by :func:`quoted_header_text`; duplicates are sent
    once; past :data:`WARNINGS_TOTAL_RUNES` in all, each is truncated to
    :data:`WARNING_ITEM_RUNES` and the ones that no longer fit are dropped
    (kube's recorder), so no body can make the headers outgrow what Envoy
    relays (60 KiB).
    """
    unique = list(dict.fromkeys(t for t in warnings if t))
    if sum(len(t) for t in unique) > WARNINGS_TOTAL_RUNES:
        unique = [t[:WARNING_ITEM_RUNES] for t in unique]
    total = 0
    for text in unique:
        total += len(text)
        if total > WARNINGS_TOTAL_RUNES:
            break
        response.headers.add("Warning", f'299 - "{quoted_header_text(text)}"')
