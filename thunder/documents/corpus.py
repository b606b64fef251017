"""Corpus reading for pretraining and tokenizer training: text / JSONL / annotated files as a stream of documents.

Text and JSONL files may be xz-compressed (``precedents.jsonl.xz``: read as they are, one work item a file). The
records of a JSONL corpus that carry an ``id`` keep :data:`HELD_OUT_SHARE` of them aside, by a stable hash of the id
(:func:`held_out`): training reads (``part="train"``, the default) never see them, and evaluation reads them alone
(``part="held_out"``), so a validation set sampled from a corpus stays out of every model trained on it.
"""

from __future__ import annotations

import json
import logging
import lzma
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from thunder.documents.sources import list_inputs, suffix_of
from thunder.language.morphemes import cut
from thunder.seeds import stable_share

logger = logging.getLogger(__name__)

KINDS = {".txt": "text", ".jsonl": "jsonl", ".md": "annotated", ".txt.xz": "text", ".jsonl.xz": "jsonl"}
HELD_OUT_SHARE = 0.03  # the identified records of a JSONL corpus kept out of training (validation), by their id
PARTS = ("train", "held_out", "all")
WHOLE = 1 << 62  # the end of a work item that is a whole (compressed) file
SPLIT_BYTES = 16 << 20  # text and JSONL files are cut into work items of about this many bytes (at line ends)
MAX_DOCUMENT_CHARS = 1 << 20  # a longer paragraph of a text file is read as several documents (memory stays flat)


# ----------------------------------------------------------------------------------------------- reading inputs


@dataclass(frozen=True)
class Span:
    """One work item: what starts in bytes ``[start, end)`` of ``path`` (of its decompressed text when it is
    xz-compressed: then the whole file); ``kind``: text, jsonl or annotated."""

    path: str
    start: int
    end: int
    kind: str


def plan(inputs: Sequence[str | Path], split_bytes: int = SPLIT_BYTES) -> list[Span]:
    """Work items over files and directories (``*.txt``, ``*.jsonl``, ``*.md`` recursively, found by
    :func:`thunder.documents.sources.list_inputs`; what it skips is logged), big files cut in ranges."""
    for item in map(Path, inputs):
        if not item.exists():
            raise FileNotFoundError(f"corpus input not found: {item}")
        if item.is_file() and suffix_of(item) not in KINDS:
            raise ValueError(f"{item}: unsupported corpus file type (expected {', '.join(KINDS)})")
    listing = list_inputs(inputs, suffixes=tuple(KINDS))
    for line in listing.skipped:
        logger.warning("corpus: %s", line)
    spans = []
    for file in (f.path for f in listing.files):
        suffix = suffix_of(file)
        size, kind = file.stat().st_size, KINDS[suffix]
        if suffix.endswith(".xz"):  # the decompressed text cannot be cut without reading it: one item, read whole
            spans.append(Span(str(file), 0, WHOLE, kind))
            continue
        step = size if kind == "annotated" else split_bytes
        spans += [Span(str(file), start, min(start + step, size), kind) for start in range(0, size, max(step, 1))]
    return spans


def held_out(record_id: object) -> bool:
    """Whether a record with this ``id`` is in the held-out share of its corpus."""
    return stable_share("held-out", record_id) < HELD_OUT_SHARE


def _lines(span: Span) -> Iterator[tuple[int, str]]:
    """``(byte offset, line)`` of every line that starts inside the span (the first partial line belongs before)."""
    with (lzma.open if span.path.endswith(".xz") else open)(span.path, "rb") as file:
        if span.start:
            file.seek(span.start - 1)
            file.readline()
        position = file.tell()
        while position < span.end:
            raw = file.readline()
            if not raw:
                return
            try:
                yield position, raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise ValueError(f"{span.path}: not UTF-8 at byte {position + error.start}") from error
            position += len(raw)


def _annotated_text(raw: str, source: str, skipped: list[str] | None = None) -> str | None:
    """The plain text of an annotated judgment (placeholders kept as written); None (logged, and appended to
    ``skipped``) when malformed."""
    from thunder.documents.annotation import AnnotationError, parse_annotated

    try:
        return parse_annotated(raw, source=source).text
    except AnnotationError as error:
        logger.warning("corpus: skipping malformed annotated document: %s", error)
        if skipped is not None:
            skipped.append(str(error))
        return None


def documents(
    span: Span, text_field: str = "text", skipped: list[str] | None = None, part: str = "train"
) -> Iterator[str]:
    """The documents of a span: blank-line separated paragraphs of text, JSONL records' ``text_field``, a judgment.

    JSONL values with ``<<<tag>>>`` markup and ``.md`` files are read as annotated judgments (tags removed). Of JSONL
    records with an ``id``, ``part`` says which: ``train`` (all but the held-out share), ``held_out`` or ``all``.
    """
    if span.kind == "annotated":
        text = _annotated_text(Path(span.path).read_text(encoding="utf-8"), span.path, skipped)
        if text is not None:
            yield text
        return
    if span.kind == "text":
        yield from _paragraphs(span)
        return
    for record in records(span, part):
        value = record.get(text_field)
        if not isinstance(value, str):
            raise ValueError(f"{record['_where']}: no string field {text_field!r}")
        text = _annotated_text(value, record["_where"], skipped) if "<<<" in value else value
        if text is not None:
            yield text


def records(span: Span, part: str = "train") -> Iterator[dict]:
    """The JSON objects of a JSONL span (``_where``: ``file: byte N`` of each), those of ``part`` (see
    :func:`documents`)."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}, got {part!r}")
    for position, line in _lines(span):
        if not line.strip():
            continue
        where = f"{span.path}: byte {position}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{where}: invalid JSON ({error.msg})") from error
        if not isinstance(record, dict):
            raise ValueError(f"{where}: not a JSON object")
        if part != "all" and "id" in record and held_out(record["id"]) != (part == "held_out"):
            continue
        yield {**record, "_where": where}


def _paragraphs(span: Span) -> Iterator[str]:
    """Blank-line separated paragraphs of a text span. A paragraph belongs to the span where the blank line before
    it starts (the file's first, to the first span), so spans cut anywhere still give whole paragraphs."""
    lines = _lines(Span(span.path, span.start, WHOLE, span.kind))
    if span.start:  # skip to the first blank line starting in the span: what comes before belongs to the span before
        for position, line in lines:
            if not line.strip():
                if position >= span.end:
                    return
                break
        else:
            return
    paragraph: list[str] = []
    size = 0
    for position, line in lines:
        blank = not line.strip()
        if blank and position >= span.end:
            break
        if not blank:
            paragraph.append(line)
            size += len(line)
        if paragraph and (blank or size >= MAX_DOCUMENT_CHARS):
            yield "".join(paragraph)
            paragraph, size = [], 0
    if paragraph:
        yield "".join(paragraph)


def iter_documents(
    inputs: Sequence[str | Path],
    text_field: str = "text",
    max_chars: int | None = None,
    skipped: list[str] | None = None,
    part: str = "train",
) -> Iterator[str]:
    """Every document of files and directories in order (see :func:`documents`: ``part`` of identified JSONL
    records), cut to ``max_chars`` when given; malformed annotated documents are left out and appended to
    ``skipped``.

    Reads line by line: memory does not grow with the corpus.
    """
    for span in plan(inputs):
        for document in documents(span, text_field, skipped, part):
            yield from (cut(document, max_chars) if max_chars else (document,))
