"""HTTP de-identification service and review page (FastAPI + uvicorn; see docs/architecture.md for why not LitServe).

``create_app(deidentifier)`` builds the ASGI app, :func:`serve` runs it. Concurrent requests are collected by a
:class:`Batcher` and run through the model together in one worker thread, so the event loop stays free and the
model sees batches. No request or response text is ever logged: the access log carries method, route, status,
sizes and timings, and an error inside the pipeline is logged by its exception type alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any, Container, Iterator

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from thunder.deid import Deidentifier, DeidResult
from thunder.mapping import MappingKey
from thunder.operators import OPERATORS, OperatorChoice
from thunder.recognizers import ScoredSpan

REVIEW_DIR = Path(__file__).resolve().parent / "resources" / "review"
DRAIN_BYTES = 64 * 2**20  # an oversized request body up to this size is read and dropped before the 413
ROUTES = ("/", "/health", "/v1/labels", "/v1/deid", "/v1/deid/batch", "/v1/apply")
log = logging.getLogger("thunder.serve")


class RequestError(Exception):
    """A request refused with ``status`` and a reason that never quotes the request's text."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


# ----------------------------------------------------------------------------------------------- batching


class Batcher:
    """Runs concurrent requests through the model together: up to ``max_batch_size`` documents per call,
    waiting at most ``max_wait`` seconds after the first for others to join; one call at a time, in a thread."""

    def __init__(self, deidentifier: Deidentifier, max_batch_size: int = 4, max_wait: float = 0.005) -> None:
        self.deidentifier, self.max_batch_size, self.max_wait = deidentifier, max_batch_size, max_wait
        self._variants: dict[tuple[str | None, float | None], Deidentifier] = {}
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="thunder-model")
        self.calls = self.documents = 0  # model calls made and documents they held (mean batch size)
        self._queue: asyncio.Queue | None = None
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        self._queue = asyncio.Queue()
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._executor.shutdown(wait=True)

    async def deidentify(self, texts: list[str], operator: str | None, threshold: float | None) -> list[DeidResult]:
        """The results of ``texts``, computed in a batch with whatever other requests are waiting."""
        future = asyncio.get_running_loop().create_future()
        await self._queue.put((texts, (operator, threshold), future))
        return await future

    async def call(self, function: Any) -> Any:
        """Run ``function()`` on the model thread (work that must not block the event loop or race the model)."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, function)

    def variant(self, operator: str | None, threshold: float | None) -> Deidentifier:
        """The de-identifier with a request's operator (for every entity) and threshold, sharing the model."""
        key = (operator, threshold)
        if key not in self._variants:
            variant = copy.copy(self.deidentifier)
            if operator is not None:
                variant.operators = OperatorChoice(operator)
            if threshold is not None:
                variant.threshold = threshold
            self._variants[key] = variant
        return self._variants[key]

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            items = [await self._queue.get()]
            size, deadline = len(items[0][0]), loop.time() + self.max_wait
            while size < self.max_batch_size:
                if self._queue.empty():  # only then wait (the event loop may be busy answering the last batch)
                    if (remaining := deadline - loop.time()) <= 0:
                        break
                    try:
                        items.append(await asyncio.wait_for(self._queue.get(), remaining))
                    except asyncio.TimeoutError:
                        break
                else:
                    items.append(self._queue.get_nowait())
                size += len(items[-1][0])
            self.calls, self.documents = self.calls + 1, self.documents + size
            try:
                results = await loop.run_in_executor(self._executor, self._run, items)
            except Exception as error:  # noqa: BLE001 - reported to every waiting request, message never logged
                log.error("de-identification failed: %s", type(error).__name__)
                failure = RequestError(500, f"internal error while de-identifying ({type(error).__name__})")
                results = [failure] * len(items)
            for (_, _, future), result in zip(items, results):
                if future.done():  # the client went away
                    continue
                if isinstance(result, Exception):
                    future.set_exception(result)
                else:
                    future.set_result(result)

    def _run(self, items: list) -> list[list[DeidResult]]:
        """One model call per distinct (operator, threshold) among the waiting requests."""
        groups: dict[tuple, list[int]] = {}
        for index, (_, options, _) in enumerate(items):
            groups.setdefault(options, []).append(index)
        results: list[Any] = [None] * len(items)
        for options, members in groups.items():
            texts = [text for i in members for text in items[i][0]]
            done = iter(self.variant(*options).deidentify_batch(texts))
            for i in members:
                results[i] = [next(done) for _ in items[i][0]]
        return results


# ----------------------------------------------------------------------------------------------- requests


