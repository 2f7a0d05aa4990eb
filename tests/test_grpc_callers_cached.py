"""The caller check holds on every call of a method, also after an admitted caller's call (the wrapped handler is
kept per method, kapi/grpcutil.py CallerInterceptor): admitted, refused, admitted again on one server."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from kapi import grpcutil
from tests.test_grpc_callers import CALLS, HANDLERS, invoke, start, state, tls_for

__all__ = ["state"]  # the module-scoped PKI fixture, shared


@pytest.mark.parametrize("method", list(HANDLERS))
async def test_a_refusal_after_admitted_calls_of_the_same_method(state: Path, method: str) -> None:
    server, address = await start(state, frozenset({"kapi-gateway"}))
    try:
        CALLS.clear()
        for round_ in range(2):
            async with grpcutil.channel(address, tls_for(state, "kapi-gateway")) as channel:
                assert b"".join(await invoke(channel, method)) in (b"x", b"xx")
                assert b"".join(await invoke(channel, method)) in (b"x", b"xx")
            async with grpcutil.channel(address, tls_for(state, "mallory")) as channel:
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await invoke(channel, method, sent=0)
                assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED, round_
        assert CALLS == [method] * 4  # the refused calls never ran
    finally:
        await server.stop(0)
