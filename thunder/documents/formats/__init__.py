"""Judgments as courts write them: one reader and one writer per format behind one interface (``base``), over ZIP
packages of XML (``package``): ``docx``, ``hwpx``, ``pdf`` (read only).

:func:`read_document` gives the text in reading order with where each character lives (:class:`Extracted`);
:func:`render` takes replacements of character spans of that text and gives the output file's bytes: the document
in its own format with each replacement made inside the runs that held the original text, or (``out_format``) the
de-identified text as text, DOCX or HWPX. Every written document is re-read and refused when a replaced text
survives in any part. Anything that cannot be read whole and safely raises :class:`FormatError` (one line).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Mapping, Sequence

from thunder.documents.formats import docx, hwpx, pdf
from thunder.documents.formats.base import (Extracted, FormatError, Location, Replacement, Segment, apply, secrets_of,
                                            survivor)  # fmt: skip


def _hwp(path: Path, data: bytes) -> Extracted:
    raise FormatError("HWP 5 (binary) is not read yet: save it as HWPX in Hancom Office and give that file")


READERS: dict[str, Callable[[Path, bytes], Extracted]] = {
    docx.SUFFIX: docx.read, ".docm": docx.read, hwpx.SUFFIX: hwpx.read, pdf.SUFFIX: pdf.read, ".hwp": _hwp,
}
SUFFIXES = tuple(READERS)  # the suffixes of the documents read here
WRITERS = {"docx": docx, "hwpx": hwpx}  # formats written back, and written new from text
OUT_FORMATS = ("text", *WRITERS)
DEFAULT_OUT = {docx.SUFFIX: "docx", hwpx.SUFFIX: "hwpx", pdf.SUFFIX: "text"}

__all__ = ["Extracted", "FormatError", "Location", "OUT_FORMATS", "Replacement", "SUFFIXES", "Segment",
           "output_name", "read_bytes", "read_document", "render"]  # fmt: skip


def read_document(path: Path) -> Extracted:
    """The text of the document at ``path`` in reading order with its location map (:class:`FormatError`: refused;
    ``OSError``: unreadable)."""
    return READERS[path.suffix.lower()](path, path.read_bytes())


def read_bytes(name: str, data: bytes) -> Extracted:
    """The text of the document ``data`` named ``name`` (its suffix names the format; :class:`FormatError`:
    refused, an unknown suffix too)."""
    path = Path(name)
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        raise FormatError(f"{path.suffix or 'no suffix'}: not a document format read here ({', '.join(SUFFIXES)})")
    return reader(path, data)


def output_format(suffix: str, out_format: str | None) -> str:
    """What a document with ``suffix`` is written as: ``out_format``, else its own format (a PDF: text)."""
    if out_format is not None and out_format not in OUT_FORMATS:
        raise ValueError(f"out_format {out_format!r}: choose one of {', '.join(OUT_FORMATS)}")
    return out_format or DEFAULT_OUT.get(suffix.lower(), "text")


def output_name(name: str, out_format: str | None) -> str:
    """The output file name of the input ``name`` (a relative path): a document gets its output format's suffix;
    other inputs keep theirs."""
    suffix = Path(name).suffix.lower()
    if suffix not in SUFFIXES:
        return name
    target = output_format(suffix, out_format)
    return str(Path(name).with_suffix(".txt" if target == "text" else f".{target}").as_posix())


def render(extracted: Extracted, replacements: Sequence[Replacement], out_format: str | None = None,
           spans: Mapping[str, str] | None = None) -> bytes:  # fmt: skip
    """The output file of a de-identified document: ``replacements`` made, in ``out_format`` (``None``: its own).

    ``spans`` maps the texts of the replaced spans to what replaces them outside the text (document properties):
    with the replaced texts, they must not survive anywhere in the output (:class:`FormatError` otherwise).
    """
    target = output_format(extracted.format, out_format)
    text = apply(extracted.text, replacements)
    secrets = secrets_of(extracted.text, replacements, spans or {})
    if target == "text":
        if survivor(text, secrets) is not None:
            raise FormatError("a replaced text survives in the de-identified text")
        return text.encode("utf-8")
    writer = WRITERS[target]
    if f".{target}" == extracted.format:
        return writer.write(extracted, list(replacements), secrets)
    data = writer.create(text)
    writer.check(extracted.path, data, secrets)
    return data
