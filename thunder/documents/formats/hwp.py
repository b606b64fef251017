"""HWP 5 (Hancom's binary format before HWPX, an OLE compound file of record streams): read with olefile and the
published record format (Hancom, 한글 문서 파일 구조 5.0, revision 1.3). Never written back: a ``.hwp`` input is written
as a new HWPX (the default), DOCX or text made from its de-identified text, so nothing of the binary file (document
properties, the preview text and image, scripts, document history) reaches the output.

Read, in this order: the sections (``BodyText/Section0``, ``Section1``, ...), each paragraph's text with the paragraph
lists of its controls where they stand (table cells row by row, headers, footers, footnotes, endnotes, text boxes,
captions, hidden comments), memos where the last section holds them. Control characters are skipped by their size
(one code unit, or eight for inline and extended controls); a line break is a new line, a tab a tab.

Refused (:class:`FormatError`, one line): a password, distribution (배포용), DRM, certificate or privacy protection
(the text is encrypted), tracked changes (deleted text would be published as text), an embedded OLE object, text this
reader does not reach (equations, TextArt, form objects, charts, 덧말, 글자 겹침), a file that is corrupt, truncated, or
expands past the limits of ZIP packages.
"""

from __future__ import annotations

import io
import re
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import olefile

from thunder.documents.formats.base import Extracted, FormatError, Segment
from thunder.documents.formats.package import MAX_ENTRIES, MAX_EXPANDED, MAX_RATIO, OLE_SIGNATURE, RATIO_FROM

SUFFIX = ".hwp"
SIGNATURE = b"HWP Document File"
MAJOR_VERSION = 5
COMPRESSED = 0x1  # FileHeader properties, bit 0: the record streams are raw deflate
PROTECTIONS = (  # FileHeader properties bits that keep the text from a reader
    (0x2, "encrypted (password-protected)"),
    (0x4, "a distribution document (배포용 문서): its text is encrypted for viewing only"),
    (0x10, "DRM-protected: its text is encrypted"),
    (0x100, "encrypted with a certificate (공인 인증서 암호화)"),
    (0x400, "DRM-protected with a certificate: its text is encrypted"),
    (0x2000, "a privacy-protected document (개인 정보 보안): part of its text is encrypted"),
    (0x4000, "holds tracked changes (변경 추적): accept or reject them in Hancom Office and save it again, or "
             "their deleted text would be published as text"),
)  # fmt: skip
TAG_DOCUMENT_PROPERTIES, TAG_BIN_DATA = 0x10, 0x12  # DocInfo
TAG_PARA_HEADER, TAG_PARA_TEXT, TAG_CTRL_HEADER = 0x42, 0x43, 0x47  # BodyText
BIN_DATA_STORAGE = 2  # a BinData item of type STORAGE: an embedded OLE object
UNREACHED_RECORDS = {0x54: "an embedded OLE object", 0x58: "an equation", 0x5A: "TextArt", 0x5B: "a form object",
                     0x5F: "a chart"}  # fmt: skip
UNREACHED_CONTROLS = {b"tdut": "덧말 (ruby text)", b"tcps": "글자 겹침 (overlapping characters)"}
ONE_UNIT = frozenset({0, 10, 13, *range(24, 32)})  # char controls; every other code below 32 spans 8 code units
EXTENDED = frozenset({1, 2, 3, 11, 12, 14, 15, 16, 17, 18, 21, 22, 23})  # each has a CTRL_HEADER record
CONTROL_TEXT = {9: "\t", 24: "-", 30: " ", 31: " "}  # tab, hyphen, non-breaking and fixed-width space
LINE_BREAK = 10
MAX_LEVEL = 128  # record nesting (tables in tables); deeper is refused
SECTION = re.compile(r"Section(\d+)")
_CONTROL = re.compile(r"[\x00-\x1f]")

Piece = tuple[str, int | None]  # characters and the paragraph they live in (None: a separator, living nowhere)
Line = list[Piece]


@dataclass
class Record:
    """One data record of a stream and the records below it (the next level)."""

    tag: int
    level: int
    payload: bytes
    children: list[Record] = field(default_factory=list)


def read(path: Path, data: bytes) -> Extracted:
    """The text of an HWP 5 file in reading order, with where each character lives (part ``BodyText/SectionN``,
    the paragraph's number in that stream, the run of characters between two controls)."""
    ole = _open(data)
    try:
        compressed = _check_header(_stream(ole, "FileHeader"))
        budget = [MAX_EXPANDED]  # bytes left to inflate, shared by the streams
        sections = _sections(ole, _records(_expanded(ole, "DocInfo", compressed, budget), "DocInfo"))
        extracted = Extracted(path, SUFFIX, data, "")
        lines: list[tuple[str, Line]] = []
        for name in sections:
            roots = _records(_expanded(ole, name, compressed, budget), name)
            lines += [(name, line) for line in _paragraphs(roots, [0])]
    finally:
        ole.close()
    _assemble(extracted, lines)
    return extracted


