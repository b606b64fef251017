"""Input documents: files, directories, JSONL and stdin, listed once with what was skipped and why.

``thunder deid``, ``thunder predict`` and ``thunder tokenizer train`` read their inputs through :func:`list_inputs`
and :func:`read_documents`. A directory is searched recursively for text files (``.txt``, ``.md``) and JSONL files
(``.jsonl``; one ``{"id", "text"}`` record per line), and, where the command asks (``DOCUMENT_SUFFIXES``), for
documents (``.docx``, ``.hwpx``, ``.hwp``, ``.pdf``; :mod:`thunder.documents.formats` reads them, the text with its location
map), extensions compared case-insensitively; other files are reported as skipped. Every input file gets a relative
path under the common ancestor of the inputs, so that two inputs ``a/x.txt`` and ``b/x.txt`` can never be written to
the same output.
"""

from __future__ import annotations

import errno
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

from thunder.documents.formats import SUFFIXES as DOCUMENT_SUFFIXES
from thunder.documents.formats import Extracted, FormatError, read_document

TEXT_SUFFIXES = (".txt", ".md")
JSONL_SUFFIXES = (".jsonl",)
STDIN = "<stdin>"


class InputError(ValueError):
    """Inputs that cannot be used as given (missing, duplicated, colliding); the message names them."""


@dataclass(frozen=True)
class InputFile:
    """One input file: where it is, where its output goes (relative path), and whether it is JSONL."""

    path: Path
    relative: str
    jsonl: bool


@dataclass
class Listing:
    """The input files in a fixed order, and a line per skipped file or directory."""

    files: list[InputFile]
    skipped: list[str] = field(default_factory=list)
    stdin: bool = False
    directories: list[Path] = field(default_factory=list)  # the directory inputs, resolved


@dataclass(frozen=True)
class Document:
    """One document to process, or (``error`` set) one that cannot be read: ``where`` names file and line."""

    id: str
    text: str
    file: InputFile | None  # None: stdin
    line: int | None = None  # JSONL line
    error: str | None = None
    extracted: Extracted | None = None  # a document file (DOCX, HWPX, HWP, PDF): its text's location map

    @property
    def where(self) -> str:
        source = str(self.file.path) if self.file else STDIN
        return f"{source}:{self.line}" if self.line is not None else source


def suffix_of(path: Path) -> str:
    """The extension, with the inner one of an xz-compressed file (``.jsonl.xz``)."""
    suffixes = [s.lower() for s in path.suffixes[-2:]]
    return "".join(suffixes) if suffixes[-1:] == [".xz"] else path.suffix.lower()


def list_inputs(inputs: Sequence[str | Path], suffixes: Sequence[str] = TEXT_SUFFIXES + JSONL_SUFFIXES) -> Listing:
    """The files of ``inputs`` (files and directories; none: stdin) in a fixed order.

    Raises :class:`InputError` for a missing input, a link to nothing or a file given twice. A file given by name is
    taken whatever its extension (JSONL when it ends in ``.jsonl``); in directories, files with other extensions,
    hidden files, links to directories (not followed) and links that loop or name nothing are skipped, each named
    with its reason in ``Listing.skipped``.
    """
    if not inputs:
        return Listing([], stdin=True)
    wanted = {s.lower() for s in suffixes}
    found: list[tuple[Path, Path]] = []  # (file, base its relative path starts from)
    skipped: list[str] = []
    for name in inputs:
        path = Path(name)
        if path.is_dir():
            files, lines = _scan(path, wanted)
            found += [(file, path) for file in files]
            skipped += lines
        elif path.is_file():
            found.append((path, path.parent))
        elif path.is_symlink():
            raise InputError(f"{path}: {_dangling(path)}")
        elif path.exists():
            raise InputError(f"{path}: not a file or directory")
        else:
            raise InputError(f"{path}: no such file or directory")
    directories = [Path(name).resolve() for name in inputs if Path(name).is_dir()]
    return Listing(_relative_paths(found), skipped, directories=directories)


def _scan(directory: Path, wanted: set[str]) -> tuple[list[Path], list[str]]:
    """The files under ``directory`` with a ``wanted`` extension (links to files followed, links to directories
    not), and a line naming every other entry and why it was skipped."""
    files: list[Path] = []
    other: Counter[str] = Counter()
    hidden: list[str] = []
    lines: list[str] = []
    for _ in os.walk(directory, onerror=_refuse_unreadable):  # rglob passes over a folder it cannot read
        pass
    for entry in sorted(directory.rglob("*")):
        if entry.is_symlink() and not entry.exists():
            lines.append(f"{entry}: skipped, {_dangling(entry)}")
        elif entry.is_dir():
            if entry.is_symlink():
                lines.append(f"{entry}: skipped, a link to a directory (links to directories are not followed)")
        elif not entry.is_file():
            lines.append(f"{entry}: skipped, not a regular file")
        elif entry.name.startswith("."):
            hidden.append(entry.relative_to(directory).as_posix())
        elif suffix_of(entry) in wanted:
            files.append(entry)
        else:
            other[suffix_of(entry) or entry.name] += 1
    if other:
        kinds = ", ".join(f"{count} {kind}" for kind, count in other.most_common())
        lines.append(f"{directory}: skipped files that are not {'/'.join(sorted(wanted))} ({kinds})")
    if hidden:
        more = f" and {len(hidden) - 10} more" if len(hidden) > 10 else ""
        lines.append(f"{directory}: skipped {len(hidden)} hidden file(s): {', '.join(hidden[:10])}{more}")
    return files, lines


