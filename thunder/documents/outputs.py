"""Writing results so that finished work survives: atomic files, JSONL appended and flushed per document, resume.

A text output is written through a temporary file in the same directory and ``os.replace``, so it is either
absent or complete; its existence marks the document done. A JSONL output (and the spans file) gets one line per
document, flushed at once; a line of ours cut short by a crash is dropped when the file is opened again, and lines
that are not ours are never dropped. Files are created readable by their owner only. Temporary files left by a
killed run are removed by the next run over the same output directory.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Callable, Collection, Hashable, TextIO

_TEMP_MARK = ".thunder-"


def write_atomic(path: Path, text: str | bytes, like: os.stat_result | None = None, *, sync: bool = False,
                 exclusive: bool = False, mode: int | None = None) -> None:  # fmt: skip
    """Write ``text`` (UTF-8) to ``path`` whole or not at all: through a temporary file in the same directory and
    ``os.replace`` (``exclusive``: a hard link instead, so an existing ``path`` is never replaced but refused with
    ``FileExistsError``). The file is readable by its owner only (0600) unless ``like`` is given: the file written
    over, whose owner and mode it keeps, or ``mode`` (its read and write bits: an input's, for its output).
    ``sync``: the file and its directory entry are on disk when this returns."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}{_TEMP_MARK}", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(text.encode("utf-8") if isinstance(text, str) else text)
            if like is not None:
                os.fchown(stream.fileno(), like.st_uid, like.st_gid)  # first: a change of owner clears set-id bits
                os.fchmod(stream.fileno(), like.st_mode & 0o7777)
            elif mode is not None:
                os.fchmod(stream.fileno(), mode & 0o666)
            if sync:
                stream.flush()
                os.fsync(stream.fileno())
        if exclusive:
            os.link(temp, path)
        else:
            os.replace(temp, path)
    except OSError as error:  # named by the file it was for, not the temporary one (a full disk: no name at all)
        raise OSError(error.errno, error.strerror or str(error), str(path)) from None
    finally:
        Path(temp).unlink(missing_ok=True)  # gone already unless the file was linked, or not written
    if sync:
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def remove_temporary_files(directory: Path) -> int:
    """Delete the temporary files :func:`write_atomic` left under ``directory`` (a killed run); returns how many."""
    if not directory.is_dir():
        return 0
    stale = [p for p in directory.rglob(f".*{_TEMP_MARK}*.tmp") if p.is_file()]
    for path in stale:
        path.unlink(missing_ok=True)
    return len(stale)


class JsonlAppender:
    """A JSONL file appended to one document's records at a time, each write flushed (and synced with ``sync``);
    created readable by the owner only (0600) unless ``mode`` says otherwise (an input's, for its output).

    Lines already in the file are kept, except records of our own: from byte ``ours`` on (those that earlier runs
    into the same output wrote; ``None``: none are ours). Of ours, a line cut off by a killed run is dropped, and
    :meth:`drop_unfinished` drops those of documents written again. A last line of someone else's without its
    newline gets one when it is complete JSON, and is refused when it is not.
    """

    def __init__(self, path: Path, ours: int | None = None, sync: bool = False, mode: int = 0o600) -> None:
        self.path, self._sync, self._mode = path, sync, mode & 0o666
        path.parent.mkdir(parents=True, exist_ok=True)
        data = path.read_bytes() if path.is_file() else b""
        head, tail = data[: len(data) if ours is None else ours], data[len(data) if ours is None else ours :]
        if head and not head.endswith(b"\n"):
            _complete(path, head[head.rfind(b"\n") + 1 :], head.count(b"\n") + 1)
            head += b"\n"
        lines = tail.split(b"\n")
        first = head.count(b"\n") + 1
        self._head = head
        self._ours = [(_record(path, line, first + n), line) for n, line in enumerate(lines[:-1]) if line.strip()]
        if lines[-1].strip() and _parses(lines[-1]):  # a record whose newline was cut off
            self._ours.append((_record(path, lines[-1], first + len(lines) - 1), lines[-1]))
        if self._content() != data and tail:
            write_atomic(path.resolve(), self._content(), mode=self._mode)
        elif self._content() != data:  # only a newline to add: append it rather than rewrite someone else's file
            with path.open("ab") as stream:
                stream.write(b"\n")
        self.start = len(head)  # where our records begin
        self._stream = self._open()

    @property
    def records(self) -> list[dict]:
        """Our records (from ``start`` on)."""
        return [record for record, _ in self._ours]

    def drop_unfinished(self, key: Callable[[dict], Hashable], pending: Collection, known: Collection) -> None:
        """Drop our records of the documents written again (their ``key`` in ``pending``), unless one of them is of
        a document outside ``known``: then another run wrote there too, and every record stays."""
        keys = [key(record) for record, _ in self._ours]
        if not all(k in known for k in keys) or not any(k in pending for k in keys):
            return
        self._ours = [entry for entry, k in zip(self._ours, keys) if k not in pending]
        self._stream.close()
        write_atomic(self.path.resolve(), self._content(), mode=self._mode)
        self._stream = self._open()

    def write(self, records: list[dict]) -> None:
        """Append ``records`` (one document's) and flush."""
        self._stream.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
        self._stream.flush()
        if self._sync:
            os.fsync(self._stream.fileno())

    def close(self) -> None:
        self._stream.close()

    def _content(self) -> bytes:
        return self._head + b"".join(line + b"\n" for _, line in self._ours)

    def _open(self) -> TextIO:
        descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, self._mode)
        return os.fdopen(descriptor, "a", encoding="utf-8", newline="")


def _parses(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def _complete(path: Path, line: bytes, number: int) -> None:
    if not _parses(line):
        raise ValueError(f"{path}:{number}: the last line is not complete JSON (cut off?): repair or remove it, or "
                         "choose another file")  # fmt: skip


def _record(path: Path, line: bytes, number: int) -> dict:
    try:
        record = json.loads(line)
    except ValueError as error:
        raise ValueError(f"{path}:{number}: not a JSON line ({error})") from None
    if not isinstance(record, dict):
        raise ValueError(f"{path}:{number}: not a JSON object")
    return record
