"""Dynamic batching for the HTTP service: concurrent requests' documents go through one :class:`Deidentifier` together,
in slices that take turns, on one model thread; a call whose requests have all ended stops before its next forward
pass."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from thunder.deid.pipeline import Deidentifier, DeidResult
from thunder.deid.triage import Triage, TriageRule
from thunder.service.bodies import RequestError

log = logging.getLogger("thunder.service")  # the service's log: batching is part of it


class Cancelled(Exception):
    """Every request of the running batch has ended: the model stops before its next forward pass."""
@dataclass(eq=False)
class _Job:
    """One request's documents; its slices go through the model in turn with other requests' slices."""

    texts: list[str]
    options: tuple[str | None, float | None]
    future: asyncio.Future
    results: list = field(default_factory=list)
    taken: int = 0  # documents handed to the model so far
    finished: int = 0


class Batcher:
    """Runs concurrent requests through the model together: up to ``max_batch_size`` documents per call,
    waiting at most ``max_wait`` seconds after the first for others to join; one call at a time, in a thread.

    A request with many documents is cut into slices that take turns with other requests'. When every request of
    the running call has ended (client gone, time limit, shutdown), the model stops before its next forward pass
    (a forward pre-hook), so abandoned work does not hold the model. With a ``triage`` rule the results carry
    possible misses and a risk (:class:`~thunder.deid.triage.TriagedResult`).
    """

    def __init__(self, deidentifier: Deidentifier, max_batch_size: int = 4, max_wait: float = 0.005,
                 triage: TriageRule | None = None) -> None:  # fmt: skip
        self.deidentifier, self.max_batch_size, self.max_wait = deidentifier, max_batch_size, max_wait
        self.triage = triage
        self._variants: collections.OrderedDict[tuple, Deidentifier] = collections.OrderedDict()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="thunder-model")
        self.calls = self.documents = self.characters = 0  # model calls made, documents and characters they held
        self.busy_seconds = 0.0
        self._pending: collections.deque[_Job] = collections.deque()
        self._running: list[_Job] = []
        self._abandoned = threading.Event()
        self._arrived: asyncio.Event | None = None
        self._task: asyncio.Task | None = None
        self._hook = None

    async def start(self) -> None:
        self._arrived = asyncio.Event()
        self._task = asyncio.create_task(self._loop())
        model = self.deidentifier.model
        if model is not None and hasattr(model, "register_forward_pre_hook"):
            self._hook = model.register_forward_pre_hook(self._check)

    async def stop(self) -> None:
        self._abandoned.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await asyncio.get_running_loop().run_in_executor(None, self._executor.shutdown)
        if self._hook is not None:
            self._hook.remove()

    def _check(self, *_: Any) -> None:
        if self._abandoned.is_set():
            raise Cancelled

    async def deidentify(self, texts: list[str], operator: str | None, threshold: float | None) -> list[DeidResult]:
        """The results of ``texts``, computed in batches with whatever other requests are waiting."""
        if not texts:
            return []
        job = _Job(list(texts), (operator, threshold), asyncio.get_running_loop().create_future())
        job.results = [None] * len(texts)
        job.future.add_done_callback(self._ended)
        self._pending.append(job)
        self._arrived.set()
        return await job.future  # cancelling the awaiting request cancels the future

    def _ended(self, _: asyncio.Future) -> None:
        if self._running and all(job.future.done() for job in self._running):
            self._abandoned.set()

    async def call(self, function: Any) -> Any:
        """Run ``function()`` on the model thread (work that must not block the event loop or race the model)."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, function)

    def variant(self, operator: str | None, threshold: float | None) -> Deidentifier:
        """The de-identifier with a request's operator (for every entity) and threshold, sharing the model."""
        key = (operator, threshold)
        if key not in self._variants:
            point = self.deidentifier.operating_point
            if threshold is not None:
                point = replace(point, threshold=threshold)
            self._variants[key] = self.deidentifier.at(point, operator)
            if len(self._variants) > 32:  # requests choose thresholds freely: keep the recent ones only
                self._variants.popitem(last=False)
        return self._variants[key]

    def _waiting(self) -> int:
        return sum(len(job.texts) - job.taken for job in self._pending if not job.future.done())

    def _take(self) -> list[tuple[_Job, int, int]]:
        """Slices ``(job, first, last)`` of at most ``max_batch_size`` documents in all, requests taking turns."""
        batch, room = [], self.max_batch_size
        for _ in range(len(self._pending)):
            if not room:
                break
            job = self._pending.popleft()
            if job.future.done():
                continue
            first = job.taken
            job.taken = min(len(job.texts), first + room)
            batch.append((job, first, job.taken))
            room -= job.taken - first
            if job.taken < len(job.texts):
                self._pending.append(job)  # the rest waits its turn behind the other requests
        return batch

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            while not self._waiting():
                self._pending.clear()
                self._arrived.clear()
                await self._arrived.wait()
            deadline = loop.time() + self.max_wait
            while self._waiting() < self.max_batch_size and (remaining := deadline - loop.time()) > 0:
                self._arrived.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._arrived.wait(), remaining)
            batch = self._take()
            self._running = [job for job, _, _ in batch]
            self._abandoned.clear()
            size = sum(last - first for _, first, last in batch)
            self.calls, self.documents = self.calls + 1, self.documents + size
            started = time.perf_counter()
            try:
                results = await loop.run_in_executor(self._executor, self._run, batch)
            except Cancelled:
                continue
            except Exception as error:  # noqa: BLE001 - reported to every waiting request, message never logged
                log.error("de-identification failed: %s", type(error).__name__)
                failure = RequestError(500, f"internal error while de-identifying ({type(error).__name__})")
                for job, _, _ in batch:
                    if not job.future.done():
                        job.future.set_exception(failure)
                continue
            finally:
                self._running = []
                self.busy_seconds += time.perf_counter() - started
            for (job, first, last), done in zip(batch, results):
                job.results[first:last] = done
                self.characters += sum(len(text) for text in job.texts[first:last])
                job.finished += last - first
                if job.finished == len(job.texts) and not job.future.done():
                    job.future.set_result(job.results)

    def _run(self, batch: list[tuple[_Job, int, int]]) -> list[list[DeidResult]]:
        """One model call per distinct (operator, threshold) among the slices."""
        groups: dict[tuple, list[int]] = {}
        for index, (job, _, _) in enumerate(batch):
            groups.setdefault(job.options, []).append(index)
        results: list[Any] = [None] * len(batch)
        for options, members in groups.items():
            texts = [text for i in members for text in batch[i][0].texts[batch[i][1] : batch[i][2]]]
            variant = self.variant(*options)
            done = iter((Triage(variant, self.triage) if self.triage else variant).deidentify_batch(texts))
            for i in members:
                results[i] = [next(done) for _ in range(batch[i][2] - batch[i][1])]
        return results

    def throughput(self) -> float | None:
        """Characters per second of the model calls so far (the review page's progress estimate)."""
        return round(self.characters / self.busy_seconds) if self.characters and self.busy_seconds else None
