"""DOCX (Office Open XML, Word): read and written over the package's XML with lxml; python-docx builds new
documents (another format written as DOCX) and opens every written one as a check.

Read, in this order: the body (tables cell by cell, text boxes where they stand), headers, footers, footnotes,
endnotes, comments, then any other part holding text; tracked deletions and field codes too. Written: each
replacement inside the runs that held the text; the replaced texts scrubbed from every other part (document
properties, custom XML, comment authors, alt text); the thumbnail dropped.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Mapping

import docx

from thunder.documents.formats.base import Extracted, FormatError, Replacement
from thunder.documents.formats.package import Package, XmlText, check_written, drop, read_text, write_text

SUFFIX = ".docx"
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
SPEC = XmlText(
    text=frozenset({f"{W}t", f"{W}delText", f"{W}instrText", f"{W}delInstrText"}),
    paragraph=f"{W}p",
    run=f"{W}r",
    breaks={f"{W}tab": "\t", f"{W}br": "\n", f"{W}cr": "\n"},
    preserve_space=True,
)
MACRO_TYPES = (b"macroEnabled", b"vbaProject")
ORDER = (r"word/document\d*\.xml", r"word/header\d*\.xml", r"word/footer\d*\.xml", r"word/footnotes\.xml",
         r"word/endnotes\.xml", r"word/comments\.xml")  # fmt: skip
THUMBNAIL = re.compile(r"docProps/thumbnail\.\w+")
REACHABLE = re.compile(r"(.*\.(xml|rels)|word/media/.*|word/fonts/.*|docProps/thumbnail\.\w+)", re.IGNORECASE)


def read(path: Path, data: bytes) -> Extracted:
    """The text of a DOCX file in reading order, with where each character lives."""
    package = _open(path, data)
    with_text = package.text_parts(SPEC.text)
    names = sorted(with_text, key=lambda name: (_rank(name), name))
    extracted = Extracted(path, SUFFIX, data, "")
    read_text(package, names, SPEC, extracted)
    return extracted


def write(extracted: Extracted, replacements: list[Replacement], secrets: Mapping[str, str]) -> bytes:
    """The DOCX with the replacements made and ``secrets`` gone from every part; checked before it is returned."""
    package = Package(extracted.data)
    dropped = drop(package, THUMBNAIL)
    changed = write_text(package, extracted, replacements, SPEC, secrets)
    data = package.save(changed, dropped)
    check(extracted.path, data, secrets)
    return data


def create(text: str) -> bytes:
    """A new DOCX holding ``text``, one paragraph per line (an empty line: a paragraph with an empty text element,
    so that it reads back), with empty document properties."""
    document = docx.Document()
    properties = document.core_properties
    properties.author = properties.last_modified_by = properties.title = properties.comments = ""
    try:
        for line in text.split("\n"):
            paragraph = document.add_paragraph(line)
            if not line:
                paragraph.add_run()._r.add_t("")
    except ValueError as error:  # characters XML cannot hold
        raise FormatError(f"cannot be written as DOCX ({error})") from None
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def check(path: Path, data: bytes, secrets: Mapping[str, str]) -> None:
    """Refuse written bytes that python-docx cannot open or in which a secret survives anywhere."""
    try:
        docx.Document(io.BytesIO(data))
    except Exception as error:  # python-docx raises several types for a broken package
        raise FormatError(f"the written DOCX does not open ({type(error).__name__})") from None
    check_written(data, secrets, lambda written: read(path, written))


def _open(path: Path, data: bytes) -> Package:
    """The package of a DOCX that can be de-identified whole; refused: macros, embedded objects, parts of unknown
    kind (their text is out of reach)."""
    if path.suffix.lower() == ".docm":
        raise FormatError("a macro-enabled document (.docm): refused, its macros could hold or send text")
    package = Package(data)
    if "word/document.xml" not in package.parts:
        raise FormatError("not a DOCX package (no word/document.xml)")
    types = package.parts.get("[Content_Types].xml", b"")
    if any(mark in types for mark in MACRO_TYPES) or any(n.lower().endswith("vbaproject.bin") for n in package.parts):
        raise FormatError("a macro-enabled document (it holds a VBA project): refused")
    for name in package.parts:
        if name.startswith("word/embeddings/"):
            raise FormatError(f"holds an embedded object ({name}) whose text cannot be reached")
    package.check_parts(REACHABLE)
    return package


def _rank(name: str) -> int:
    return next((i for i, pattern in enumerate(ORDER) if re.fullmatch(pattern, name)), len(ORDER))