async def read_json(request: Request, limit: int) -> dict:
    """The request's JSON object; 413 past ``limit`` bytes, 400 for non-UTF-8 or malformed JSON."""
    too_large = RequestError(413, f"request body larger than the limit of {limit} bytes")
    declared = request.headers.get("content-length")
    if declared is not None and not declared.isdigit():
        raise RequestError(400, "bad Content-Length header")
    if declared is not None and int(declared) > DRAIN_BYTES:
        raise too_large  # answered at once; the connection closes
    body, seen = bytearray(), 0
    async for chunk in request.stream():  # an oversized body is read to its end (up to DRAIN_BYTES) and dropped,
        seen += len(chunk)  # so that the client, still sending, receives the 413
        if seen > DRAIN_BYTES:
            raise too_large
        if seen <= limit:
            body += chunk
    if seen > limit:
        raise too_large
    request.state.bytes_in = len(body)
    try:
        text = bytes(body).decode("utf-8")
    except UnicodeDecodeError as error:
        raise RequestError(400, f"request body is not valid UTF-8 (byte {error.start}: {error.reason})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise RequestError(400, f"malformed JSON: {error.msg} at line {error.lineno} column {error.colno}") from None
    if not isinstance(data, dict):
        raise RequestError(400, f"expected a JSON object, got {type(data).__name__}")
    return data


def _field(data: dict, name: str, kind: type | tuple, default: Any = None, required: bool = False) -> Any:
    if name not in data or data[name] is None:
        if required:
            raise RequestError(400, f"missing field {name!r}")
        return default
    value = data[name]
    if not isinstance(value, kind) or (kind in (int, float, (int, float)) and isinstance(value, bool)):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise RequestError(400, f"field {name!r} must be {names}, got {type(value).__name__}")
    return value


def _options(data: dict) -> tuple[str | None, float | None]:
    operator = _field(data, "operator", str)
    if operator is not None and operator not in OPERATORS:
        raise RequestError(400, f"unknown operator {operator!r}: one of {sorted(OPERATORS)}")
    threshold = _field(data, "threshold", (int, float))
    if threshold is not None and not 0 < threshold < 1:
        raise RequestError(400, f"threshold must lie strictly between 0 and 1, got {threshold}")
    return operator, None if threshold is None else float(threshold)


def _user_spans(data: dict, text: str, labels: Container[str]) -> list[ScoredSpan]:
    raw = _field(data, "spans", list, required=True)
    spans = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise RequestError(400, f"spans[{i}] must be an object with start, end and label")
        start, end = _field(item, "start", int, required=True), _field(item, "end", int, required=True)
        label = _field(item, "label", str, required=True)
        if label not in labels:
            raise RequestError(400, f"spans[{i}]: unknown label {label!r} (GET /v1/labels lists them)")
        if not 0 <= start < end <= len(text):
            raise RequestError(400, f"spans[{i}] [{start}, {end}) is not a range inside the text ({len(text)} chars)")
        score = float(_field(item, "score", (int, float), 1.0))
        spans.append(ScoredSpan(start, end, label, score, _field(item, "source", str, "reviewer")))
    return spans


def result_json(result: DeidResult) -> dict:
    return {"text": result.text, "spans": [asdict(span) for span in result.spans]}


# ----------------------------------------------------------------------------------------------- the app


def create_app(
    deidentifier: Deidentifier,
    *,
    max_request_bytes: int = 4 * 2**20,
    max_documents: int = 256,
    max_batch_size: int = 4,
    max_wait: float = 0.005,
    key: MappingKey | None = None,
    model_name: str | None = None,
) -> "AccessLog":
    """The service: ``GET /`` (review page), ``GET /health``, ``GET /v1/labels``, ``POST /v1/deid``,
    ``POST /v1/deid/batch``, ``POST /v1/apply``; wrapped in the access log."""
    from thunder.taxonomy import Taxonomy

    batcher = Batcher(deidentifier, max_batch_size, max_wait)
    taxonomy = deidentifier.label_set.taxonomy if deidentifier.label_set is not None else Taxonomy.load()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        await batcher.start()
        yield
        await batcher.stop()

    app = FastAPI(title="Thunder de-identification", lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url=None)  # fmt: skip

    @app.exception_handler(RequestError)
    async def refused(request: Request, error: RequestError) -> JSONResponse:
        return JSONResponse({"error": error.reason}, status_code=error.status)

    def wants_mapping(data: dict) -> bool:
        wanted = _field(data, "mapping", bool, False)
        if wanted and key is None:
            raise RequestError(400, "mapping requested, but the server was started without --key-file")
        return wanted

    async def seal(doc_id: str, text: str, result: DeidResult, wanted: bool) -> dict:
        if not wanted:
            return {}
        return {"mapping": await asyncio.to_thread(key.seal, doc_id, text, result)}  # off the event loop

    @app.get("/")
    async def page() -> FileResponse:
        headers = {"Content-Security-Policy": "default-src 'self'; img-src 'self' data:", "Cache-Control": "no-store"}
        return FileResponse(REVIEW_DIR / "index.html", headers=headers)

    @app.get("/health")
    async def health() -> dict:
        return {"status": "ok", "model": model_name, "recognizers": [r.name for r in deidentifier.recognizers],
                "max_request_bytes": max_request_bytes, "max_documents": max_documents,
                "batches": {"calls": batcher.calls, "documents": batcher.documents}}  # fmt: skip

    @app.get("/v1/labels")
    async def labels() -> dict:
        return {"labels": [{"name": label.name, "category": label.category, "tier1": label.tier1}
                           for label in taxonomy.labels.values()]}  # fmt: skip

    @app.post("/v1/deid")
    async def deid(request: Request) -> dict:
        data = await read_json(request, max_request_bytes)
        text, options, wanted = _field(data, "text", str, required=True), _options(data), wants_mapping(data)
        doc_id = _field(data, "id", str, "request")
        (result,) = await batcher.deidentify([text], *options)
        return {**result_json(result), **await seal(doc_id, text, result, wanted)}

    @app.post("/v1/deid/batch")
    async def deid_batch(request: Request) -> dict:
        data = await read_json(request, max_request_bytes)
        documents = _field(data, "documents", list, required=True)
        if len(documents) > max_documents:
            raise RequestError(413, f"{len(documents)} documents; at most {max_documents} per request")
        ids, texts = [], []
        for i, document in enumerate(documents):
            document = {"text": document} if isinstance(document, str) else document
            if not isinstance(document, dict) or not isinstance(document.get("text"), str):
                raise RequestError(400, f"documents[{i}] must be a string or an object with a string 'text'")
            ids.append(_field(document, "id", str, str(i)))
            texts.append(document["text"])
        options, wanted = _options(data), wants_mapping(data)
        results = await batcher.deidentify(texts, *options)
        return {"results": [{"id": i, **result_json(r), **await seal(i, t, r, wanted)}
                            for i, t, r in zip(ids, texts, results)]}  # fmt: skip

    @app.post("/v1/apply")
    async def apply(request: Request) -> dict:
        data = await read_json(request, max_request_bytes)
        text = _field(data, "text", str, required=True)
        spans, (operator, _) = _user_spans(data, text, taxonomy.labels), _options(data)
        wanted = wants_mapping(data)
        doc_id = _field(data, "id", str, "request")
        try:
            result = await batcher.call(lambda: batcher.variant(operator, None).apply(text, spans))
        except Exception as error:  # noqa: BLE001 - the message may quote the text: log the type only
            log.error("re-applying spans failed: %s", type(error).__name__)
            raise RequestError(500, f"internal error while re-applying spans ({type(error).__name__})") from None
        return {**result_json(result), **await seal(doc_id, text, result, wanted)}

    app.mount("/static", StaticFiles(directory=REVIEW_DIR), name="static")
    return AccessLog(app)


class AccessLog:
    """ASGI wrapper: one log line per request (method, route, status, bytes in/out, milliseconds), never the
    text; an exception escaping the app is logged by type only and answered with a 500."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started, status, sizes = time.perf_counter(), [0], [0, 0]

        async def counting_receive() -> dict:
            message = await receive()
            sizes[0] += len(message.get("body", b""))
            return message

        async def counting_send(message: dict) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            elif message["type"] == "http.response.body":
                sizes[1] += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, counting_receive, counting_send)
        except Exception as error:  # noqa: BLE001
            log.error("unhandled %s", type(error).__name__)
            if not status[0]:
                body = b'{"error": "internal server error"}'
                await counting_send({"type": "http.response.start", "status": 500,
                                     "headers": [(b"content-type", b"application/json")]})  # fmt: skip
                await counting_send({"type": "http.response.body", "body": body})
        path = scope["path"]
        route = path if path in ROUTES or path.startswith("/static/") and path.isascii() else "<other>"
        elapsed = 1000 * (time.perf_counter() - started)
        log.info("%s %s %d in=%dB out=%dB %.1fms", scope["method"], route, status[0], sizes[0], sizes[1], elapsed)


# ----------------------------------------------------------------------------------------------- running


def _config(app: AccessLog, host: str, port: int, graceful_timeout: int) -> Any:
    import uvicorn

    logging.getLogger("uvicorn.access").disabled = True  # it would log paths and client addresses
    return uvicorn.Config(app, host=host, port=port, access_log=False, timeout_graceful_shutdown=graceful_timeout,
                          log_config=None, lifespan="on")  # fmt: skip


def serve(app: AccessLog, host: str = "127.0.0.1", port: int = 8000, graceful_timeout: int = 30) -> None:
    """Run until SIGINT/SIGTERM; in-flight requests finish first (up to ``graceful_timeout`` seconds)."""
    import uvicorn

    uvicorn.Server(_config(app, host, port, graceful_timeout)).run()


@contextlib.contextmanager
def running(app: AccessLog, host: str = "127.0.0.1", graceful_timeout: int = 30) -> Iterator[tuple[str, Any]]:
    """Serve ``app`` on a free port in a background thread: yields ``(base_url, uvicorn.Server)``; stopping
    (``server.should_exit = True``, or leaving the block) is graceful as with a signal."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    server = uvicorn.Server(_config(app, host, sock.getsockname()[1], graceful_timeout))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
        time.sleep(0.01)
    try:
        yield f"http://{host}:{sock.getsockname()[1]}", server
    finally:
        server.should_exit = True
        thread.join(timeout=graceful_timeout + 5)
        sock.close()
