"""Parser for annotated judgments: ``… <<<내국인이름>>>F<<</내국인이름>>>으로부터 …`` -> text + placeholders.

The text of an :class:`AnnotatedDocument` is the source with the tag markup removed: every character outside
the tags is kept exactly, and each placeholder's content stays in the text at ``[start, end)``.

Accepted forms (all seen in the SNU Thunder-DeID corpus):

* ``<<<tag>>>content<<</tag>>>`` on one line; the tag may be any noisy raw tag (``앞 노상``, ``(주)``, …); the
  taxonomy maps it to a label.
* content that is a letter code (``F``, ``RA``), a code with a word (``E모텔``, ``E은행``), the tag itself
  (``<<<은행>>>은행<<</은행>>>``, ``<주소>``), a masked value (``김○○``), or a redaction note
  (``계좌번호 1 생략``). Surrounding whitespace, invisible characters (zero-width space, ...) and one pair of quotes
  (``'C'``, ``‘C'``) stay in the text but outside the placeholder span.
* repairs of unambiguous slips: an extra ``>`` after a tag (``<<<동>>>>E``, ``<<</번호>>>>버스``), an opening tag written
  twice (``<<<X>>><<<X>>>B<<</X>>>``, whitespace between the two kept), and two-bracket tags (``<<면>>00<</면>>``).

Everything else is an :class:`AnnotationError` naming file, line and column: an unclosed tag (tags close on
the line they open), a mismatched or stray closing tag, nested tags, content of only whitespace, quotes or invisible
characters, an empty tag name, any other run of two or more brackets (``<<``, ``>>>``, an incomplete two-bracket tag),
bytes that are not UTF-8, an empty file. No tag is ever dropped. Parsing is one pass over the bracket runs (linear).
"""

from __future__ import annotations

import bisect
import json
import logging
import re
import string
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, NamedTuple

from thunder.documents.sources import list_inputs

logger = logging.getLogger(__name__)

# every run of two or more brackets: a tag (``<<<name>>>``, ``<<</name>>>``, two-bracket ``<<name>>``, extra ``>``
# after a tag dropped with it) or a stray run that is an error
_MARKUP = re.compile(r"(<{2,})(/?)([^<>\n]*)(>{2,})|<{2,}|>{2,}")
_QUOTES = "'\"‘’“”`"
_CODE = re.compile(r"[A-Z]{1,3}")
_CODE_WORD = re.compile(r"([A-Z]{1,3})(\S+)")
_ERROR_POLICIES = ("raise", "warn", "skip")


class AnnotationError(ValueError):
    """Malformed annotated input; ``str(error)`` is ``file:line:column: reason``."""

    def __init__(self, source: str, line: int, column: int, reason: str) -> None:
        self.source, self.line, self.column, self.reason = source, line, column, reason
        super().__init__(f"{source}:{line}:{column}: {reason}")


@dataclass(frozen=True)
class Placeholder:
    """One tagged identifier: its span in the document text, raw tag and entity key; ``shape``, where known (reviewed
    documents, :mod:`thunder.documents.reviewed`), the shape of the identifier it stands for (``가가가`` for a name)."""

    start: int
    end: int
    tag: str
    entity: str
    line: int
    column: int
    shape: str = ""


@dataclass(frozen=True)
class AnnotatedDocument:
    """A judgment with its placeholders; ``text[p.start:p.end]`` is each placeholder's content."""

    doc_id: str
    text: str
    placeholders: tuple[Placeholder, ...]
    case_type: str | None = None
    source: str | None = None


class _Positions:
    """Offset -> 1-based (line, column) in the source."""

    def __init__(self, raw: str) -> None:
        self._starts = [0] + [m.end() for m in re.finditer("\n", raw)]

    def __call__(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self._starts, offset) - 1
        return index + 1, offset - self._starts[index] + 1


def entity_key(content: str, tag: str) -> str:
    """The entity a placeholder's content names: its letter code (``E`` for ``E``, ``'E'`` or ``E모텔`` under
    ``<<<모텔>>>``), else the content itself."""
    if _CODE.fullmatch(content):
        return content
    match = _CODE_WORD.fullmatch(content)
    if match and "".join(tag.split()).endswith(match.group(2)):
        return match.group(1)
    return content


def placeholder_sequence(alphabet: str = string.ascii_uppercase) -> Iterator[str]:
    """A, B, ..., Z, AA, AB, ..., AZ, BA, ..., ZZ, AAA, ... over ``alphabet`` (bijective base-n numbering)."""
    if not alphabet:
        raise ValueError("placeholder alphabet is empty")
    n = len(alphabet)
    index = 0
    while True:
        value, letters = index + 1, []
        while value:
            value, rest = divmod(value - 1, n)
            letters.append(alphabet[rest])
        yield "".join(reversed(letters))
        index += 1


