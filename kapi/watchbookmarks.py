"""When a watch with ``allowWatchBookmarks`` gets its periodic BOOKMARK, as kube's watch cache schedules it.

kube's cacheWatcher.nextBookmarkTime (staging/src/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go): a
bookmark roughly every ``BOOKMARK_FREQUENCY`` (cacher.go defaultBookmarkFrequency, a minute) and one right
before the watch's deadline, 2 s ahead of it, "so that on timeout the watcher is as close to now as possible";
none once that moment has passed. The cacher sends it at the cache's latest resourceVersion, and only when that
is past the resourceVersion the watch started from (cacheWatcher.process: ``event.ResourceVersion >
resourceVersion``). Shared by the storage watch cache (a watch of its own) and the gateway's watch fan-out (a
watch sharing an upstream).
"""

from __future__ import annotations

BOOKMARK_FREQUENCY = 60.0  # seconds, cacher.go defaultBookmarkFrequency
PRE_TIMEOUT = 2.0  # seconds before the watch's deadline (cache_watcher.go nextBookmarkTime)


def next_bookmark_time(now: float, deadline: float | None) -> float | None:
    """The next time (same clock as ``now``, seconds) a bookmarking watch ending at ``deadline`` (None: no
    deadline) gets a bookmark: ``now + BOOKMARK_FREQUENCY``, or ``deadline - PRE_TIMEOUT`` if earlier; None
    when that is not after ``now`` (no more bookmarks before the deadline; called at the pre-timeout bookmark
    itself it ends the schedule)."""
    heartbeat = now + BOOKMARK_FREQUENCY
    if deadline is None:
        return heartbeat
    heartbeat = min(heartbeat, deadline - PRE_TIMEOUT)
    return None if heartbeat <= now else heartbeat
