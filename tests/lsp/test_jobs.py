"""Debounce, cancellation and thread streaming: the pieces that keep the event loop free."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest

from dice_lsp.jobs import CancelScope, Debouncer, Workers


async def test_a_newer_schedule_cancels_the_pending_one():
    ran: list[int] = []
    debouncer = Debouncer()
    for i in range(5):
        async def work(i=i) -> None:
            ran.append(i)
        debouncer.schedule("doc", 0.02, work)
    await asyncio.sleep(0.1)
    assert ran == [4]


async def test_cancel_matching_only_touches_its_keys():
    ran: list[str] = []
    debouncer = Debouncer()
    for key in (("static", "a"), ("compile", "a"), ("static", "b")):
        async def work(key=key) -> None:
            ran.append(key)
        debouncer.schedule(key, 0.02, work)
    debouncer.cancel_matching(lambda key: key[1] == "a")
    await asyncio.sleep(0.1)
    assert ran == [("static", "b")]


async def test_stream_yields_items_while_the_loop_stays_free():
    workers = Workers(processes=1)
    scope = CancelScope()

    def produce():
        for i in range(3):
            time.sleep(0.05)
            yield i

    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    task = asyncio.create_task(ticker())
    got = [item async for item in workers.stream(produce, scope.stopped)]
    task.cancel()
    await workers.shutdown()
    assert got == [0, 1, 2] and ticks > 10


async def test_cancel_ends_the_stream_at_once_and_the_producer_sees_it():
    workers = Workers(processes=1)
    scope = CancelScope()
    saw_cancel = threading.Event()

    def produce():
        yield "first"
        while not scope.event.wait(0.01):
            pass
        saw_cancel.set()

    got = []
    async for item in workers.stream(produce, scope.stopped):
        got.append(item)
        scope.cancel("because")
    await workers.shutdown()
    assert got == ["first"] and scope.reason == "because"
    assert await asyncio.to_thread(saw_cancel.wait, 2)


async def test_producer_errors_reach_the_consumer():
    workers = Workers(processes=1)

    def produce():
        yield 1
        raise ValueError("engine failed")

    with pytest.raises(ValueError, match="engine failed"):
        async for _ in workers.stream(produce, CancelScope().stopped):
            pass
    await workers.shutdown()