def _blank(char: str) -> bool:
    """Whitespace or an invisible format character (zero-width space, joiners, BOM, ...)."""
    return char.isspace() or unicodedata.category(char) == "Cf"


def _visible(text: str) -> bool:
    """Whether ``text`` holds a character that is not whitespace, invisible or a quote."""
    for char in text:
        if char not in _QUOTES and not _blank(char):
            return True
    return False


def _core(content: str) -> tuple[int, int]:
    """Span of the identifier inside tag content: without surrounding whitespace, invisible characters and one
    pair of quotes."""
    start, end = 0, len(content)

    def strip() -> None:
        nonlocal start, end
        while start < end and _blank(content[start]):
            start += 1
        while end > start and _blank(content[end - 1]):
            end -= 1

    strip()
    if end - start >= 2 and content[start] in _QUOTES and content[end - 1] in _QUOTES:
        start, end = start + 1, end - 1
        strip()
    return start, end


class _Tag(NamedTuple):
    """A tag as written: ``<<<name>>>``, ``<<</name>>>`` or the two-bracket ``<<name>>`` / ``<</name>>``."""

    offset: int
    name: str
    brackets: int
    closing: bool

    def __str__(self) -> str:
        return "<" * self.brackets + "/" * self.closing + self.name + ">" * self.brackets


def _tag(mark: re.Match[str], error: Callable[[int, str], AnnotationError], opened: _Tag | None) -> _Tag:
    """The tag a markup match stands for; raises on a stray or malformed bracket run."""
    less, slash, name, greater = mark.groups()
    if less is None:
        where = f"inside {opened}" if opened is not None else "that is not part of a tag"
        raise error(mark.start(), f"stray {mark.group()!r} {where}")
    if len(less) > 3:
        raise error(mark.start() + len(less) - 4, f"malformed tag {mark.group()!r}: too many '<'")
    brackets = len(less)
    if len(greater) < brackets or (brackets == 2 and len(greater) > 2):
        raise error(mark.start(), f"malformed tag {mark.group()!r}: {brackets} '<' but {len(greater)} '>'")
    if not _visible(name):
        raise error(mark.start(), "empty tag name")
    return _Tag(mark.start(), name, brackets, bool(slash))


def parse_annotated(raw: str, source: str = "<string>", doc_id: str | None = None) -> AnnotatedDocument:
    """Parse annotated text; raises :class:`AnnotationError` (``source:line:column``) on malformed markup.

    One pass over the bracket runs of ``raw`` (linear time)."""
    where = _Positions(raw)

    def error(offset: int, reason: str) -> AnnotationError:
        return AnnotationError(source, *where(offset), reason)

    def unclosed(tag: _Tag) -> AnnotationError:
        return error(tag.offset, f"unclosed tag {tag} (tags close on the line they open)")

    if not raw.strip():
        raise AnnotationError(source, 1, 1, "empty document")
    parts: list[str] = []  # text so far
    length = 0  # characters of text so far
    placeholders: list[Placeholder] = []
    cursor = 0  # raw offset up to which the source has been consumed
    opened: _Tag | None = None
    content: list[str] = []  # content of the open tag so far
    blank = True  # whether that content is only whitespace

    for mark in _MARKUP.finditer(raw):
        between = raw[cursor : mark.start()]
        if opened is not None and "\n" in between:
            raise unclosed(opened)
        tag = _tag(mark, error, opened)
        cursor = mark.end()
        if opened is None:
            if tag.closing:
                raise error(tag.offset, f"closing tag {tag} without an opening tag")
            parts.append(between)
            length += len(between)
            opened, content, blank = tag, [], True
            continue
        content.append(between)
        blank = blank and not between.strip()
        if not tag.closing:
            if (tag.name, tag.brackets) == (opened.name, opened.brackets) and blank:
                continue  # the same opening tag written twice: dropped, the whitespace around it kept
            line, column = where(opened.offset)
            raise error(tag.offset, f"nested tag {tag} inside {opened} opened at {line}:{column}")
        if tag.name.strip() != opened.name.strip() or tag.brackets != opened.brackets:
            line, column = where(opened.offset)
            raise error(tag.offset, f"closing tag {tag} does not match {opened} opened at {line}:{column}")
        text = "".join(content)
        start, end = _core(text)
        if not _visible(text[start:end]):
            raise error(opened.offset, f"empty placeholder {opened} (only whitespace, quotes or invisible characters)")
        line, column = where(opened.offset)
        entity = entity_key(text[start:end], opened.name)
        placeholders.append(Placeholder(length + start, length + end, opened.name, entity, line, column))
        parts.append(text)
        length += len(text)
        opened = None
    if opened is not None:
        raise unclosed(opened)
    parts.append(raw[cursor:])
    return AnnotatedDocument(doc_id if doc_id is not None else source, "".join(parts), tuple(placeholders), source=source)


