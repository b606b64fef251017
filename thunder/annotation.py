"""Parser for annotated judgments: ``… <<<내국인이름>>>F<<</내국인이름>>>으로부터 …`` -> text + placeholders.

The text of an :class:`AnnotatedDocument` is the source with the tag markup removed: every character outside
the tags is kept exactly, and each placeholder's content stays in the text at ``[start, end)``.

Accepted forms (all seen in the SNU Thunder-DeID corpus):

* ``<<<tag>>>content<<</tag>>>`` on one line; the tag may be any noisy raw tag (``앞 노상``, ``(주)``, …); the
  taxonomy maps it to a label.
* content that is a letter code (``F``, ``RA``), a code with a word (``E모텔``, ``E은행``), the tag itself
  (``<<<은행>>>은행<<</은행>>>``, ``<주소>``), a masked value (``김○○``), or a redaction note
  (``계좌번호 1 생략``). Surrounding whitespace and one pair of quotes (``'C'``, ``‘C'``) stay in the text but
  outside the placeholder span.
* repairs of unambiguous slips: an extra ``>`` after a tag (``<<<동>>>>E``, ``<<</번호>>>>버스``), an opening tag written
  twice (``<<<X>>><<<X>>>B<<</X>>>``), and complete two-bracket tags (``<<면>>00<</면>>``).

Everything else is an :class:`AnnotationError` naming file, line and column: an unclosed tag (tags close on
the line they open), a mismatched or stray closing tag, nested tags, empty content or tag name, stray ``<<<`` /
``>>>``, bytes that are not UTF-8, an empty file. No tag is ever dropped.
"""

from __future__ import annotations

import bisect
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

logger = logging.getLogger(__name__)

_TAG = re.compile(r"<<<(/?)([^<>\n]*)>>>>*")  # extra ">" after a tag are a slip, dropped with it
_TAG2 = re.compile(r"(?<!<)<<(?![</])([^<>\n]+)>>(?!>)([^<>\n]+?)<</\1>>(?!>)")
_STRAY = re.compile(r"<<<|>>>")
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
    """One tagged identifier: its span in the document text, raw tag and entity key."""

    start: int
    end: int
    tag: str
    entity: str
    line: int
    column: int


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


def _core(content: str) -> tuple[int, int]:
    """Span of the identifier inside tag content: without surrounding whitespace and one pair of quotes."""
    start, end = 0, len(content)
    while start < end and content[start].isspace():
        start += 1
    while end > start and content[end - 1].isspace():
        end -= 1
    if end - start >= 3 and content[start] in _QUOTES and content[end - 1] in _QUOTES:
        start, end = start + 1, end - 1
    return start, end


def parse_annotated(raw: str, source: str = "<string>", doc_id: str | None = None) -> AnnotatedDocument:
    """Parse annotated text; raises :class:`AnnotationError` (``source:line:column``) on malformed markup."""
    where = _Positions(raw)

    def error(offset: int, reason: str) -> AnnotationError:
        line, column = where(offset)
        return AnnotationError(source, line, column, reason)

    if not raw.strip():
        raise AnnotationError(source, 1, 1, "empty document")
    parts: list[str] = []
    length = 0  # characters of text emitted so far
    placeholders: list[Placeholder] = []
    cursor = 0  # raw offset up to which the source has been consumed
    opened: re.Match[str] | None = None

    def emit_outside(end: int) -> None:
        nonlocal length
        segment = raw[cursor:end]
        stray = _STRAY.search(segment)
        if stray:
            raise error(cursor + stray.start(), f"stray {stray.group()!r} that is not part of a tag")
        parts.append(segment)
        length += len(segment)

    def emit_placeholder(tag: str, content: str, tag_offset: int) -> None:
        nonlocal length
        start, end = _core(content)
        if start == end:
            raise error(tag_offset, f"empty placeholder <<<{tag}>>>")
        line, column = where(tag_offset)
        entity = entity_key(content[start:end], tag)
        placeholders.append(Placeholder(length + start, length + end, tag, entity, line, column))
        parts.append(content)
        length += len(content)

    two_bracket = _TAG2.search(raw)  # next complete two-bracket tag, searched again only once passed
    while True:
        match = _TAG.search(raw, cursor)
        if two_bracket is not None and two_bracket.start() < cursor:
            two_bracket = _TAG2.search(raw, cursor)
        two = two_bracket if opened is None else None
        if two is not None and (match is None or two.start() < match.start()):
            emit_outside(two.start())
            emit_placeholder(two.group(1), two.group(2), two.start())
            cursor = two.end()
            continue
        if opened is not None:
            end = match.start() if match is not None else len(raw)
            newline = raw.find("\n", cursor, end)
            if newline != -1 or match is None:
                raise error(opened.start(), f"unclosed tag <<<{opened.group(2)}>>> (tags close on the line they open)")
        if match is None:
            emit_outside(len(raw))
            break
        closing, name = match.group(1) == "/", match.group(2)
        if match.start() > 0 and raw[match.start() - 1] == "<":
            raise error(match.start() - 1, f"malformed tag {('<' + match.group())!r}: too many '<'")
        if not name.strip():
            raise error(match.start(), "empty tag name")
        if not closing:
            if opened is not None:
                if name == opened.group(2) and not raw[cursor : match.start()].strip():
                    cursor = match.end()  # the same opening tag written twice
                    continue
                line, column = where(opened.start())
                raise error(match.start(), f"nested tag <<<{name}>>> inside <<<{opened.group(2)}>>> opened at {line}:{column}")
            emit_outside(match.start())
            opened, cursor = match, match.end()
            continue
        if opened is None:
            raise error(match.start(), f"closing tag <<</{name}>>> without an opening tag")
        if name.strip() != opened.group(2).strip():
            line, column = where(opened.start())
            raise error(match.start(), f"closing tag <<</{name}>>> does not match <<<{opened.group(2)}>>> opened at {line}:{column}")
        content = raw[cursor : match.start()]
        stray = re.search(r"<<|>>", content)
        if stray:
            raise error(cursor + stray.start(), f"stray {stray.group()!r} inside <<<{name}>>>")
        emit_placeholder(opened.group(2), content, opened.start())
        opened, cursor = None, match.end()
    return AnnotatedDocument(doc_id if doc_id is not None else source, "".join(parts), tuple(placeholders), source=source)


def scan_tags(raw: str) -> list[tuple[str, int, int]]:
    """Every opening tag as ``(tag, line, column)``, whatever the structure around it: lets a caller check the
    tags of a document that does not parse."""
    where = _Positions(raw)
    found = [(m.start(), m.group(2)) for m in _TAG.finditer(raw) if not m.group(1) and m.group(2).strip()]
    found += [(m.start(), m.group(1)) for m in _TAG2.finditer(raw)]
    return [(tag, *where(offset)) for offset, tag in sorted(found)]


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
    paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.suffix in (".md", ".jsonl") and p.is_file())
    for path in paths:
        rel = path.stem if path == root else path.relative_to(root).with_suffix("").as_posix()
        try:
            if path.suffix == ".jsonl":
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
