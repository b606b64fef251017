"""Writing results: atomic files, span records."""

from __future__ import annotations

import os
import tempfile
from dataclasses import asdict
from pathlib import Path

from thunder.deid import DetectedSpan


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def span_record(doc_id: str, span: DetectedSpan) -> dict:
    """The ``--spans`` JSONL record of one span."""
    return {"doc": doc_id, **asdict(span)}
