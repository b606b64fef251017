"""HWPX (OWPML, KS X 6101; Hancom Office): read and written over the package's XML with lxml; python-hwpx builds new
documents (another format written as HWPX) and opens every written one as a check.

Read, in this order: the sections (tables cell by cell, headers, footers, footnotes, endnotes, memos and text boxes
where they stand; tracked deletions too), master pages, then any other part holding text. Written: each replacement
inside the runs that held the text; the replaced texts scrubbed from every other part (document properties in
``Contents/content.hpf``, track-change authors); the preview text rewritten from the de-identified text; the
preview image dropped.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping

from hwpx import HwpxDocument

from thunder.documents.formats.base import Extracted, FormatError, Replacement, apply
from thunder.documents.formats.package import (Package, XmlText, check_written, drop, parse_xml, read_text, serialise,
                                               write_text)  # fmt: skip

SUFFIX = ".hwpx"
HP = "{http://www.hancom.co.kr/hwpml/2011/paragraph}"
SPEC = XmlText(
    text=frozenset({f"{HP}t"}),
    paragraph=f"{HP}p",
    inline={f"{HP}tab": "\t", f"{HP}lineBreak": "\n", f"{HP}nbSpace": "\u00a0", f"{HP}fwSpace": " "},  # words apart
)
MIMETYPE = b"application/hwp+zip"
PREVIEW_TEXT = "Preview/PrvText.txt"
PREVIEW_CHARS = 1024  # Hancom keeps the start of the text as the preview
PREVIEW_IMAGE = re.compile(r"Preview/PrvImage\.\w+")
PROPERTIES = "Contents/content.hpf"
OPF = "{http://www.idpf.org/2007/opf/}"
TEMPLATE_PROPERTIES = frozenset({"creator", "lastsaveby", "CreatedDate", "ModifiedDate", "date"})  # python-hwpx's
ORDER = (r"Contents/section(\d+)\.xml", r"Contents/masterpage(\d+)\.xml")
REACHABLE = re.compile(r"(mimetype|.*\.(xml|hpf|rdf)|Preview/PrvText\.txt|Preview/PrvImage\.\w+|"
                       r"BinData/[^/]+\.(png|jpe?g|gif|bmp|tiff?|wmf|emf|svg))", re.IGNORECASE)  # fmt: skip


def read(path: Path, data: bytes) -> Extracted:
    """The text of an HWPX file in reading order, with where each character lives."""
    package = _open(data)
    with_text = package.text_parts(SPEC.text)
    extracted = Extracted(path, SUFFIX, data, "")
    read_text(package, sorted(with_text, key=_rank), SPEC, extracted)
    return extracted


def write(extracted: Extracted, replacements: list[Replacement], secrets: Mapping[str, str]) -> bytes:
    """The HWPX with the replacements made, ``secrets`` gone from every part and the preview text the start of the
    de-identified text; checked before it is returned."""
    package = Package(extracted.data)
    dropped = drop(package, PREVIEW_IMAGE)
    changed = write_text(package, extracted, replacements, SPEC, secrets)
    if PREVIEW_TEXT in package.parts:
        preview = apply(extracted.text, replacements)[:PREVIEW_CHARS]
        changed[PREVIEW_TEXT] = preview.replace("\n", "\r\n").encode("utf-8")
    data = package.save(changed, dropped)
    check(extracted.path, data, secrets)
    return data


def create(text: str) -> bytes:
    """A new HWPX holding ``text``, one paragraph per line (the first in the new document's own first paragraph),
    with nothing of python-hwpx's template: no author, no dates, no preview image; the preview text its start."""
    document = HwpxDocument.new()
    first, *rest = text.split("\n")
    try:
        document.paragraphs[0].text = first
        for line in rest:
            document.add_paragraph(line)
        package = Package(document.to_bytes())
    except ValueError as error:  # characters XML cannot hold
        raise FormatError(f"cannot be written as HWPX ({error})") from None
    properties = parse_xml(package.parts[PROPERTIES], PROPERTIES)
    for meta in properties.getroot().iter(f"{OPF}meta"):
        if meta.get("name") in TEMPLATE_PROPERTIES:
            meta.text = None
    changed = {PROPERTIES: serialise(properties),
               PREVIEW_TEXT: text[:PREVIEW_CHARS].replace("\n", "\r\n").encode("utf-8")}  # fmt: skip
    return package.save(changed, drop(package, PREVIEW_IMAGE))


def check(path: Path, data: bytes, secrets: Mapping[str, str]) -> None:
    """Refuse written bytes that python-hwpx cannot open or in which a secret survives anywhere."""
    try:
        HwpxDocument.open(data).close()
    except Exception as error:  # python-hwpx raises several types for a broken package
        raise FormatError(f"the written HWPX does not open ({type(error).__name__})") from None
    check_written(data, secrets, lambda written: read(path, written))


def _open(data: bytes) -> Package:
    """The package of an HWPX that can be de-identified whole; refused: encrypted, scripts (macros), embedded OLE
    objects and parts of unknown kind (their text is out of reach)."""
    package = Package(data)
    if package.parts.get("mimetype", b"").strip() != MIMETYPE:
        raise FormatError("not an HWPX package (no mimetype application/hwp+zip)")
    if b"encryption-data" in package.parts.get("META-INF/manifest.xml", b""):
        raise FormatError("encrypted (password-protected)")
    for name in package.parts:
        if name.startswith("Scripts/"):
            raise FormatError(f"holds scripts (macros, {name}): refused, they could hold or send text")
        if name.lower().endswith(".ole"):
            raise FormatError(f"holds an embedded OLE object ({name}) whose text cannot be reached")
    package.check_parts(REACHABLE)
    return package


def _rank(name: str) -> tuple[int, int, str]:
    for rank, pattern in enumerate(ORDER):
        if match := re.fullmatch(pattern, name):
            return rank, int(match.group(1)), name
    return len(ORDER), 0, name
