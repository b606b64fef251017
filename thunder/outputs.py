"""Writing results so that finished work survives: atomic files, JSONL appended and flushed per document, resume.

A text output is written through a temporary file in the same directory and ``os.replace``, so it is either
absent or complete; its existence marks the document done. A JSONL output (and the spans file) gets one line per
document, flushed at once; a line cut short by a crash is dropped when the file is opened again. Temporary files
left by a killed run are removed by the next run over the same output directory.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, TextIO

from thunder.deid import DetectedSpan

_TEMP_MARK = ".thunder-"


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}{_TEMP_MARK}", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def remove_temporary_files(directory: Path) -> int:
    """Delete the temporary files :func:`write_atomic` left under ``directory`` (a killed run); returns how many."""
    if not directory.is_dir():
        return 0
    stale = [p for p in directory.rglob(f".*{_TEMP_MARK}*.tmp") if p.is_file()]
    for path in stale:
        path.unlink(missing_ok=True)
    return len(stale)


def span_record(doc_id: str, span: DetectedSpan, file: str | None = None, with_text: bool = True) -> dict:
    """The spans-file record of one span (``file``: the input's relative path); ``with_text=False`` leaves the
    original identifier out."""
    record: dict[str, Any] = {"doc": doc_id}
    if file is not None:
        record["file"] = file
    record.update(asdict(span))
    if not with_text:
        del record["text"]
    return record


def _complete_lines(path: Path) -> list[str]:
    """The complete (newline-terminated) lines of ``path``; a cut-off last line is truncated away."""
    if not path.is_file():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        with path.open("r+b") as stream:
            stream.truncate(end)
    return data[:end].decode("utf-8").split("\n")[:-1]


class JsonlAppender:
    """A JSONL file written one record at a time, each line flushed as soon as it is written."""

    def __init__(self, path: Path, keep: Callable[[dict], bool] | None = None) -> None:
        """Open ``path`` for appending; with ``keep``, existing records for which it is false are dropped first
        (e.g. the spans of a document whose output never got written)."""
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = _complete_lines(path)
        self.records = [json.loads(line) for line in lines if line.strip()]
        if keep is not None and not all(keep(r) for r in self.records):
            self.records = [r for r in self.records if keep(r)]
            write_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.records))
        self._stream: TextIO = path.open("a", encoding="utf-8", newline="")

    def write(self, records: list[dict]) -> None:
        """Append ``records`` (one document's) and flush."""
        self._stream.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
        self._stream.flush()

    def close(self) -> None:
        self._stream.close()