def _refuse_unreadable(error: OSError) -> None:
    raise InputError(f"{error.filename}: a folder that cannot be read ({error.strerror}); give read access to it, "
                     "or leave it out of the inputs")  # fmt: skip


def _dangling(link: Path) -> str:
    """Why a symbolic link names no file: it loops, or what it names does not exist."""
    try:
        link.stat()
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "a link that loops"
    return "a link to nothing (its target does not exist)"


def _relative_paths(found: list[tuple[Path, Path]]) -> list[InputFile]:
    """Each file's path relative to the common ancestor of the inputs; a file given twice is refused."""
    resolved = [(file, file.resolve(), base.resolve()) for file, base in found]
    seen: dict[Path, Path] = {}
    for file, real, _ in resolved:
        if real in seen:
            raise InputError(f"{file}: given twice (also as {seen[real]})")
        seen[real] = file
    bases = {base for _, _, base in resolved}
    root = Path(os.path.commonpath([str(b) for b in bases])) if bases else Path(".")
    # the layout is the links' (a symlinked file may point anywhere): base's place under root, then file under base
    return [
        InputFile(file, (base.relative_to(root) / file.relative_to(original)).as_posix(), suffix_of(file) in JSONL_SUFFIXES)
        for (file, original), (_, _, base) in zip(found, resolved)
    ]


def read_text(path: Path) -> str:
    """A text file as strict UTF-8; :class:`InputError` names the file and byte."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{path}: {not_utf8(data, error)}") from None


def not_utf8(data: bytes, error: UnicodeDecodeError) -> str:
    """Why ``data`` is refused; Korean text saved as CP949 (EUC-KR), as older Korean software writes it, is named so
    with the command that converts it (guessing the encoding could replace one identifier by another)."""
    reason = f"not valid UTF-8 at byte {error.start} ({error.reason})"
    try:
        data.decode("cp949")
    except UnicodeDecodeError:
        return reason
    return f"{reason}; it reads as CP949 (EUC-KR): convert it first, e.g. iconv -f cp949 -t utf-8"


def _check_encodable(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"text holds a lone surrogate at character {error.start}"
    return None


def read_documents(listing: Listing) -> Iterator[Document]:
    """Every document of ``listing`` in order; unreadable ones come with ``error`` set and empty text."""
    if listing.stdin:
        data = sys.stdin.buffer.read()
        try:
            yield Document(STDIN, data.decode("utf-8"), None)
        except UnicodeDecodeError as error:
            yield Document(STDIN, "", None, error=not_utf8(data, error))
        return
    for file in listing.files:
        try:
            if file.jsonl:
                yield from read_jsonl(file)
            elif suffix_of(file.path) in DOCUMENT_SUFFIXES:
                extracted = read_document(file.path)
                yield Document(str(file.path), extracted.text, file, extracted=extracted)
            else:
                yield Document(str(file.path), read_text(file.path), file)
        except (InputError, FormatError) as error:
            yield Document(str(file.path), "", file, error=str(error).removeprefix(f"{file.path}: "))
        except OSError as error:
            yield Document(str(file.path), "", file, error=f"cannot read ({error.strerror or error})")


def jsonl_records(path: Path, text: bool = True) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """``(line, record, None)`` for every non-blank line of a JSONL file that is an object (with a string ``"text"``
    unless ``text`` is false), ``(line, None, reason)`` for any other line; the file is read as strict UTF-8
    (:class:`InputError`)."""
    for number, line in enumerate(read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise TypeError("not a JSON object")
            if text and not isinstance(record["text"], str):
                raise TypeError("'text' is not a string")
        except (ValueError, KeyError, TypeError) as error:
            yield number, None, f"missing {error}" if isinstance(error, KeyError) else str(error)
            continue
        yield number, record, None


def read_jsonl(file: InputFile) -> Iterator[Document]:
    """The ``{"id", "text"}`` records of a JSONL file (id default: ``NAME:LINE``); a bad record comes with ``error``."""
    for number, record, reason in jsonl_records(file.path):
        default_id = f"{file.path.name}:{number}"
        doc_id = default_id if record is None else record.get("id", default_id)
        if record is not None and (not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool)):
            record, reason = None, "'id' is not a string or integer"
        if record is None:
            yield Document(default_id, "", file, number, f"bad JSONL record ({reason})")
            continue
        problem = _check_encodable(record["text"])
        yield Document(str(doc_id), "" if problem else record["text"], file, number, problem)
