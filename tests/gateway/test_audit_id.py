"""New audit IDs are random version-4 UUIDs in the canonical form (kube's uuid.New().String())."""

from __future__ import annotations

import uuid

from services.gateway.filters.recovery import new_audit_id


def test_new_audit_ids_are_canonical_random_v4_uuids() -> None:
    ids = [new_audit_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    for text in ids:
        parsed = uuid.UUID(text)
        assert str(parsed) == text and len(text) == 36
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
    # every non-fixed bit varies across the sample (122 random bits, as uuid4)
    values = [uuid.UUID(t).int for t in ids]
    fixed = (0xF << 76) | (0x3 << 62)
    varying = 0
    for v in values:
        varying |= v ^ values[0]
    assert varying == ((1 << 128) - 1) & ~fixed
