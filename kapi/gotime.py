"""Go's ``time.Parse`` for the two layouts kube's API times use, with Go's error texts.

``metav1.Time.UnmarshalJSON`` parses with ``time.RFC3339`` (``2006-01-02T15:04:05Z07:00``) and
``metav1.MicroTime.UnmarshalJSON`` with ``RFC3339Micro`` (``2006-01-02T15:04:05.000000Z07:00``); a string
either refuses is the decoder's error, which kube's handlers answer as a 400 (``ConfigMap in version "v1"
cannot be handled as a ConfigMap: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse
"yesterday" as "2006"``). :func:`parse` follows Go's ``time.parse`` (src/time/format.go) for those layouts:
the layout's chunks in order, a literal prefix skipped, each element read (a one- or two-digit hour, a
fraction after the seconds even where the layout has none, ``Z`` or ``±hh:mm``), range checks, extra text,
and the day of the month checked last.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"

# each layout as (literal prefix, element) chunks, as Go's nextStdChunk splits it
_CHUNKS = {
    RFC3339: (("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"), (":", "05"), ("", "Z07:00")),
    RFC3339_MICRO: (("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"), (":", "05"),
                    ("", ".000000"), ("", "Z07:00")),
}
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


class ParseError(ValueError):
    """Go's ``*time.ParseError``; ``str()`` is its ``Error()`` text."""


def quote(s: str) -> str:
    """Go's ``time.quote``: double quotes, ``"`` and ``\\`` escaped, each byte of a control or non-ASCII
    character as ``\\xNN``."""
    out = ['"']
    for ch in s:
        if ord(ch) < 0x20 or ord(ch) >= 0x80:
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))
        else:
            out.append("\\" + ch if ch in '"\\' else ch)
    out.append('"')
    return "".join(out)


def _error(layout: str, value: str, layout_elem: str, value_elem: str, message: str = "") -> ParseError:
    if message:
        return ParseError(f"parsing time {quote(value)}{message}")
    return ParseError(f"parsing time {quote(value)} as {quote(layout)}: cannot parse {quote(value_elem)} as "
                      f"{quote(layout_elem)}")


def _digit(s: str, i: int) -> bool:
    return i < len(s) and "0" <= s[i] <= "9"


def _getnum(s: str, fixed: bool) -> tuple[int, str] | None:
    if not _digit(s, 0):
        return None
    if not _digit(s, 1):
        return None if fixed else (int(s[0]), s[1:])
    return int(s[:2]), s[2:]


def _atoi(s: str) -> int | None:
    """Go's time.atoi: an optional sign, then decimal digits only."""
    sign = -1 if s[:1] == "-" else 1
    digits = s[1:] if s[:1] in ("-", "+") else s
    if not digits or not all("0" <= c <= "9" for c in digits):
        return None
    return sign * int(digits)


def _nanoseconds(value: str, nbytes: int) -> tuple[int | None, str]:
    """Go's parseNanoseconds: (nanoseconds or None for a bad fraction, range error name or "")."""
    if value[0] not in ".,":
        return None, ""
    nbytes = min(nbytes, 10)
    ns = _atoi(value[1:nbytes])
    if ns is None:
        return None, ""
    if ns < 0:
        return 0, "fractional second"
    return ns * 10 ** (10 - nbytes), ""


def parse(value: str, layout: str = RFC3339) -> tuple[datetime, int] | None:
    """``value`` as Go's ``time.Parse(layout, value)`` reads it: (the UTC time to the second, nanoseconds);
    None when Go accepts it but Python's datetime cannot hold it (year 0). Raises :class:`ParseError` with Go's
    message when Go refuses it. ``layout``: :data:`RFC3339` or :data:`RFC3339_MICRO`."""
    rest = value
    year = month = day = hour = minute = second = nanos = 0
    offset: int | None = None
    chunks = _CHUNKS[layout]
    for index, (prefix, elem) in enumerate(chunks):
        if not rest.startswith(prefix):
            raise _error(layout, value, prefix, rest)
        rest = rest[len(prefix):]
        hold, bad, range_err = rest, False, ""
        if elem == "2006":
            number = _atoi(rest[:4]) if len(rest) >= 4 and _digit(rest, 0) else None
            bad = number is None
            if number is not None:
                year, rest = number, rest[4:]
        elif elem in ("01", "02", "04", "05", "15"):
            got = _getnum(rest, elem != "15")
            if got is None:
                bad = True
            else:
                number, rest = got
                if elem == "01":
                    month = number
                    range_err = "month" if not 1 <= month <= 12 else ""
                elif elem == "02":
                    day = number
                elif elem == "15":
                    hour = number
                    range_err = "hour" if hour >= 24 else ""
                elif elem == "04":
                    minute = number
                    range_err = "minute" if minute >= 60 else ""
                else:
                    second = number
                    if second >= 60:
                        range_err = "second"
                    elif len(rest) >= 2 and rest[0] in ".," and _digit(rest, 1) and chunks[index + 1][1] != ".000000":
                        n = 2
                        while _digit(rest, n):
                            n += 1
                        ns, range_err = _nanoseconds(rest, n)
                        bad = ns is None
                        nanos, rest = ns or 0, rest[n:]
        elif elem == ".000000":
            if len(rest) < 7:
                bad = True
            else:
                ns, range_err = _nanoseconds(rest, 7)
                bad = ns is None
                nanos, rest = ns or 0, rest[7:]
        else:  # Z07:00
            if rest[:1] == "Z":
                rest, offset = rest[1:], 0
            elif len(rest) < 6 or rest[3] != ":":
                bad = True
            else:
                sign, hh, mm, rest = rest[0], rest[1:3], rest[4:6], rest[6:]
                hours, minutes = _getnum(hh, True), _getnum(mm, True)
                if hours is None or minutes is None:
                    bad = True
                else:
                    if hours[0] > 24:
                        range_err = "time zone offset hour"
                    if minutes[0] > 60:
                        range_err = "time zone offset minute"
                    offset = (hours[0] * 60 + minutes[0]) * 60
                    if sign == "-":
                        offset = -offset
                    elif sign != "+":
                        bad = True
        if range_err:
            raise _error(layout, value, elem, rest, f": {range_err} out of range")
        if bad:
            raise _error(layout, value, elem, hold)
    if rest:
        raise _error(layout, value, "", rest, f": extra text: {quote(rest)}")
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if day < 1 or day > (29 if month == 2 and leap else _DAYS[month - 1]):
        raise _error(layout, value, "", rest, ": day out of range")
    if year == 0:
        return None
    t = datetime(year, month, day, hour, minute, second, tzinfo=UTC) - timedelta(seconds=offset or 0)
    return t, nanos
