"""``thunder serve``: the de-identification HTTP service and its review page."""

from __future__ import annotations

import logging

from thunder.deid import PipelineOptions


def serve_command(
    pipeline: PipelineOptions,
    host: str = "127.0.0.1",
    port: int = 8000,
    key_file: str | None = None,
    max_request_bytes: int = 4 * 2**20,
    max_documents: int = 256,
    max_batch_size: int = 4,
    max_wait_ms: float = 5.0,
    graceful_timeout: int = 30,
) -> None:
    """Serve POST /v1/deid, /v1/deid/batch, /v1/apply, GET /health and the review page at / until SIGINT/SIGTERM.

    Args:
        pipeline: the de-identification options (--model, --operator, --threshold, ...).
        host: address to listen on (127.0.0.1: this machine only; 0.0.0.0: every interface).
        port: TCP port.
        key_file: mapping key (created when absent): requests with "mapping": true get the encrypted entity table.
        max_request_bytes: larger request bodies are refused with 413.
        max_documents: documents per batch request at most (more: 413).
        max_batch_size: documents of concurrent requests run through the model together at most (on a CPU small
            batches are fastest, padding costs more than batching saves; on a GPU raise it, e.g. 32).
        max_wait_ms: how long the first waiting request waits for others to join its batch.
        graceful_timeout: seconds in-flight requests get to finish after SIGINT/SIGTERM.
    """
    from thunder.mapping import MappingKey
    from thunder.serve import create_app, serve

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not 1 <= port <= 65535:
        raise ValueError(f"--port must lie between 1 and 65535, got {port}")
    key = MappingKey.load_or_create(key_file) if key_file else None
    app = create_app(pipeline.build(), max_request_bytes=max_request_bytes, max_documents=max_documents,
                     max_batch_size=max_batch_size, max_wait=max_wait_ms / 1000, key=key,
                     model_name=pipeline.model)  # fmt: skip
    logging.getLogger("thunder.serve").info("review page and API at http://%s:%d/", host, port)
    serve(app, host, port, graceful_timeout)