def scan_tags(raw: str) -> list[tuple[str, int, int]]:
    """Every opening tag as ``(tag, line, column)``, whatever the structure around it: lets a caller check the
    tags of a document that does not parse."""
    where = _Positions(raw)
    found = []
    for mark in _MARKUP.finditer(raw):
        less, slash, name, greater = mark.groups()
        if less is None or slash or not _visible(name) or len(greater) < min(len(less), 3):
            continue
        found.append((name, *where(mark.start() + max(len(less) - 3, 0))))
    return found


def read_source(source: str) -> str | None:
    """The raw annotated text behind an :class:`AnnotationError` source (a file or ``file.jsonl[line N]``),
    decoded leniently; ``None`` if it cannot be read."""
    match = re.fullmatch(r"(.*)\[line (\d+)\]", source)
    try:
        if match is None:
            return Path(source).read_bytes().decode("utf-8", errors="replace")
        line = Path(match.group(1)).read_bytes().decode("utf-8", errors="replace").split("\n")[int(match.group(2)) - 1]
        record = json.loads(line)
        return record.get("annotated") if isinstance(record, dict) else None
    except (OSError, IndexError, ValueError):
        return None


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        column = len(data[line_start : exc.start].decode("utf-8", errors="replace")) + 1
        raise AnnotationError(source, line, column, f"not UTF-8 (byte 0x{data[exc.start]:02x})") from None


def read_annotated(path: str | Path, doc_id: str | None = None, case_type: str | None = None) -> AnnotatedDocument:
    """Read and parse one annotated file (strict UTF-8)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise AnnotationError(str(path), 1, 1, f"cannot read: {exc.strerror or exc}") from exc
    doc = parse_annotated(_decode(data, str(path)), source=str(path), doc_id=doc_id if doc_id is not None else path.stem)
    return AnnotatedDocument(doc.doc_id, doc.text, doc.placeholders, case_type, doc.source)


def _iter_jsonl(path: Path, rel: str) -> Iterator[AnnotatedDocument | AnnotationError]:
    """Documents of a JSONL file; a record that does not parse is yielded as its error, so others still load."""
    text = _decode(path.read_bytes(), str(path))
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield AnnotationError(str(path), number, exc.colno, f"invalid JSON: {exc.msg}")
            continue
        if not isinstance(record, dict) or not isinstance(record.get("annotated"), str):
            yield AnnotationError(str(path), number, 1, "record has no string field 'annotated'")
            continue
        source = f"{path}[line {number}]"
        doc_id = str(record.get("doc_id") or record.get("id") or f"{rel}/{number}")
        try:
            doc = parse_annotated(record["annotated"], source=source, doc_id=doc_id)
        except AnnotationError as exc:
            yield exc
            continue
        case_type = record.get("case_type") or record.get("casetype")
        yield AnnotatedDocument(doc.doc_id, doc.text, doc.placeholders, case_type, source)


def iter_corpus(
    root: str | Path, errors: str = "warn", failures: list[AnnotationError] | None = None
) -> Iterator[AnnotatedDocument]:
    """Every annotated document under ``root`` (a directory or a single file), in sorted path order.

    ``*.md`` files: ``doc_id`` is the path relative to ``root`` without suffix, ``case_type`` the parent folder.
    ``*.jsonl`` files (a Hugging Face dataset saved locally): one record per line with an ``annotated`` field;
    ``doc_id`` from ``doc_id``/``id`` (else ``file/line``), ``case_type`` from ``case_type``/``casetype``.

    A malformed document is handled by ``errors``: ``"raise"`` raises its :class:`AnnotationError`; ``"warn"``
    (default) logs it and goes on; ``"skip"`` goes on quietly. Skipped errors are appended to ``failures``.
    """
    if errors not in _ERROR_POLICIES:
        raise ValueError(f"errors must be one of {_ERROR_POLICIES}, got {errors!r}")
    root = Path(root)
    if not root.exists():
        raise FileNotFoundError(f"annotated corpus not found: {root}")
    listing = list_inputs([root], suffixes=(".md", ".jsonl"))
    for line in listing.skipped:
        logger.warning("annotated corpus: %s", line)
    for file in listing.files:
        path, rel = file.path, file.relative.rsplit(".", 1)[0]
        try:
            if file.jsonl:
                for item in _iter_jsonl(path, rel):
                    if isinstance(item, AnnotationError):
                        _handle(item, errors, failures)
                    else:
                        yield item
            else:
                yield read_annotated(path, doc_id=rel, case_type=path.parent.name)
        except AnnotationError as exc:
            _handle(exc, errors, failures)


def _handle(exc: AnnotationError, errors: str, failures: list[AnnotationError] | None) -> None:
    if errors == "raise":
        raise exc
    if failures is not None:
        failures.append(exc)
    if errors == "warn":
        logger.warning("skipping malformed document: %s", exc)