def _open(data: bytes) -> olefile.OleFileIO:
    """The OLE compound file of an HWP 5 document; refused: another format, too many streams, corrupt or truncated."""
    if not data.startswith(OLE_SIGNATURE):
        if data.startswith(b"PK"):
            raise FormatError("a ZIP package under the .hwp suffix (an HWPX?): give it the suffix .hwpx")
        if data.startswith(SIGNATURE):
            raise FormatError("HWP 3 or older (not an OLE compound file): not read; save it as HWPX in Hancom Office")
        raise FormatError("corrupt or truncated: not an HWP 5 file (no OLE compound file signature)")
    try:
        ole = olefile.OleFileIO(io.BytesIO(data))
        streams = ole.listdir(streams=True, storages=False)
    except Exception as error:  # olefile raises several types for a damaged file
        raise FormatError(f"corrupt or truncated: not a readable OLE compound file ({error})") from None
    if len(streams) > MAX_ENTRIES:
        ole.close()
        raise FormatError(f"too many streams ({len(streams):,} > {MAX_ENTRIES:,}): refused as a possible bomb")
    return ole


def _stream(ole: olefile.OleFileIO, name: str) -> bytes:
    if not ole.exists(name):
        raise FormatError(f"corrupt or truncated: not an HWP 5 document (no {name} stream)")
    try:
        return ole.openstream(name).read()
    except Exception as error:  # a stream whose sectors lie past the end of a truncated file
        raise FormatError(f"corrupt or truncated: stream {name} cannot be read ({error})") from None


def _check_header(header: bytes) -> bool:
    """Whether the record streams are compressed; refused: not HWP 5, or its text protected."""
    if not header.startswith(SIGNATURE) or len(header) < 40:
        raise FormatError("corrupt or truncated: not an HWP 5 document (its FileHeader has no HWP signature)")
    version, properties = struct.unpack_from("<II", header, 32)
    if version >> 24 != MAJOR_VERSION:
        raise FormatError(f"HWP version {version >> 24}.{version >> 16 & 0xFF}: not read (HWP 5 only)")
    for bit, reason in PROTECTIONS:
        if properties & bit:
            raise FormatError(reason)
    return bool(properties & COMPRESSED)


def _expanded(ole: olefile.OleFileIO, name: str, compressed: bool, budget: list[int]) -> bytes:
    """The bytes of a record stream, inflated (raw deflate) within what is left of ``budget``."""
    raw = _stream(ole, name)
    if not compressed:
        return raw
    inflater = zlib.decompressobj(-15)
    try:
        data = inflater.decompress(raw, budget[0] + 1)
    except zlib.error as error:
        raise FormatError(f"corrupt or truncated: stream {name} does not decompress ({error})") from None
    if len(data) > budget[0]:
        raise FormatError(f"expands past {MAX_EXPANDED >> 20} MiB: refused as a possible bomb")
    if len(data) > RATIO_FROM and len(data) > MAX_RATIO * max(len(raw), 1):
        raise FormatError(f"stream {name} expands {len(data) // max(len(raw), 1):,} times: refused as a possible bomb")
    if not inflater.eof:
        raise FormatError(f"corrupt or truncated: stream {name} is cut off")
    budget[0] -= len(data)
    return data


def _records(data: bytes, name: str) -> list[Record]:
    """The records of a stream as a tree by their levels; refused: a record cut off, or nested too deep."""
    roots: list[Record] = []
    stack: list[Record] = []
    position = 0
    while position < len(data):
        if position + 4 > len(data):
            raise FormatError(f"corrupt or truncated: stream {name} ends inside a record header")
        (header,) = struct.unpack_from("<I", data, position)
        position += 4
        tag, level, size = header & 0x3FF, header >> 10 & 0x3FF, header >> 20
        if size == 0xFFF:  # a long record: its size follows
            if position + 4 > len(data):
                raise FormatError(f"corrupt or truncated: stream {name} ends inside a record header")
            (size,) = struct.unpack_from("<I", data, position)
            position += 4
        if position + size > len(data):
            raise FormatError(f"corrupt or truncated: a record of stream {name} runs past its end")
        if level > MAX_LEVEL:
            raise FormatError(f"stream {name} nests records {level} levels deep: refused (at most {MAX_LEVEL})")
        record = Record(tag, level, data[position : position + size])
        position += size
        while stack and stack[-1].level >= level:
            stack.pop()
        (stack[-1].children if stack else roots).append(record)
        stack.append(record)
        _check_reached(record, name)
    return roots


def _check_reached(record: Record, name: str) -> None:
    """Refuse a record whose text this reader does not reach, or an embedded OLE object."""
    if record.tag in UNREACHED_RECORDS and name != "DocInfo":
        raise FormatError(f"holds {UNREACHED_RECORDS[record.tag]} ({name}) whose text is not read: refused")
    if record.tag == TAG_CTRL_HEADER and name != "DocInfo" and record.payload[:4][::-1] in UNREACHED_CONTROLS:
        control = UNREACHED_CONTROLS[record.payload[:4][::-1]]
        raise FormatError(f"holds a {control} ({name}) whose text is not read: refused")
    storage = record.tag == TAG_BIN_DATA and record.payload[:1] and record.payload[0] & 0xF == BIN_DATA_STORAGE
    if storage and name == "DocInfo":
        raise FormatError("holds an embedded OLE object (a BinData storage) whose text cannot be reached")


