"""kapi.duration: one Go-duration parser, lenient for flags and config files, strict for ?timeout=."""

from __future__ import annotations

import pytest

from kapi.duration import parse_duration


@pytest.mark.parametrize(("text", "lenient", "strict"), [
    ("32s", 32, 32),
    ("1m30s", 90, 90),
    ("500ms", 0.5, 0.5),
    ("1h", 3600, 3600),
    ("1.5s", 1.5, 1.5),
    ("10us", 1e-5, 1e-5),
    ("250µs", 2.5e-4, 2.5e-4),
    ("100ns", 1e-7, 1e-7),
    ("120", 120, None),  # plain seconds: flags only
    ("0", 0, None),
    (" 5m ", 300, None),  # white space: flags only
    ("", None, None),
    ("abc", None, None),
    ("5x", None, None),
    ("5s3", None, None),
    ("-5s", None, None),
    ("-1", None, None),
])
def test_parse_duration(text: str, lenient: float | None, strict: float | None) -> None:
    for expected, is_strict in ((lenient, False), (strict, True)):
        if expected is None:
            with pytest.raises(ValueError):
                parse_duration(text, strict=is_strict)
        else:
            assert parse_duration(text, strict=is_strict) == pytest.approx(expected)
