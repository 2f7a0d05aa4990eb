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
# would pass 4096 runes in all, each is cut to 256 runes, and no more are added once 4096 are written.
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

    Each text is escaped by :func:`quoted_header_text`. :func:`recorded_warnings` picks the texts as kube's
    recorder does (duplicates once, the size limits), so no body can make the headers outgrow what Envoy
    relays (60 KiB).
    """
    for text in recorded_warnings(warnings):
        response.headers.add("Warning", f'299 - "{quoted_header_text(text)}"')


def recorded_warnings(warnings: Iterable[str]) -> list[str]:
    """The warning texts kube's recorder writes for ``warnings`` added in this order
    (k8s.io/apiserver ``pkg/endpoints/filters/warning.go`` recorder.AddWarning).

    Empty texts and repeats are skipped. Texts are written whole while the runes written stay within
    :data:`WARNINGS_TOTAL_RUNES`; the first that would pass it turns truncation on: everything recorded so far,
    that one included, is written again cut to :data:`WARNING_ITEM_RUNES` each, and later texts (cut too) are
    added until the runes written reach the limit (the one that crosses it is still written).
    """
    recorded: set[str] = set()
    ordered: list[str] = []
    written: list[str] = []
    total, truncating = 0, False
    for text in warnings:
        if truncating and total >= WARNINGS_TOTAL_RUNES:
            break
        if not text or text in recorded:
            continue
        recorded.add(text)
        ordered.append(text)
        if truncating:
            text = text[:WARNING_ITEM_RUNES]
        if truncating or total + len(text) <= WARNINGS_TOTAL_RUNES:
            total += len(text)
            written.append(text)
            continue
        truncating = True
        written = [item[:WARNING_ITEM_RUNES] for item in ordered]
        total = sum(len(item) for item in written)
    return written
