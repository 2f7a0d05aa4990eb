"""QueueSet keeps its waiting-request and active-queue counts as the queues themselves say, through every change."""

from __future__ import annotations

import random

from services.flowcontrol.queueset import QueueSet, Request


def _walked(qs: QueueSet) -> tuple[int, int]:
    return sum(len(q.waiting) for q in qs.queues), sum(1 for q in qs.queues if q.active)


def test_counts_follow_enqueue_remove_start_finish() -> None:
    rng = random.Random(7)
    now = [0.0]
    qs = QueueSet(queues=8, hand_size=2, queue_length_limit=3, clock=lambda: now[0])
    waiting: list[Request] = []
    executing: list[Request] = []
    for step in range(3000):
        now[0] += rng.random() * 0.01
        op = rng.random()
        if op < 0.4:
            request = Request(f"fs{rng.randrange(5)}", f"u{rng.randrange(20)}", rng.randint(1, 3))
            if qs.enqueue(request):
                waiting.append(request)
        elif op < 0.6 and waiting:
            request = waiting.pop(rng.randrange(len(waiting)))
            assert qs.remove(request)
            assert not qs.remove(request)  # a second removal changes nothing
        elif op < 0.8:
            head = qs.peek()
            if head is not None:
                qs.start(head)
                waiting.remove(head)
                executing.append(head)
        elif executing:
            qs.finish(executing.pop(rng.randrange(len(executing))))
        assert (qs.waiting, qs.active_queues) == _walked(qs), step
    assert qs.waiting == len(waiting)
    for request in executing:
        qs.finish(request)
    for request in list(waiting):
        qs.remove(request)
    assert (qs.waiting, qs.active_queues) == (0, 0) == _walked(qs)