def _sections(ole: olefile.OleFileIO, doc_info: list[Record]) -> list[str]:
    """The section streams in order; refused when they are not the sections DocInfo names."""
    properties = next((r for r in doc_info if r.tag == TAG_DOCUMENT_PROPERTIES and len(r.payload) >= 2), None)
    if properties is None:
        raise FormatError("corrupt or truncated: DocInfo has no document properties record")
    (count,) = struct.unpack_from("<H", properties.payload)
    found = sorted(int(m.group(1)) for path in ole.listdir(streams=True, storages=False)
                   if len(path) == 2 and path[0] == "BodyText" and (m := SECTION.fullmatch(path[1])))  # fmt: skip
    if found != list(range(count)):
        raise FormatError(f"corrupt or truncated: DocInfo names {count} sections, BodyText holds "
                          f"{', '.join(f'Section{n}' for n in found) or 'none'}")  # fmt: skip
    return [f"BodyText/Section{n}" for n in found]


def _paragraphs(records: list[Record], counter: list[int]) -> list[Line]:
    """The lines of every paragraph among ``records`` and below them (list headers, shapes, memo lists hold
    paragraphs), in stream order; ``counter`` numbers the paragraphs of the stream."""
    lines: list[Line] = []
    for record in records:
        if record.tag == TAG_PARA_HEADER:
            lines += _paragraph(record, counter)
        else:
            lines += _paragraphs(record.children, counter)
    return lines


def _paragraph(header: Record, counter: list[int]) -> list[Line]:
    """A paragraph's lines: its text (its text records joined), split at line breaks, with the paragraph lists of
    its controls spliced in where their control characters stand (each on lines of its own; a control whose
    character is not found, and any other record holding paragraphs, after the text); an empty paragraph is an
    empty line."""
    number = counter[0]
    counter[0] += 1
    raw = b"".join(r.payload for r in header.children if r.tag == TAG_PARA_TEXT)
    if len(raw) % 2:
        raise FormatError("corrupt or truncated: a paragraph's text is cut inside a character")
    units = "".join(map(chr, struct.unpack(f"<{len(raw) // 2}H", raw)))  # one character per UTF-16 code unit
    controls = [r for r in header.children if r.tag == TAG_CTRL_HEADER]
    lines: list[Line] = []
    line: Line = []
    open_line = True  # the current line is one to keep, even empty (a paragraph's start, after a line break)

    def splice(records: list[Record]) -> None:
        nonlocal line, open_line
        inner = _paragraphs(records, counter)
        if inner:
            if line:
                lines.append(line)
            lines.extend(inner)
            line, open_line = [], False

    position = 0
    while match := _CONTROL.search(units, position):
        at, code = match.start(), ord(match.group())
        if at > position:
            line.append((_text(units[position:at]), number))
            open_line = True
        size = 1 if code in ONE_UNIT else 8
        if at + size > len(units):
            raise FormatError("corrupt or truncated: a control character is cut off in a paragraph's text")
        if code == LINE_BREAK:
            lines.append(line)
            line, open_line = [], True
        elif code in CONTROL_TEXT:
            line.append((CONTROL_TEXT[code], None))
            open_line = True
        elif code in EXTENDED and controls and _control_id(units[at + 1 : at + 3]) == controls[0].payload[:4]:
            splice(controls.pop(0).children)
        position = at + size
    if position < len(units):
        line.append((_text(units[position:]), number))
        open_line = True
    for control in controls:  # controls whose characters were not found: their text still comes, after the text
        splice(control.children)
    splice([r for r in header.children if r.tag not in (TAG_PARA_TEXT, TAG_CTRL_HEADER)])  # nothing left unread
    if open_line or line:
        lines.append(line)
    return lines


def _control_id(units: str) -> bytes:
    """The 4-byte control id an extended control character carries in its next two code units."""
    return struct.pack("<2H", *map(ord, units))


def _text(units: str) -> str:
    """Characters from code units (surrogate pairs joined); refused: a lone surrogate."""
    try:
        return units.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    except UnicodeDecodeError:
        raise FormatError("corrupt: a paragraph's text is not valid UTF-16 (a lone surrogate)") from None


def _assemble(extracted: Extracted, lines: list[tuple[str, Line]]) -> None:
    """The text (lines joined by line breaks) and its segments, one per run of characters of a paragraph."""
    pieces: list[str] = []
    length = 0
    runs: dict[str, int] = {}
    for k, (part, line) in enumerate(lines):
        if k:
            pieces.append("\n")
            length += 1
        for text, paragraph in line:
            if paragraph is not None and text:
                run = runs[part] = runs.get(part, -1) + 1
                extracted.segments.append(Segment(length, length + len(text), part, paragraph, run))
            pieces.append(text)
            length += len(text)
    extracted.text = "".join(pieces)
