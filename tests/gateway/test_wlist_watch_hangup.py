"""A client hanging up mid-watch ends the watch quietly: aiohttp's ClientConnectionResetError ("Cannot write to
closing transport") becomes the handler's clean end, not an exception aiohttp logs as ERROR with a traceback
(kube's serveWatch just returns when the write fails)."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.client_exceptions import ClientConnectionResetError

from services.gateway.handlers import watch


class _ClosedResponse:
    async def write(self, data: bytes) -> None:
        raise ClientConnectionResetError("Cannot write to closing transport")


async def test_write_to_a_closed_client_is_a_clean_end() -> None:
    out: Any = object.__new__(watch._HttpOut)
    out.response = _ClosedResponse()
    with pytest.raises(watch._ClientGone):
        await out.send([b'{"type":"ADDED","object":{}}\n'])
