"""HTTP de-identification service and review page (FastAPI + uvicorn; see docs/architecture.md for why not LitServe).

``create_app(deidentifier)`` builds the ASGI app, :func:`serve` runs it. Concurrent requests are collected by a
:class:`~thunder.service.batching.Batcher` and run through the model together in one worker thread, so the event loop stays
free and the model sees batches. A request ends at the first of: its answer, the time limit, the client hanging up,
or the server's shutdown deadline; a batch whose requests have all ended stops before its next forward pass.

Request bodies are validated by the pydantic models of :mod:`thunder.service.bodies`, which also make the OpenAPI description
(``/openapi.json``, ``/docs`` with the Swagger UI assets of the ``swagger-ui-bundle-v2`` package: no CDN). Every answer
carries ``Cache-Control: no-store``. No request or response text is ever logged: the access log carries method, route
template, status, sizes and timings, and an error inside the pipeline is logged by its exception type alone.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hmac
import ipaddress
import logging
import socket
import threading
import time
from importlib import resources
from pathlib import Path, PureWindowsPath
from typing import Any, Awaitable, Iterator, Sequence

from fastapi import Depends, FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema
from swagger_ui_bundle import swagger_ui_path

from thunder.deid.mapping import MappingKey, replacing_edits
from thunder.deid.overlaps import REVIEWER
from thunder.deid.pipeline import Deidentifier, DeidResult
from thunder.deid.recognizers.registry import Recognizer, ScoredSpan, recognize
from thunder.deid.triage import TriageRule
from thunder.documents.formats import SUFFIXES, Extracted, FormatError, output_name, read_bytes, render
from thunder.documents.formats import Replacement as Edit
from thunder.runs.names import holds_replaced, readable, replaced_texts
from thunder.service.batching import Batcher
from thunder.service.bodies import (
    REQUESTS,
    ApplyRequest,
    BatchAnswer,
    BatchRequest,
    DeidRequest,
    DocumentAnswer,
    ErrorAnswer,
    Replacement,
    RequestError,
    Upload,
    read_body,
    result_json,
    reviewed_spans,
    span_labels,
)
from thunder.service.letters import apply_keeping_letters, kept_letters

REVIEW_DIR = Path(str(resources.files("thunder") / "resources" / "review"))
DOCS_DIR = Path(swagger_ui_path)  # Swagger UI's files, installed with the package swagger-ui-bundle-v2
ROUTES = ("/", "/docs", "/openapi.json", "/health", "/v1/labels", "/v1/deid", "/v1/deid/batch", "/v1/apply")
SHUTDOWN_MARGIN = 2.0  # seconds of the graceful timeout kept for answering the requests that could not finish
MIN_TOKEN_LENGTH = 16
HEADER_TIMEOUT = 10.0  # seconds a client has to send a request's headers
log = logging.getLogger("thunder.service")


# ----------------------------------------------------------------------------------------------- the app


async def _client_gone(request: Request) -> None:
    """Returns when the client hangs up (called once the body has been read)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


class Lifecycle:
    """When the server began stopping, and how long in-flight requests have from then on."""

    def __init__(self) -> None:
        self.stopping: asyncio.Event | None = None  # made in the server's event loop (lifespan start)
        self.grace = 0.0

    async def deadline(self) -> None:
        """Returns when in-flight requests must be answered because the server stops."""
        await self.stopping.wait()
        await asyncio.sleep(self.grace)


