"""kapi.gotime: Go's time.Parse for RFC3339 and RFC3339Micro, with Go's error texts."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kapi.gotime import RFC3339, RFC3339_MICRO, ParseError, parse, quote

L = '"2006-01-02T15:04:05Z07:00"'


@pytest.mark.parametrize(("value", "want"), [
    ("2026-12-03T10:00:00Z", (datetime(2026, 12, 3, 10, tzinfo=UTC), 0)),
    ("2026-12-03T1:00:00Z", (datetime(2026, 12, 3, 1, tzinfo=UTC), 0)),  # the hour may have one digit
    ("2026-12-03T10:00:00.5Z", (datetime(2026, 12, 3, 10, tzinfo=UTC), 500_000_000)),  # a fraction not in layout
    ("2026-12-03T10:00:00,25Z", (datetime(2026, 12, 3, 10, tzinfo=UTC), 250_000_000)),
    ("2026-12-03T10:00:00+05:30", (datetime(2026, 12, 3, 4, 30, tzinfo=UTC), 0)),
    ("2024-02-29T00:00:00Z", (datetime(2024, 2, 29, tzinfo=UTC), 0)),
    ("0000-01-01T00:00:00Z", None),  # Go reads year 0; Python cannot hold it
])
def test_what_go_accepts(value: str, want: object) -> None:
    assert parse(value, RFC3339) == want


@pytest.mark.parametrize(("value", "message"), [
    ("yesterday", f'parsing time "yesterday" as {L}: cannot parse "yesterday" as "2006"'),
    ("", f'parsing time "" as {L}: cannot parse "" as "2006"'),
    ("2026-12-03 10:00:00Z", f'parsing time "2026-12-03 10:00:00Z" as {L}: cannot parse " 10:00:00Z" as "T"'),
    ("2026-12-03T10:00:00", f'parsing time "2026-12-03T10:00:00" as {L}: cannot parse "" as "Z07:00"'),
    ("2026-12-03T10:00:00z", f'parsing time "2026-12-03T10:00:00z" as {L}: cannot parse "z" as "Z07:00"'),
    ("2026-1-03T10:00:00Z", f'parsing time "2026-1-03T10:00:00Z" as {L}: cannot parse "1-03T10:00:00Z" as "01"'),
    ("2026-13-03T10:00:00Z", 'parsing time "2026-13-03T10:00:00Z": month out of range'),
    ("2025-02-29T10:00:00Z", 'parsing time "2025-02-29T10:00:00Z": day out of range'),
    ("2026-12-03T24:00:00Z", 'parsing time "2026-12-03T24:00:00Z": hour out of range'),
    ("2026-12-03T10:60:00Z", 'parsing time "2026-12-03T10:60:00Z": minute out of range'),
    ("2026-12-03T10:00:60Z", 'parsing time "2026-12-03T10:00:60Z": second out of range'),
    ("2026-12-03T10:00:00+25:00", 'parsing time "2026-12-03T10:00:00+25:00": time zone offset hour out of range'),
    ("2026-12-03T10:00:00Zjunk", 'parsing time "2026-12-03T10:00:00Zjunk": extra text: "junk"'),
    ("2026-12-03T10:00:00*05:00",
     f'parsing time "2026-12-03T10:00:00*05:00" as {L}: cannot parse "*05:00" as "Z07:00"'),
])
def test_what_go_refuses(value: str, message: str) -> None:
    with pytest.raises(ParseError) as err:
        parse(value, RFC3339)
    assert str(err.value) == message


def test_micro_time_needs_exactly_six_fraction_digits() -> None:
    assert parse("2026-12-03T10:00:00.123456Z", RFC3339_MICRO) == (datetime(2026, 12, 3, 10, tzinfo=UTC),
                                                                   123_456_000)
    micro = '"2006-01-02T15:04:05.000000Z07:00"'
    for value, rest in (("2026-12-03T10:00:00Z", "Z"), ("2026-12-03T10:00:00.12Z", ".12Z")):
        with pytest.raises(ParseError) as err:
            parse(value, RFC3339_MICRO)
        assert str(err.value) == f'parsing time "{value}" as {micro}: cannot parse "{rest}" as ".000000"'


def test_quote_escapes_as_go_s_time_package() -> None:
    assert quote('a"b\\c') == '"a\\"b\\\\c"'
    assert quote("é\n") == '"\\xc3\\xa9\\x0a"'
