"""Reviewed judgments: span-annotated JSONL -> documents with checked spans, and -> AnnotatedDocument for training.

Two formats, told apart per record (offsets count code points, spans are ``[start, end)``):

* the review page's download (``NAME.reviewed.jsonl``, also ``thunder evaluate``'s gold format): one document per
  line, ``{"id", "text", "spans": [[start, end, label], ...], "rejected": [...]}``; rejected spans are text; a span
  may carry a fourth element, its entity (gold files); a record without ``spans`` has no identifiers;
* a ``thunder deid --spans`` file after correction: one span per line, ``{"doc", "file", "start", "end", "text",
  "label", ...}``. A document's text is read again from the input ``thunder deid`` read: the text file at the path
  ``doc``, or the record ``doc`` of the JSONL file ``file`` (a relative path is looked up from the current
  directory, then from the spans file's folder). The document must still read each span's ``text`` there: a
  document edited since review is refused, never misaligned (so is a span without its text, ``--no_span_text``).

:func:`read_records` checks every span (inside the text, no overlap, the stored text); :func:`read_reviewed` makes
training documents of them: each span becomes a placeholder of its label whose content is the entity's letter
(``A``, ``B``, ...; the same text, whitespace aside, gets the same letter), so synthesis fills it afresh every epoch
as it fills the annotated corpus. The identifiers themselves never enter the document; only their shape does
(letters and digits as classes: ``홍길동`` -> ``가가가``), which synthesis falls back to where a label has no mention
source. A label is a label of the taxonomy, an alias or raw tag it resolves, or the name of one of its categories.
Every problem is a :class:`ReviewError` ``file:line: reason``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from thunder.documents.annotation import AnnotatedDocument, Placeholder, placeholder_sequence
from thunder.documents.sources import InputError, InputFile, jsonl_records, list_inputs, read_jsonl, read_text
from thunder.taxonomy import Taxonomy, UnknownTagError

logger = logging.getLogger(__name__)

_SPACE = re.compile(r"\s+")


class ReviewError(ValueError):
    """A reviewed file that cannot be used as it is; ``str(error)`` is ``file:line: reason``."""


@dataclass(frozen=True)
class ReviewedSpan:
    """One reviewed span: ``text[start:end]`` is an identifier of ``label``; ``line`` is where the file gives it."""

    start: int
    end: int
    label: str
    line: int
    entity: str | None = None


@dataclass(frozen=True)
class ReviewedDocument:
    """A reviewed judgment: its original text and its spans in text order, checked against each other."""

    id: str
    text: str
    spans: tuple[ReviewedSpan, ...]
    source: str
    line: int


def read_records(path: str | Path) -> Iterator[ReviewedDocument]:
    """The documents of one reviewed JSONL file (either format), every span checked; :class:`ReviewError` on the
    first problem."""
    path = Path(path)
    texts = _InputTexts(path)
    pending: dict[tuple[str | None, str], list[tuple[int, dict[str, Any]]]] = {}
    try:
        for number, record, reason in jsonl_records(path, text=False):
            where = f"{path}:{number}"
            if record is None:
                raise ReviewError(f"{where}: {reason}")
            if "spans" in record or ("text" in record and "doc" not in record):
                yield _review_page_document(record, path, number)
            elif {"doc", "start", "end", "label"} <= record.keys():
                pending.setdefault((_optional_str(record.get("file"), where), str(record["doc"])), []).append(
                    (number, record)
                )
            else:
                raise ReviewError(
                    f"{where}: neither a reviewed document {{id, text, spans}} (the review page's download) nor a "
                    "span {doc, start, end, label} of a `thunder deid --spans` file"
                )
    except InputError as error:
        raise ReviewError(str(error)) from None
    for (file, doc), lines in pending.items():
        yield _spans_file_document(doc, file, lines, texts, path)


def read_reviewed(paths: Sequence[str | Path], taxonomy: Taxonomy) -> list[AnnotatedDocument]:
    """Training documents from reviewed JSONL files and folders (``*.jsonl`` in them, recursively): every span a
    placeholder of its label (see the module docstring); an unknown label is a :class:`ReviewError`."""
    if not paths:
        return []
    try:
        listing = list_inputs(paths, suffixes=(".jsonl",))
    except InputError as error:
        raise ReviewError(f"reviewed: {error}") from None
    for line in listing.skipped:
        logger.warning("reviewed documents: %s", line)
    documents = []
    for file in listing.files:
        for record in read_records(file.path):
            documents.append(annotated(record, taxonomy))
    return documents


def annotated(record: ReviewedDocument, taxonomy: Taxonomy) -> AnnotatedDocument:
    """``record`` with each span replaced by a placeholder of its label holding the entity's letter: one letter per
    entity (a span's fourth element where the file gives one, else its text without whitespace)."""
    letters: dict[str, str] = {}
    sequence = placeholder_sequence()
    parts: list[str] = []
    placeholders: list[Placeholder] = []
    length = cursor = 0
    for index, span in enumerate(record.spans):
        try:
            taxonomy.labels_of(span.label)
        except UnknownTagError as error:
            raise ReviewError(f"{record.source}:{span.line}: span {index} [{span.start}, {span.end}): {error}") from None
        mention = record.text[span.start : span.end]
        key = span.entity if span.entity is not None else _SPACE.sub("", mention)
        letter = letters.get(key) or letters.setdefault(key, next(sequence))
        parts.append(record.text[cursor : span.start])
        length += span.start - cursor
        placeholders.append(Placeholder(length, length + len(letter), span.label, letter, span.line, 1, shape(mention)))
        parts.append(letter)
        length += len(letter)
        cursor = span.end
    parts.append(record.text[cursor:])
    return AnnotatedDocument(record.id, "".join(parts), tuple(placeholders), source=record.source)


def shape(mention: str) -> str:
    """The shape of ``mention`` without its characters: digits as ``0``, Latin letters as ``A``/``a``, every other
    letter or number (Hangul, Hanja, ...) as ``가``; spaces and punctuation kept."""
    return "".join(_shape_char(char) for char in mention)


def _shape_char(char: str) -> str:
    if char.isdigit():
        return "0"
    if char.isascii() and char.isalpha():
        return "A" if char.isupper() else "a"
    return "가" if char.isalnum() else char


# ------------------------------------------------------------------------------------------- the two formats


def _optional_str(value: Any, where: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ReviewError(f"{where}: 'file' is not a string")
    return value


def _review_page_document(record: dict[str, Any], path: Path, number: int) -> ReviewedDocument:
    where = f"{path}:{number}"
    text, raw_spans = record.get("text"), record.get("spans", [])  # no spans: a judgment without identifiers
    if not isinstance(text, str):
        raise ReviewError(f"{where}: 'text' is not a string")
    if not isinstance(raw_spans, list):
        raise ReviewError(f"{where}: 'spans' is not a list")
    doc_id = record.get("id", f"{path.stem}:{number}")
    if not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool):
        raise ReviewError(f"{where}: 'id' is not a string or integer")
    spans = []
    for index, raw in enumerate(raw_spans):
        if not (isinstance(raw, list) and len(raw) in (3, 4)):
            raise ReviewError(f"{where}: span {index} {raw!r} is not [start, end, label] (or [start, end, label, entity])")
        entity = str(raw[3]) if len(raw) == 4 else None
        spans.append(_span(raw[0], raw[1], raw[2], number, entity, text, f"{where}: span {index}"))
    return ReviewedDocument(str(doc_id), text, _checked(spans, path), str(path), number)


def _spans_file_document(
    doc: str, file: str | None, lines: list[tuple[int, dict[str, Any]]], texts: _InputTexts, path: Path
) -> ReviewedDocument:
    first = lines[0][0]
    text = texts.get(doc, file, f"{path}:{first}")
    spans = []
    for number, record in lines:
        where = f"{path}:{number}"
        span = _span(record["start"], record["end"], record["label"], number, None, text, where, changed=True)
        stored = record.get("text")
        if not isinstance(stored, str):
            raise ReviewError(f"{where}: the span keeps no text (written with --no_span_text?), so document {doc!r} "
                              "cannot be checked against the review: write the spans with their text")  # fmt: skip
        if text[span.start : span.end] != stored:
            raise ReviewError(
                f"{where}: document {doc!r} no longer reads the reviewed span's text at [{span.start}, {span.end}): "
                "it changed since review; review it again"
            )
        spans.append(span)
    return ReviewedDocument(doc, text, _checked(spans, path), str(path), first)


def _span(
    start: Any, end: Any, label: Any, line: int, entity: str | None, text: str, where: str, changed: bool = False
) -> ReviewedSpan:
    """A span checked to lie inside ``text`` and to hold more than whitespace, its ends moved inside the
    whitespace around it (a placeholder keeps the spaces beside it)."""
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)) or not 0 <= start < end:
        raise ReviewError(f"{where}: [{start!r}, {end!r}) is not a range of characters")
    if end > len(text):
        reason = ": the document changed since review" if changed else ""
        raise ReviewError(f"{where}: [{start}, {end}) is not a range inside the text (length {len(text)}){reason}")
    if not isinstance(label, str) or not label.strip():
        raise ReviewError(f"{where}: the label {label!r} is not a name")
    mention = text[start:end]
    if not mention.strip():
        raise ReviewError(f"{where}: [{start}, {end}) holds only whitespace")
    start += len(mention) - len(mention.lstrip())
    end -= len(mention) - len(mention.rstrip())
    return ReviewedSpan(start, end, label, line, entity)


