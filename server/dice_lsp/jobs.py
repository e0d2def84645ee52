"""Background work, so the event loop never waits: per-key debounced tasks (a newer request
cancels the older one), a process pool for nvcc jobs, and threads for streaming generation."""
from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import multiprocessing
import multiprocessing.pool
import os
import sys
import tempfile
import threading
import uuid
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable, Hashable, Iterator, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


def _worker_init() -> None:
    """Worker stdout is the client's protocol pipe: send anything printed there to stderr.
    A worker stops its nvcc when terminated and cleans up when the server dies (cleanup.py)."""
    from .cleanup import guard_worker

    os.dup2(2, 1)
    sys.stdout = sys.stderr
    guard_worker()


class CancelFlag:
    """A cancellation a worker process can see: a file (in the server's own temporary
    directory) that exists once the job is cancelled. The worker polls `is_set(path)`."""

    def __init__(self) -> None:
        self.path = os.path.join(tempfile.gettempdir(), f"cancel-{uuid.uuid4().hex}")

    def set(self) -> None:
        Path(self.path).touch()

    @staticmethod
    def is_set(path: str) -> bool:
        return os.path.exists(path)


class Debouncer:
    """At most one pending task per key; scheduling again cancels the pending one."""

    def __init__(self) -> None:
        self._tasks: dict[Hashable, asyncio.Task[Any]] = {}

    def schedule(self, key: Hashable, delay_s: float,
                 work: Callable[[], Awaitable[Any]]) -> asyncio.Task[Any]:
        self.cancel(key)

        async def run() -> None:
            await asyncio.sleep(delay_s)
            try:
                await work()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("background job %r failed", key)

        task = asyncio.get_running_loop().create_task(run())
        self._tasks[key] = task
        task.add_done_callback(lambda t: self._tasks.pop(key, None) if self._tasks.get(key) is t else None)
        return task

    def cancel(self, key: Hashable) -> None:
        task = self._tasks.pop(key, None)
        if task is not None:
            task.cancel()

    def cancel_matching(self, predicate: Callable[[Hashable], bool]) -> None:
        for key in [k for k in self._tasks if predicate(k)]:
            self.cancel(key)

    def cancel_all(self) -> None:
        self.cancel_matching(lambda _key: True)


class Workers:
    """The process pool (compile jobs) and the thread pool (generation streams)."""

    def __init__(self, processes: int | None = None, threads: int = 4) -> None:
        self._processes = processes or max(1, min(2, os.cpu_count() or 1))
        # multiprocessing's Pool, not ProcessPoolExecutor: `terminate()` ends a running nvcc
        # job at shutdown instead of waiting for it.
        self._process_pool: multiprocessing.pool.Pool | None = None
        # Generation streams hold a thread for their whole run; quick jobs (static pass, intents,
        # outline) get threads of their own so a hover never queues behind a generation.
        self._thread_pool = concurrent.futures.ThreadPoolExecutor(threads, thread_name_prefix="dice-gen")
        self._quick_pool = concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="dice-quick")

    def _pool(self) -> multiprocessing.pool.Pool:
        if self._process_pool is None:
            self._process_pool = multiprocessing.get_context("spawn").Pool(self._processes, _worker_init)
        return self._process_pool

    async def in_process(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a picklable top-level function in a worker process."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()

        def settle(setter: Callable[[Any], None], value: Any) -> None:
            if not future.done():
                setter(value)

        self._pool().apply_async(
            fn, args,
            callback=lambda value: loop.call_soon_threadsafe(settle, future.set_result, value),
            error_callback=lambda exc: loop.call_soon_threadsafe(settle, future.set_exception, exc))
        return await future

    def warm_up(self, fn: Callable[[], None]) -> None:
        """Start the worker processes now (spawn + imports), not on the first real job."""
        for _ in range(self._processes):
            self._pool().apply_async(fn)

    async def in_thread(self, fn: Callable[..., T], *args: Any) -> T:
        """A job of milliseconds to a few seconds (static pass, intents, outline)."""
        return await asyncio.get_running_loop().run_in_executor(self._quick_pool, fn, *args)

    async def in_background(self, fn: Callable[..., T], *args: Any) -> T:
        """A long job (GPU probe, GPU checks on save), beside the generation streams."""
        return await asyncio.get_running_loop().run_in_executor(self._thread_pool, fn, *args)

    async def stream(self, produce: Callable[[], Iterator[T]], stop: asyncio.Event) -> AsyncIterator[T]:
        """Iterate `produce()` on a worker thread, handing each item to the loop as it comes.
        Setting `stop` ends the iteration at once; the thread finishes on its own (the
        producer is expected to watch the same cancellation)."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

        def pump() -> None:
            try:
                for item in produce():
                    loop.call_soon_threadsafe(queue.put_nowait, ("item", item))
            except BaseException as exc:  # handed to the awaiting side, which re-raises it
                loop.call_soon_threadsafe(queue.put_nowait, ("error", exc))
            else:
                loop.call_soon_threadsafe(queue.put_nowait, ("done", None))

        self._thread_pool.submit(pump)
        stopped = asyncio.ensure_future(stop.wait())
        try:
            while True:
                got = asyncio.ensure_future(queue.get())
                await asyncio.wait((got, stopped), return_when=asyncio.FIRST_COMPLETED)
                if not got.done():
                    got.cancel()
                    return
                kind, value = got.result()
                if kind == "item":
                    yield value
                elif kind == "error":
                    raise value
                else:
                    return
        finally:
            stopped.cancel()

    async def shutdown(self, timeout_s: float = 5.0) -> None:
        """Terminate the workers (each stops its nvcc on SIGTERM, see cleanup.py) off the event
        loop; a pool that does not wind down in time has its workers killed outright."""
        pool, self._process_pool = self._process_pool, None
        self._thread_pool.shutdown(wait=False, cancel_futures=True)
        self._quick_pool.shutdown(wait=False, cancel_futures=True)
        if pool is None:
            return
        workers = list(getattr(pool, "_pool", []))
        ending = threading.Thread(target=pool.terminate, name="dice-pool-terminate", daemon=True)
        ending.start()
        await asyncio.get_running_loop().run_in_executor(None, ending.join, timeout_s)
        if ending.is_alive():
            log.warning("the worker pool did not end within %.0f s: killing its workers", timeout_s)
            for worker in workers:
                if worker.is_alive():
                    worker.kill()


class CancelScope:
    """A threading.Event the engine polls between rounds, its twin for the event loop, and
    the reason they were set. `cancel` is called on the loop thread."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.stopped = asyncio.Event()
        self.reason: str | None = None

    def cancel(self, reason: str) -> None:
        if not self.event.is_set():
            self.reason = reason
            self.event.set()
            self.stopped.set()

    @property
    def cancelled(self) -> bool:
        return self.event.is_set()
