"""``thunder serve``: the de-identification HTTP service and its review page."""

from __future__ import annotations

import logging
import ssl
import sys

from thunder.deid.pipeline import PipelineOptions
from thunder.deid.policy import PublicationPolicy
from thunder.deid.triage import TriageRule


def serve_command(
    pipeline: PipelineOptions,
    policy: PublicationPolicy = PublicationPolicy(),
    host: str = "127.0.0.1",
    port: int = 8000,
    key_file: str | None = None,
    token_file: str | None = None,
    ssl_certfile: str | None = None,
    ssl_keyfile: str | None = None,
    max_request_bytes: int = 4 * 2**20,
    max_documents: int = 256,
    max_batch_size: int = 4,
    max_wait_ms: float = 5.0,
    request_timeout: float = 300.0,
    graceful_timeout: int = 30,
    triage: TriageRule = TriageRule(),
    allow_unverified: bool = False,
) -> None:
    """Serve POST /v1/deid, /v1/deid/batch, /v1/apply, GET /health, /v1/labels, the API description (/docs,
    /openapi.json) and the review page at / until SIGINT/SIGTERM.

    Args:
        pipeline: the de-identification options (--model, --operator, --threshold, ...).
        policy: the publication policy (--keep_officials, --keep_regions, ...).
        host: address to listen on (127.0.0.1: this machine only; any other address needs --token_file).
        port: TCP port.
        key_file: mapping key (created when absent): requests with "mapping": true get the encrypted entity table.
        token_file: a file holding one line, the bearer token (16 characters or more) that clients send as
            "Authorization: Bearer <token>" to the /v1/ endpoints (the review page asks for it once per tab).
        ssl_certfile: serve HTTPS with this certificate (PEM; with --ssl_keyfile).
        ssl_keyfile: the certificate's private key (PEM).
        max_request_bytes: larger request bodies are refused with 413.
        max_documents: documents per batch request at most (more: 413).
        max_batch_size: documents of concurrent requests run through the model together at most (on a CPU small
            batches are fastest, padding costs more than batching saves; on a GPU raise it, e.g. 32).
        max_wait_ms: how long the first waiting request waits for others to join its batch.
        request_timeout: seconds a request may take; past it the answer is 504 and its work stops. A client that
            hangs up stops its work too.
        graceful_timeout: seconds in-flight requests get to finish after SIGINT/SIGTERM (those that cannot are
            answered 503 two seconds before it ends).
        triage: the rule behind each answer's risk and possible misses (--near_margin, --cut_word_weight, ...;
            see thunder.deid.triage).
        allow_unverified: serve a model that records no fingerprint or self-test answers (refused otherwise).
    """
    from thunder.deid.mapping import MappingKey
    from thunder.service.app import check_host, check_port, create_app, read_token, serve

    if not 1 <= port <= 65535:
        raise ValueError(f"--port must lie between 1 and 65535, got {port}")
    if not request_timeout > 0:
        raise ValueError(f"--request_timeout must be positive, got {request_timeout}")
    check_host(host, token_required=token_file is not None)  # before the model loads
    check_port(host, port)
    if (ssl_certfile is None) != (ssl_keyfile is None):
        raise ValueError("--ssl_certfile and --ssl_keyfile go together")
    if ssl_certfile is not None:
        try:  # refused here with one line rather than by uvicorn with a traceback
            ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(ssl_certfile, ssl_keyfile)
        except OSError as error:  # ssl.SSLError included
            raise ValueError(f"--ssl_certfile {ssl_certfile} / --ssl_keyfile {ssl_keyfile}: {error}") from None
    token = read_token(token_file) if token_file is not None else None
    key = MappingKey.load_or_create(key_file) if key_file else None
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from thunder.model.integrity import unverified_allowed  # torch: not for --help

    with unverified_allowed(allow_unverified):
        deidentifier = pipeline.build(policy)
    if note := deidentifier.coverage():
        print(f"thunder serve: {note}; answers carry risk null", file=sys.stderr)
    app = create_app(deidentifier, max_request_bytes=max_request_bytes, max_documents=max_documents,
                     max_batch_size=max_batch_size, max_wait=max_wait_ms / 1000, request_timeout=request_timeout,
                     key=key, token=token, triage=triage)  # fmt: skip
    scheme = "https" if ssl_certfile else "http"
    logging.getLogger("thunder.service").info("review page at %s://%s:%d/, API description at /docs", scheme, host, port)
    serve(app, host, port, graceful_timeout, ssl_certfile, ssl_keyfile)