def _checked(spans: list[ReviewedSpan], path: Path) -> tuple[ReviewedSpan, ...]:
    """``spans`` in text order; two that overlap are a :class:`ReviewError` naming both lines."""
    ordered = sorted(spans, key=lambda span: (span.start, span.end))
    for before, after in zip(ordered, ordered[1:]):
        if after.start < before.end:
            also = f" (line {before.line})" if before.line != after.line else ""
            raise ReviewError(
                f"{path}:{after.line}: span [{after.start}, {after.end}) {after.label} overlaps "
                f"[{before.start}, {before.end}) {before.label}{also}"
            )
    return tuple(ordered)


class _InputTexts:
    """The texts of the documents a ``thunder deid --spans`` file names, read from ``thunder deid``'s inputs."""

    def __init__(self, spans_file: Path) -> None:
        self.bases = [Path.cwd(), spans_file.parent]
        self._jsonl: dict[Path, dict[str, str]] = {}

    def get(self, doc: str, file: str | None, where: str) -> str:
        try:
            if file is not None and file.lower().endswith(".jsonl"):
                found = self._find(file)
                if found is not None:
                    records = self._records(found)
                    if doc in records:
                        return records[doc]
                    raise ReviewError(f"{where}: no record with id {doc!r} in {found}")
            else:
                found = self._find(doc) or (self._find(file) if file is not None else None)
                if found is not None:
                    return read_text(found)
        except InputError as error:
            raise ReviewError(f"{where}: {error}") from None
        looked = " and ".join(map(str, dict.fromkeys(self.bases)))
        raise ReviewError(
            f"{where}: the text of document {doc!r} was not found (looked for {file or doc} in {looked}; run from the "
            "folder `thunder deid` ran in, or keep the spans file beside its inputs)"
        )

    def _find(self, name: str) -> Path | None:
        candidates = [Path(name)] if Path(name).is_absolute() else [base / name for base in self.bases]
        return next((path for path in candidates if path.is_file()), None)

    def _records(self, path: Path) -> dict[str, str]:
        if path not in self._jsonl:
            documents = read_jsonl(InputFile(path, path.name, True))
            self._jsonl[path] = {doc.id: doc.text for doc in documents if doc.error is None}
        return self._jsonl[path]
