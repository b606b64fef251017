"""Judgments as courts write them: one reader and one writer per format behind one interface (``base``), over ZIP
packages of XML (``package``): ``docx``, ``hwpx``; read only: ``hwp`` (HWP 5, an OLE compound file), ``pdf``.

:func:`read_document` gives the text in reading order with where each character lives (:class:`Extracted`);
:func:`render` takes replacements of character spans of that text and gives the output file's bytes: the document
in its own format with each replacement made inside the runs that held the original text, or (``out_format``, and
always for HWP and PDF) the de-identified text as text, DOCX or HWPX. Every written document is re-read and refused
when a replaced text survives in any part; a new document must read back as the text it was made from.
:func:`restore` writes original texts back into a de-identified DOCX or HWPX (re-identification). Anything that
cannot be read whole and safely raises :class:`FormatError` (one line).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Mapping, Sequence

from thunder.documents.formats.base import (Extracted, FormatError, Location, Replacement, Segment, apply, secrets_of,
                                            survivor)  # fmt: skip

# suffix -> the module that reads it, imported with the first such document (python-docx, python-hwpx, olefile and
# pypdfium2 load only then: a command's --help never waits for them)
READ_BY = {".docx": "docx", ".docm": "docx", ".hwpx": "hwpx", ".hwp": "hwp", ".pdf": "pdf"}
SUFFIXES = tuple(READ_BY)  # the suffixes of the documents read here
WRITTEN = ("docx", "hwpx")  # formats written back, and written new from text
OUT_FORMATS = ("text", *WRITTEN)
# a document's own format, else: HWP 5 as HWPX (Hancom Office opens it, its paragraphs stay paragraphs), PDF as text
DEFAULT_OUT = {".docx": "docx", ".hwpx": "hwpx", ".hwp": "hwpx", ".pdf": "text"}

__all__ = ["Extracted", "FormatError", "Location", "OUT_FORMATS", "Replacement", "SUFFIXES", "Segment",
           "output_name", "read_bytes", "read_document", "render", "restore"]  # fmt: skip


def read_document(path: Path) -> Extracted:
    """The text of the document at ``path`` in reading order with its location map (:class:`FormatError`: refused;
    ``OSError``: unreadable)."""
    return _module(READ_BY[path.suffix.lower()]).read(path, path.read_bytes())


def read_bytes(name: str, data: bytes) -> Extracted:
    """The text of the document ``data`` named ``name`` (its suffix names the format; :class:`FormatError`:
    refused, an unknown suffix too)."""
    path = Path(name)
    name = READ_BY.get(path.suffix.lower())
    if name is None:
        raise FormatError(f"{path.suffix or 'no suffix'}: not a document format read here ({', '.join(SUFFIXES)})")
    return _module(name).read(path, data)


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
    writer = _module(target)
    if f".{target}" == extracted.format:
        return writer.write(extracted, list(replacements), secrets)
    data = writer.create(text)
    writer.check(extracted.path, data, secrets)
    if writer.read(extracted.path, data).text != text:  # its spans, mapping and re-identification need its text
        raise FormatError(f"the new {target.upper()} document does not read back as the de-identified text")
    return data


def restore(extracted: Extracted, replacements: Sequence[Replacement]) -> bytes:
    """A de-identified DOCX or HWPX with ``replacements`` (original texts, from a mapping) made inside the runs that
    hold the replaced texts and nothing scrubbed; refused (:class:`FormatError`) unless it reads back as the text the
    replacements give. Another format (a PDF, an HWP 5) is never a de-identified output."""
    if extracted.format.lstrip(".") not in WRITTEN:
        raise FormatError(f"{extracted.format} is not a format thunder deid writes: give the document it wrote")
    writer = _module(extracted.format.lstrip("."))
    data = writer.write(extracted, list(replacements), {})
    if writer.read(extracted.path, data).text != apply(extracted.text, replacements):
        raise FormatError("the restored document does not read back as the original text")
    return data


def _module(name: str) -> ModuleType:
    """The module of format ``name`` (``docx``, ``hwpx``, ``hwp``, ``pdf``)."""
    return importlib.import_module(f"{__name__}.{name}")
