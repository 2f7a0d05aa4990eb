"""kapi.watchbookmarks: kube's cacheWatcher.nextBookmarkTime (about every minute, and 2 s before the deadline)."""

from __future__ import annotations

import pytest

from kapi.watchbookmarks import BOOKMARK_FREQUENCY, PRE_TIMEOUT, next_bookmark_time


@pytest.mark.parametrize(("now", "deadline", "expected"), [
    (100.0, None, 100.0 + BOOKMARK_FREQUENCY),  # no deadline: the heartbeat
    (100.0, 1000.0, 100.0 + BOOKMARK_FREQUENCY),  # the deadline is far: the heartbeat first
    (100.0, 110.0, 110.0 - PRE_TIMEOUT),  # a 10 s watch: 2 s before its end
    (108.0, 110.0, None),  # at the pre-timeout bookmark itself: no more
    (100.0, 101.0, None),  # a watch shorter than 2 s: none
])
def test_next_bookmark_time(now: float, deadline: float | None, expected: float | None) -> None:
    assert next_bookmark_time(now, deadline) == expected