def create_app(
    deidentifier: Deidentifier,
    *,
    max_request_bytes: int = 4 * 2**20,
    max_documents: int = 256,
    max_batch_size: int = 4,
    max_wait: float = 0.005,
    request_timeout: float = 300.0,
    key: MappingKey | None = None,
    token: str | None = None,
    triage: TriageRule | None = TriageRule(),
) -> "Service":
    """The service: ``GET /`` (review page), ``GET /health``, ``GET /v1/labels``, ``POST /v1/deid``,
    ``POST /v1/deid/batch``, ``POST /v1/apply``, ``GET /docs`` and ``/openapi.json``. With ``token``, the
    ``/v1/`` endpoints need ``Authorization: Bearer <token>``; each POST is answered within ``request_timeout``
    seconds (504 past it). ``/v1/deid`` and ``/v1/deid/batch`` answer each document's ``risk`` and ``suggestions``
    (possible misses, not replaced) by the ``triage`` rule (``None``: neither)."""
    if not request_timeout > 0:
        raise ValueError(f"request_timeout must be positive, got {request_timeout}")
    batcher, lifecycle = Batcher(deidentifier, max_batch_size, max_wait, triage), Lifecycle()
    known = span_labels(deidentifier)
    taxonomy, label_set = deidentifier.taxonomy, deidentifier.label_set

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        lifecycle.stopping = asyncio.Event()
        await batcher.start()
        yield
        await batcher.stop()

    description = (
        "De-identify Korean court judgments. Offsets count Unicode code points, as in Python. Every refusal is "
        '`{"error": reason}`; the reason never quotes the request.'
    )
    app = FastAPI(title="Thunder de-identification", description=description, lifespan=lifespan, docs_url=None,
                  redoc_url=None, openapi_url="/openapi.json")  # fmt: skip
    bearer = HTTPBearer(auto_error=False, description="the token of the server's --token_file")

    async def authorised(credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
        if credentials is None:
            raise RequestError(401, "this server needs a token: Authorization: Bearer <token>",
                               {"WWW-Authenticate": "Bearer"})  # fmt: skip
        if not hmac.compare_digest(credentials.credentials.encode(), token.encode()):
            raise RequestError(401, "wrong token", {"WWW-Authenticate": 'Bearer error="invalid_token"'})

    protected = [Depends(authorised)] if token is not None else []
    refusals = {status: {"model": ErrorAnswer} for status in (400, 401, 413, 415, 503, 504)}

    @app.exception_handler(RequestError)
    async def refused(request: Request, error: RequestError) -> JSONResponse:
        return JSONResponse({"error": error.reason}, status_code=error.status, headers=error.headers)

    async def answer(request: Request, work: Awaitable[Any]) -> Any:
        """``work``'s result, or a refusal when the time limit, the client or the server's shutdown ends it."""
        task = asyncio.ensure_future(work)
        stops = {
            asyncio.ensure_future(_client_gone(request)): RequestError(499, "the client closed the connection"),
            asyncio.ensure_future(lifecycle.deadline()): RequestError(
                503, "the server is shutting down: send the request again", {"Retry-After": "10"}
            ),
        }
        try:
            done, _ = await asyncio.wait({task, *stops}, timeout=request_timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pending in (task, *stops):
                pending.cancel()
        if task in done:
            return task.result()
        for stop in done:
            raise stops[stop]
        raise RequestError(504, f"no answer within the time limit of {request_timeout:g} s (--request_timeout)")

    def wants_mapping(body: Replacement) -> bool:
        if body.mapping and key is None:
            raise RequestError(400, "mapping requested, but the server was started without --key_file")
        return body.mapping

    async def seal(doc_id: str, text: str, result: DeidResult, wanted: bool) -> dict:
        if not wanted:
            return {}
        return {"mapping": await asyncio.to_thread(key.seal, doc_id, text, result)}  # off the event loop

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        headers = {"Content-Security-Policy": "default-src 'self'; img-src 'self' data:"}
        return FileResponse(REVIEW_DIR / "index.html", headers=headers)

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        response = get_swagger_ui_html(openapi_url="/openapi.json", title="Thunder de-identification API",
                                       swagger_js_url="/docs/assets/swagger-ui-bundle.js",
                                       swagger_css_url="/docs/assets/swagger-ui.css",
                                       swagger_favicon_url="/docs/assets/favicon-32x32.png",
                                       swagger_ui_parameters={"validatorUrl": None})  # fmt: skip
        response.headers["Content-Security-Policy"] = (
            "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data:"
        )
        return response

    @app.get("/health", summary="status, limits and batch counters")
    async def health() -> dict:
        model = None if label_set is None else {"granularity": label_set.granularity, "types": len(label_set.types)}
        return {"status": "ok", "model": model, "recognizers": [r.name for r in deidentifier.recognizers],
                "threshold": deidentifier.operating_point.threshold if label_set is not None else None,
                "documents": list(SUFFIXES),
                "coverage": deidentifier.coverage() or "the model and the recognizers",
                "token_required": token is not None, "max_request_bytes": max_request_bytes,
                "max_documents": max_documents, "request_timeout": request_timeout,
                "batches": {"calls": batcher.calls, "documents": batcher.documents,
                            "characters_per_second": batcher.throughput()}}  # fmt: skip

    @app.get("/v1/labels", dependencies=protected, responses=refusals, summary="labels a span may carry")
    async def labels() -> dict:
        def entry(name: str, category: str | None, tier1: str | None) -> dict:
            return {"name": name, "category": category, "tier1": tier1}

        emitted = [] if label_set is None else [label_set.describe(t) for t in label_set.types]
        return {
            "labels": [entry(label.name, label.category, label.tier1) for label in taxonomy.labels.values()],
            "granularity": None if label_set is None else label_set.granularity,
            "entity_types": [entry(info.label or t, info.category, info.tier1)
                             for t, info in zip(label_set.types if label_set else (), emitted)],  # fmt: skip
        }

    @app.post("/v1/deid", dependencies=protected, response_model=None, summary="de-identify one text or document",
              openapi_extra=_body_schema(DeidRequest), responses={200: {"model": DocumentAnswer}, **refusals})  # fmt: skip
    async def deid(request: Request) -> JSONResponse:
        body = await read_body(request, max_request_bytes, DeidRequest)
        wanted = wants_mapping(body)
        extracted = None if body.document is None else await asyncio.to_thread(_read_upload, body)
        text = body.text if extracted is None else extracted.text

        async def work() -> dict:
            (result,) = await batcher.deidentify([text], body.operator, body.threshold)
            written = {} if extracted is None else await asyncio.to_thread(_write_upload, extracted, result, body,
                                                                           deidentifier.recognizers)  # fmt: skip
            read = {} if extracted is None else {"extracted": extracted.text}
            return {**result_json(result), **written, **read, **await seal(body.id, text, result, wanted)}

        return JSONResponse(await answer(request, work()))

    @app.post("/v1/deid/batch", dependencies=protected, response_model=None, summary="de-identify many texts",
              openapi_extra=_body_schema(BatchRequest), responses={200: {"model": BatchAnswer}, **refusals})  # fmt: skip
    async def deid_batch(request: Request) -> JSONResponse:
        body = await read_body(request, max_request_bytes, BatchRequest)
        if len(body.documents) > max_documents:
            raise RequestError(413, f"{len(body.documents)} documents; at most {max_documents} per request")
        wanted = wants_mapping(body)
        ids = [document.id if document.id is not None else str(i) for i, document in enumerate(body.documents)]
        texts = [document.text for document in body.documents]

        async def work() -> dict:
            results = await batcher.deidentify(texts, body.operator, body.threshold)
            shown = [i if _clean(i, r, deidentifier.recognizers) else str(k) for k, (i, r) in enumerate(zip(ids, results))]
            return {"results": [{"id": s, **result_json(r), **await seal(i, t, r, wanted)}
                                for s, i, t, r in zip(shown, ids, texts, results)]}  # fmt: skip

        return JSONResponse(await answer(request, work()))

    @app.post("/v1/apply", dependencies=protected, response_model=None, summary="replace exactly the given spans",
              openapi_extra=_body_schema(ApplyRequest), responses={200: {"model": DocumentAnswer}, **refusals})  # fmt: skip
    async def apply(request: Request) -> JSONResponse:
        body = await read_body(request, max_request_bytes, ApplyRequest)
        spans, wanted = reviewed_spans(body, known), wants_mapping(body)
        letters = kept_letters((kept.text, kept.letter) for kept in body.letters)
        extracted = None if body.document is None else await asyncio.to_thread(_read_upload, body)
        if extracted is not None and extracted.text != body.text:
            raise RequestError(400, "text: not the text the document's reader extracts (the spans' offsets would "
                                    "not fall in the document): send the extracted text /v1/deid answered")  # fmt: skip

        async def work() -> dict:
            try:
                rejected = [(kept.start, kept.end) for kept in body.rejected]
                result = await batcher.call(lambda: apply_keeping_letters(batcher.variant(body.operator, None),
                                                                          body.text, spans, letters, rejected))  # fmt: skip
            except Exception as error:  # noqa: BLE001 - the message may quote the text: log the type only
                log.error("re-applying spans failed: %s", type(error).__name__)
                raise RequestError(500, f"internal error while re-applying spans ({type(error).__name__})") from None
            for i, span in enumerate(spans):  # a reviewer's decision is never dropped in silence
                if not any(s.start < span.end and span.start < s.end for s in result.spans):
                    raise RequestError(400, f"spans[{i}] [{span.start}, {span.end}) could not be applied "
                                            f"({_dropped(body.text, span)})")  # fmt: skip
            written = {} if extracted is None else await asyncio.to_thread(_write_upload, extracted, result, body,
                                                                           deidentifier.recognizers)  # fmt: skip
            return {**result_json(result), **written, **await seal(body.id, body.text, result, wanted)}

        return JSONResponse(await answer(request, work()))

    app.state.token_required = token is not None
    app.openapi = lambda: _openapi(app)
    app.mount("/static", StaticFiles(directory=REVIEW_DIR), name="static")
    app.mount("/docs/assets", StaticFiles(directory=DOCS_DIR), name="docs-assets")
    return Service(app, lifecycle, token_required=token is not None)


def _uploaded_name(body: Upload) -> str:
    """The uploaded document's file name without any folder (``/`` or ``\\``, as a client on any system sends)."""
    return PureWindowsPath(body.filename or "").name


def _clean(name: str, result: DeidResult, recognizers: Sequence[Recognizer]) -> bool:
    """Whether a client's name (a file stem, a batch id) may be answered back: the recognizers find nothing in it
    (as ``thunder deid`` checks output names) and it holds no text replaced in its document (``result``)."""
    return not recognize(readable(name), recognizers) and not holds_replaced(name, replaced_texts(result))


def _read_upload(body: Upload) -> Extracted:
    """The text of an uploaded document: 415 for a format not read here, 400 with the format's one-line reason."""
    name = _uploaded_name(body)
    if Path(name).suffix.lower() not in SUFFIXES:
        raise RequestError(415, f"filename: {Path(name).suffix or 'no suffix'} is not a document format read here "
                                f"({', '.join(SUFFIXES)})")  # fmt: skip
    try:
        data = base64.b64decode(body.document or "", validate=True)
    except (binascii.Error, ValueError):
        raise RequestError(400, "document: not valid base64") from None
    try:
        return read_bytes(name, data)
    except FormatError as error:
        raise RequestError(400, f"document refused: {error}") from None


def _write_upload(extracted: Extracted, result: DeidResult, body: Upload, recognizers: Sequence[Recognizer]) -> dict:
    """The de-identified document (base64) and its name (the upload's, without folders, when it is clean:
    :func:`_clean`; else ``document`` and the format's suffix), written and checked as ``thunder deid`` does; 422 with
    the format's reason when it cannot be written safely."""
    edits = [Edit(*edit) for edit in replacing_edits(extracted.text, result.text, result.spans)]
    try:
        data = render(extracted, edits, body.out_format, {span.text: span.placeholder for span in result.spans})
    except FormatError as error:
        raise RequestError(422, f"document not written: {error}") from None
    name = _uploaded_name(body)
    name = name if _clean(Path(name).stem, result, recognizers) else "document" + Path(name).suffix.lower()
    return {"document": base64.b64encode(data).decode("ascii"), "filename": output_name(name, body.out_format)}


def _dropped(text: str, span: ScoredSpan) -> str:
    """Why the pipeline dropped a span sent to ``/v1/apply`` (never quoting the text)."""
    piece = text[span.start : span.end]
    if not piece.strip():
        return "it holds only whitespace"
    if not any(c.isalnum() for c in piece):
        return f'it holds no letter or digit; send it with source "{REVIEWER}" to replace it'
    if span.source == "model":
        return ("the publication policy keeps a model's span over this text: legal text, a protected word, a kept "
                f'official or region; send it with source "{REVIEWER}" to replace it')  # fmt: skip
    return f"the pipeline dropped it (source {span.source!r})"


def _body_schema(model: type[BaseModel]) -> dict:
    """The OpenAPI request body of an endpoint that reads its body itself (:func:`read_body`)."""
    schema = {"$ref": f"#/components/schemas/{model.__name__}"}
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def _openapi(app: FastAPI) -> dict:
    """FastAPI's description with the request bodies' schemas added (the endpoints read their bodies themselves,
    so that size limits and refusals come first)."""
    if app.openapi_schema is None:
        schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        _, definitions = models_json_schema([(m, "validation") for m in REQUESTS],
                                            ref_template="#/components/schemas/{model}")  # fmt: skip
        components = schema.setdefault("components", {})
        components.setdefault("schemas", {}).update(definitions["$defs"])
        components.setdefault("securitySchemes", {})["HTTPBearer"] = {
            "type": "http", "scheme": "bearer",
            "description": "the token of the server's --token_file; required on every /v1/ endpoint when the server "
                           "was started with one (always off 127.0.0.1)",
        }  # fmt: skip
        for path, operations in schema.get("paths", {}).items():
            for operation in operations.values() if path.startswith("/v1/") else ():
                operation["security"] = [{"HTTPBearer": []}] if app.state.token_required else []
        app.openapi_schema = schema
    return app.openapi_schema


def _files(directory: Path, prefix: str) -> set[str]:
    return {f"{prefix}/{path.name}" for path in directory.iterdir() if path.is_file()}


class Service:
    """The ASGI app: the FastAPI app behind an access log of one line per request (method, route, status, bytes
    in/out, milliseconds; never the text, and a path that is not a route or a packaged file as ``<other>``), with
    ``Cache-Control: no-store`` added to every answer. An exception escaping the app is logged by type only and
    answered with a 500."""

    def __init__(self, app: FastAPI, lifecycle: Lifecycle, token_required: bool) -> None:
        self.app, self.lifecycle, self.token_required = app, lifecycle, token_required
        self.paths = set(ROUTES) | _files(REVIEW_DIR, "/static") | _files(DOCS_DIR, "/docs/assets")

    def begin_shutdown(self, graceful_timeout: float) -> None:
        """The server stops: requests still running are answered (503) ``SHUTDOWN_MARGIN`` seconds before
        ``graceful_timeout`` ends. Called in the server's event loop."""
        self.lifecycle.grace = max(0.0, graceful_timeout - SHUTDOWN_MARGIN)
        if self.lifecycle.stopping is not None:
            self.lifecycle.stopping.set()

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
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"cache-control"]
                message = {**message, "headers": [*headers, (b"cache-control", b"no-store")]}
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
        route = scope["path"] if scope["path"] in self.paths else "<other>"
        elapsed = 1000 * (time.perf_counter() - started)
        log.info("%s %s %d in=%dB out=%dB %.1fms", scope["method"], route, status[0], sizes[0], sizes[1], elapsed)


# ----------------------------------------------------------------------------------------------- running


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_host(host: str, token_required: bool) -> None:
    """Refuse to listen beyond loopback without a token (``ValueError``, one line)."""
    if not token_required and not is_loopback(host):
        raise ValueError(f"--host {host} reaches beyond this machine: give --token_file (a token clients must send)")


def check_port(host: str, port: int) -> None:
    """Refuse a port another program listens on (``ValueError``, one line), before the model loads."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: a closed server's port is free
        try:
            probe.bind((host, port))
        except OSError as error:
            raise ValueError(f"--port {port}: cannot listen on {host}:{port} ({error.strerror}; another server?); "
                             "choose another port") from None  # fmt: skip


def read_token(path: str | Path) -> str:
    """The bearer token in ``path`` (one line, at least 16 characters)."""
    token = Path(path).read_text(encoding="utf-8").strip()
    if len(token) < MIN_TOKEN_LENGTH or any(c.isspace() for c in token) or not token.isprintable():
        raise ValueError(f"{path}: the token must be one line of at least {MIN_TOKEN_LENGTH} printable characters")
    return token


def _server(app: Service, host: str, port: int, graceful_timeout: int, ssl_certfile: str | None = None,
            ssl_keyfile: str | None = None, header_timeout: float = HEADER_TIMEOUT) -> Any:  # fmt: skip
    import uvicorn
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            app.begin_shutdown(graceful_timeout)  # requests in flight get their answer before uvicorn cancels them
            await super().shutdown(sockets)

    class Protocol(H11Protocol):
        """uvicorn's HTTP/1.1 with a time limit on a request's headers, which uvicorn has none of (a client that
        sends them a byte at a time would hold its connection for ever): the limit runs from the connection, or the
        last answer on it, to the end of the headers; past it the connection is answered 408 and closed."""

        timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.wait_for_headers()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self.wait_for_headers()

        def connection_lost(self, exc: Exception | None) -> None:
            if self.timer is not None:
                self.timer.cancel()
            super().connection_lost(exc)

        def wait_for_headers(self) -> None:
            if self.timer is not None:
                self.timer.cancel()
            self.timer = None if self.transport.is_closing() else self.loop.call_later(header_timeout, self.too_slow)

        def too_slow(self) -> None:
            if self.transport.is_closing() or (self.cycle is not None and not self.cycle.response_complete):
                return  # a request is in flight: its headers came in time
            log.info("closed a connection whose request headers took longer than %g s", header_timeout)
            self.transport.write(b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            self.transport.close()

    logging.getLogger("uvicorn.access").disabled = True  # it would log paths and client addresses
    config = uvicorn.Config(app, host=host, port=port, access_log=False, timeout_graceful_shutdown=graceful_timeout,
                            log_config=None, lifespan="on", ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile,
                            http=Protocol)  # fmt: skip
    return Server(config)


def serve(app: Service, host: str = "127.0.0.1", port: int = 8000, graceful_timeout: int = 30,
          ssl_certfile: str | None = None, ssl_keyfile: str | None = None) -> None:  # fmt: skip
    """Run until SIGINT/SIGTERM; in-flight requests finish first, or are answered 503 when ``graceful_timeout``
    seconds are nearly over. Binding beyond loopback needs a token (``create_app(token=...)``)."""
    check_host(host, app.token_required)
    _server(app, host, port, graceful_timeout, ssl_certfile, ssl_keyfile).run()


@contextlib.contextmanager
def running(app: Service, host: str = "127.0.0.1", graceful_timeout: int = 30, ssl_certfile: str | None = None,
            ssl_keyfile: str | None = None,
            header_timeout: float = HEADER_TIMEOUT) -> Iterator[tuple[str, Any]]:  # fmt: skip
    """Serve ``app`` on a free port in a background thread: yields ``(base_url, uvicorn.Server)``; stopping
    (``server.should_exit = True``, or leaving the block) is graceful as with a signal."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    server = _server(app, host, sock.getsockname()[1], graceful_timeout, ssl_certfile, ssl_keyfile, header_timeout)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
        time.sleep(0.01)
    scheme = "https" if ssl_certfile else "http"
    try:
        yield f"{scheme}://{host}:{sock.getsockname()[1]}", server
    finally:
        server.should_exit = True
        thread.join(timeout=graceful_timeout + 5)
        sock.close()
