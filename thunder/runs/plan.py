"""One output plan for ``thunder deid`` and ``thunder predict``: where every document goes, what is done already,
what produced it, one run at a time, and what happened.

The steps, all but the last two before any document is read:

1. **list**: :func:`thunder.documents.sources.list_inputs`, then one :class:`Slot` per document under the :class:`Layout`;
2. **check**: refuse an output inside an input directory, over an input, or shared by two documents, and a
   single-file output (``--spans``, ``--mapping``, ...) that is an input or another output; files are compared by
   device and inode, so a hard link is the file it links to, and ``in_place`` refuses a file with a second link;
3. **lock**: ``OUT/.thunder.lock`` (``flock``: the kernel releases it when its process dies, so the lock of a
   killed run never blocks the next one; a second run while one is alive is refused);
4. **record**: ``OUT/.thunder-run.json`` records, for every output file, the settings that made it (the model's
   SHA-256, the pipeline options that change outputs, the output options; keyed by their SHA-256). An output is done
   only when its own record names this run's settings: a folder holding any output made under other settings, or one
   with no record of its own (an older Thunder's), is refused unless ``overwrite`` (which redoes this run's outputs;
   the others keep their own records), and the line names the output and says what differs;
5. **done set**: a killed run's temporary files are removed; a document whose output exists is skipped; a file
   appended to (spans, mapping) keeps every line except the records that runs into ``OUT`` wrote for documents
   this run writes again (unfinished ones);
6. **write**: each document when done, its spans first and its output last (the output marks it done);
7. **report**: a failed document as ``file:line: reason`` at once; at the end every skipped input with its reason
   and ``N written, M already done, K failed, of T documents``; Ctrl-C or SIGTERM ends with ``interrupted: N of T
   documents written`` and exit code 130.

Two layouts: ``MIRROR`` (``thunder deid``: each input's relative path under ``OUT``, a JSONL input gives a JSONL
output, one spans file) and ``PER_DOCUMENT`` (``thunder predict``: one text file per document, a JSONL record with
id ``X`` of ``c.jsonl`` as ``OUT/c/X.txt``, its spans beside it as ``X.txt.spans.jsonl``, failures in
``OUT/failed.jsonl``).
"""

from __future__ import annotations

import datetime
import errno
import fcntl
import hashlib
import json
import os
import signal
import socket
import stat
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Mapping, Sequence

from thunder.deid.mapping import replacing_edits
from thunder.deid.pipeline import DeidResult, DetectedSpan
from thunder.documents.formats import Extracted, Replacement, render
from thunder.documents.outputs import JsonlAppender, remove_temporary_files, write_atomic
from thunder.documents.sources import Document, InputError, Listing
from thunder.runs.names import Layout, Slot, escaped, holds_replaced, replaced_texts
from thunder.runs.settings import settings_key

INTERRUPTED = 130  # exit code after Ctrl-C or SIGTERM
LOCK_FILE = ".thunder.lock"
RECORD_FILE = ".thunder-run.json"
RECORD_FORMAT = "thunder-run/2"
OLD_RECORD_FORMAT = "thunder-run/1"  # one set of settings for the whole folder: no output counts as recorded
FAILED_FILE = "failed.jsonl"
SPANS_SUFFIX = ".spans.jsonl"
RESERVED = (LOCK_FILE, RECORD_FILE)
PROGRESS_SECONDS = 30.0  # a progress line at most this often


def span_record(doc_id: str, span: DetectedSpan, file: str | None = None, with_text: bool = True) -> dict:
    """The spans-file record of one span (``file``: the input's relative path); ``with_text=False`` leaves the
    original identifier out."""
    record: dict[str, Any] = {"doc": doc_id}
    if file is not None:
        record["file"] = file
    record.update(asdict(span))
    if not with_text:
        del record["text"]
    return record


def document_output(extracted: Extracted, result: DeidResult, out_format: str | None = None) -> bytes:
    """The output file of a document read by its format's reader (DOCX, HWPX, HWP, PDF): the replacements of
    ``result`` made in ``out_format`` (``None``: its own, an HWP as HWPX, a PDF as text), checked after writing
    (:class:`thunder.documents.formats.FormatError`: refused, nothing to write)."""
    edits = [Replacement(*edit) for edit in replacing_edits(extracted.text, result.text, result.spans)]
    return render(extracted, edits, out_format, {span.text: span.placeholder for span in result.spans})


@dataclass
class Counts:
    """How many documents went which way (this process)."""

    written: int = 0
    already: int = 0
    failed: int = 0


class OutputPlan:
    """The outputs of one run: checked, locked, recorded, resumed, written and reported (see the module docstring).

    ``out`` None writes to stdout (``plain``: the bare text, else one ``{"id", "text"}`` line per document) or, with
    ``in_place``, over each input file, keeping its owner and mode (through a symbolic link: over the file it names,
    the link stays). ``total``:
    the documents of the inputs when some have no slot (unreadable ones).
    """

    def __init__(
        self,
        command: str,
        layout: Layout,
        out: Path | None,
        listing: Listing,
        slots: Sequence[Slot],
        *,
        in_place: bool = False,
        total: int | None = None,
        spans: Path | bool | None = None,
        with_span_text: bool = True,
        out_option: str = "--out",
        overwrite_option: str = "--overwrite",
        keep_names: bool = False,
    ) -> None:
        self.command, self.layout, self.out, self.listing = command, layout, out, listing
        self.keep_names = keep_names
        self.slots, self.in_place, self.with_span_text = list(slots), in_place, with_span_text
        self.spans_file = spans if isinstance(spans, Path) else None  # MIRROR: one file for every document
        self.spans_beside = spans is True and layout is Layout.PER_DOCUMENT
        self.out_option, self.overwrite_option = out_option, overwrite_option
        self.plain = listing.stdin or (len(listing.files) == 1 and not listing.files[0].jsonl)
        self.counts = Counts()
        self.total = total if total is not None else 1 if listing.stdin else len(self.slots)
        self._done: set[Slot] = set()
        self._jsonl: dict[str, JsonlAppender] = {}
        self._spans: JsonlAppender | None = None
        self._failures: JsonlAppender | None = None
        self._lock: int | None = None
        self._record: dict[str, Any] | None = None
        self._by_key = {key: slot for slot in self.slots for key in self.keys(slot)}
        self._by_source = {(slot.source, slot.doc): slot for slot in self.slots}
        self.failures_name = FAILED_FILE  # failed-<rank>.jsonl on each process of a distributed run
        self.progress_interval = PROGRESS_SECONDS
        self._started = self._shown = time.monotonic()

    # -- check ------------------------------------------------------------------------------------------------

    def names(self, slot: Slot) -> tuple[str, ...]:
        """The files under the output directory that ``slot`` may write (its name, and unless names are kept, the
        one under its digest: :meth:`named`)."""
        names = (slot.name,) if self.keep_names or slot.record else tuple(dict.fromkeys((slot.name, slot.hidden_name)))
        return tuple(n for name in names for n in ((name, name + SPANS_SUFFIX) if self.spans_beside else (name,)))

    def named(self, slot: Slot | None, result: DeidResult) -> Slot | None:
        """``slot`` as its document is written: under its digest (:mod:`thunder.runs.names`) when its name or id holds
        a text ``result`` replaced, unless names are kept."""
        if slot is None or self.keep_names:
            return slot
        replaced = replaced_texts(result)
        if holds_replaced(slot.output_id, replaced) or (not slot.record and holds_replaced(slot.name, replaced)):
            return slot.hiding()
        return slot

    def check(self, files: Mapping[str, Path | None] | None = None) -> None:
        """Refuse, before any work, outputs that could overwrite an input or one another (``files``: the run's
        single-file outputs by option, e.g. ``{"--spans": path}``): by name, and by device and inode, so a hard
        link is the file it links to."""
        if self.in_place:
            self._check_in_place()
        inputs = {_identity(f.path): f.path for f in self.listing.files}
        outputs: dict[tuple[int, int] | Path, Path] = {}
        if self.out is not None:
            outputs = self._check_out(inputs)
        taken: dict[tuple[int, int] | Path, tuple[str, Path]] = {}
        for option, path in (files or {}).items():
            if path is None:
                continue
            identity = _identity(path)
            if identity in inputs:
                same = _one_file("an input file", path, "the input", inputs[identity])
                raise InputError(f"{option} {path} is {same}")
            if identity in outputs:
                same = _one_file("also the output of an input", path, "the output", outputs[identity])
                raise InputError(f"{option} {path} is {same}")
            if identity in taken:
                other, other_path = taken[identity]
                if path.resolve() == other_path.resolve():
                    raise InputError(f"{other} and {option} name the same file ({other_path})")
                raise InputError(f"{other} {other_path} and {option} {path} are hard links to one file; give each "
                                 "its own file")  # fmt: skip
            taken[identity] = option, path

    def _check_in_place(self) -> None:
        if self.out is not None:
            raise InputError(f"--in_place writes each output over its input: drop {self.out_option}")
        if self.listing.stdin:
            raise InputError("--in_place needs input files, not stdin")
        if any(f.jsonl for f in self.listing.files):
            raise InputError(f"--in_place replaces text files only; give JSONL inputs an {self.out_option} directory")
        for file in self.listing.files:
            status = file.path.stat()
            if status.st_nlink > 1:
                raise InputError(f"--in_place: {file.path} has {status.st_nlink} hard links; the others would keep "
                                 f"the identifiers: give {self.out_option}")  # fmt: skip
            groups = {os.getegid(), *os.getgroups()}
            if os.geteuid() != 0 and (status.st_uid != os.geteuid() or status.st_gid not in groups):
                raise InputError(f"--in_place: {file.path} belongs to another user or group, which a file written "
                                 f"over it could not keep: give {self.out_option}")  # fmt: skip

    def _check_out(self, inputs: Mapping[tuple[int, int] | Path, Path]) -> dict[tuple[int, int] | Path, Path]:
        """Refuse outputs under ``--out`` that are an input or another output (by name, or hard links to one file);
        returns the outputs by :func:`_identity`."""
        out = self.out
        assert out is not None
        real_out = out.resolve()
        if out.exists() and not out.is_dir():
            raise InputError(f"{self.out_option} {out} is a file; give a directory (it is created when missing)")
        hint = " (or --in_place to replace the inputs)" if self.layout is Layout.MIRROR else ""
        for directory in self.listing.directories:
            if real_out == directory or directory in real_out.parents:
                raise InputError(f"{self.out_option} {out} is inside the input directory {directory}; choose a "
                                 f"directory outside the inputs{hint}")  # fmt: skip
        reserved = RESERVED + ((FAILED_FILE,) if self.layout is Layout.PER_DOCUMENT else ())
        owners: dict[str, Slot | None] = {name: None for name in reserved}
        for slot in self.slots:
            for name in self.names(slot):
                other = owners.get(name, slot)
                if other is not slot and not (slot.record and other is not None and other.source == slot.source):
                    raise InputError(_collision(slot, other, out / name))
                source = inputs.get(_identity(out / name))
                if source is not None:
                    same = _one_file("an input file", out / name, "the input", source)
                    raise InputError(f"{_owner(slot)}: its output {out / name} is {same}; choose another "
                                     f"directory{hint}")  # fmt: skip
                owners.setdefault(name, slot)
        for name, slot in owners.items():
            parent = next((str(p) for p in PurePosixPath(name).parents if str(p) in owners), None)
            if parent is not None and slot is not None:
                other = owners[parent]
                taken = f"the output of {_owner(other)}" if other is not None else "a name the writer keeps for its own use"
                raise InputError(f"{_owner(slot)}: its output {out / name} needs {out / parent} as a directory, but "
                                 f"that is {taken}")  # fmt: skip
        outputs: dict[tuple[int, int] | Path, Path] = {}
        for name in dict.fromkeys(name for slot in self.slots for name in self.names(slot)):
            other = outputs.setdefault(_identity(out / name), out / name)
            if other != out / name:
                raise InputError(f"{self.out_option} {out}: the outputs {other} and {out / name} are hard links to one "
                                 f"file; remove one, or choose another directory")  # fmt: skip
        return outputs

    # -- lock, record, done set -------------------------------------------------------------------------------

    def claim(self, settings: Mapping[str, Any], overwrite: bool = False) -> None:
        """Lock the output directory, check every output there against the settings its own record names (refused
        when one was made under other settings or has no record, unless ``overwrite``: then this run's outputs are
        removed), remove a killed run's temporary files. Done by one process of a run (the first)."""
        if self.out is None:
            return
        self.out.mkdir(parents=True, exist_ok=True)
        self._take_lock()
        record = self._read_record()
        settings, key = dict(settings), settings_key(settings)
        made = {name: made_key for name, made_key in record["outputs"].items() if (self.out / name).is_file()}
        mine = [name for slot in self.slots for name in self.names(slot)]
        if not overwrite:
            self._check_made(made, record["made_under"], mine, settings, key)
        else:
            for name in mine:
                (self.out / name).unlink(missing_ok=True)
        remove_temporary_files(self.out)
        if self.layout is Layout.PER_DOCUMENT:
            for stale in self.out.glob("failed*.jsonl"):  # the failures of an earlier run: redone now
                stale.unlink()
        outputs = {**made, **dict.fromkeys(mine, key)}  # before any is written: an output absent claims nothing
        made_under = {k: record["made_under"][k] for k in set(outputs.values()) if k != key} | {key: settings}
        self._record = {"format": RECORD_FORMAT, "command": self.command, "settings": settings, "outputs": outputs,
                        "made_under": made_under, "appended": record["appended"]}  # fmt: skip

    def _check_made(self, made: Mapping[str, str], made_under: Mapping[str, Any], mine: Sequence[str],
                    settings: Mapping[str, Any], key: str) -> None:  # fmt: skip
        """Refuse a folder holding an output made under other settings, or one of this run's outputs that exists
        with no record of its own."""
        other = next((name for name, made_key in made.items() if made_key != key), None)
        if other is not None:
            differs = _differences(made_under[made[other]], settings)
            raise InputError(f"{self.out_option} {self.out} was made under other settings ({self.out / other}: "
                             f"{differs}); give {self.overwrite_option} to redo it, or choose another "
                             "directory")  # fmt: skip
        unrecorded = next((name for name in mine if name not in made and (self.out / name).is_file()), None)
        if unrecorded is not None:
            raise InputError(f"{self.out_option} {self.out}: its outputs were made by a run that recorded no settings "
                             f"for them ({self.out / unrecorded}); give {self.overwrite_option} to redo them, or "
                             "choose another directory")  # fmt: skip

    def resume(self) -> None:
        """Note the documents whose output exists already (every process of a run)."""
        if self.out is None:
            return
        if self.layout is Layout.MIRROR:
            for name, source in {slot.name: slot.source for slot in self.slots if slot.record}.items():
                self._jsonl[name] = JsonlAppender(self.out / name, ours=0, mode=_mode_of(source))
            ids = {name: {str(r.get("id")) for r in appender.records} for name, appender in self._jsonl.items()}
            self._done = {s for s in self.slots if ({s.output_id, s.hidden} & ids[s.name] if s.record else self._exists(s))}
        else:
            self._done = {s for s in self.slots if self._exists(s)}
        self.counts.already = len(self._done)

    def pending(self) -> list[Slot]:
        """The documents this run writes (again)."""
        return [slot for slot in self.slots if slot not in self._done]

    def ours(self, path: Path) -> int | None:
        """Where in the appended file ``path`` the records of runs into the output directory begin (``None``: it
        holds none of theirs, or it changed since)."""
        entry = (self._record or {}).get("appended", {}).get(str(path.resolve()))
        if not entry or not path.is_file():
            return None
        with path.open("rb") as stream:
            head = stream.read(entry["from"])
        return entry["from"] if hashlib.sha256(head).hexdigest() == entry["sha256"] else None

    def open_spans(self) -> None:
        """Open the spans file (``MIRROR``): a resumed run drops its own records of the documents it writes again."""
        if self.spans_file is None:
            return
        self._spans = JsonlAppender(self.spans_file, self.ours(self.spans_file))
        self._spans.drop_unfinished(lambda r: (r.get("file"), str(r.get("doc"))),
                                    {key for slot in self.pending() for key in self.keys(slot)}, self._by_key)  # fmt: skip
        self.appended(self.spans_file, self._spans.start)

    def keys(self, slot: Slot) -> list[tuple[str, str]]:
        """The (file, id) pairs the spans file and the review queue may name ``slot``'s document by."""
        hidden = slot.hiding()
        return [(slot.name, slot.output_id)] + ([] if self.keep_names else [(hidden.name, hidden.output_id)])

    def appended(self, path: Path, start: int) -> None:
        """Remember that records of runs into the output directory begin at byte ``start`` of ``path``."""
        if self._record is None:
            return
        with path.open("rb") as stream:
            head = stream.read(start)
        self._record["appended"][str(path.resolve())] = {"from": start, "sha256": hashlib.sha256(head).hexdigest()}

    def save_record(self) -> None:
        """Write the run record (before the first output)."""
        if self._record is not None and self.out is not None:
            write_atomic(self.out / RECORD_FILE, json.dumps(self._record, ensure_ascii=False, indent=2) + "\n")

    def is_done(self, slot: Slot) -> bool:
        return slot in self._done

    def slot_of(self, doc: Document) -> Slot | None:
        """The slot of a document read by :func:`thunder.documents.sources.read_documents` (``None``: stdin)."""
        if doc.file is None:
            return None
        return self._by_source[(doc.file.path, doc.id)]

    def shown(self, doc: Document) -> str:
        """How messages name ``doc``: where it is, or (its name holds an identifier) its digest."""
        slot = self._by_source.get((doc.file.path, doc.id)) if doc.file is not None else None
        if slot is not None and not self.keep_names and slot.output_id == slot.hiding().output_id:
            return f"{slot.output_id} (its input's name holds an identifier)"
        return doc.where

    def done_count(self) -> int:
        """Documents whose output exists now (every process's)."""
        if self.out is None:
            return self.counts.written
        if self.layout is Layout.MIRROR:
            return len(self._done) + self.counts.written
        return sum(self._exists(slot) for slot in self.slots)

    # -- write and report -------------------------------------------------------------------------------------

    def write(self, slot: Slot | None, result: DeidResult, content: bytes | None = None) -> None:
        """Write one document: its spans, then its output (which marks it done). ``slot`` None: stdin. ``content``:
        the output file's bytes when they are not the text (a document written in its own format)."""
        relative = slot.name if slot is not None and self.layout is Layout.MIRROR else None
        output_id = slot.output_id if slot is not None else "<stdin>"
        if self._spans is not None:
            self._spans.write([span_record(output_id, s, relative, self.with_span_text) for s in result.spans])
        beside = self.spans_beside and self.out is not None and not self.in_place and not slot.record  # type: ignore[union-attr]
        records = [span_record(output_id, s) for s in result.spans] if beside else []
        if self.out is None and not self.in_place:
            line = json.dumps({"id": output_id, "text": result.text}, ensure_ascii=False) + "\n"
            sys.stdout.write(result.text if self.plain else line)
            sys.stdout.flush()
        elif self.in_place:
            source = slot.source.resolve()  # type: ignore[union-attr]
            write_atomic(source, result.text if content is None else content, source.stat())
        elif slot.record:  # type: ignore[union-attr]
            self._jsonl[slot.name].write([{"id": output_id, "text": result.text}])  # type: ignore[union-attr]
        else:
            target = self.out / slot.name  # type: ignore[operator, union-attr]
            if beside:
                lines = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
                write_atomic(target.with_name(target.name + SPANS_SUFFIX), lines)
            write_atomic(target, result.text if content is None else content, mode=_mode_of(slot.source))
        self.counts.written += 1
        self._progress()

    def fail(self, where: str, reason: str, record: dict | None = None) -> None:
        """Report a document that was not de-identified (``record``: its line of ``failed.jsonl``, PER_DOCUMENT)."""
        self.counts.failed += 1
        print(f"{self.command}: error: {escaped(where)}: {escaped(reason)}", file=sys.stderr, flush=True)
        if record is not None and self.out is not None and self.layout is Layout.PER_DOCUMENT:
            if self._failures is None:
                self._failures = JsonlAppender(self.out / self.failures_name, ours=0)
            self._failures.write([{**record, "error": reason}])

    def report(self, summary: bool = True) -> None:
        """Name every skipped input with its reason, then (``summary``) how many documents went which way."""
        for line in self.listing.skipped:
            print(f"{self.command}: {escaped(line)}", file=sys.stderr, flush=True)
        if summary:
            print(f"{self.command}: {self.summary()}", file=sys.stderr, flush=True)

    def _progress(self) -> None:
        """A line on stderr every ``progress_interval`` seconds of a run over many documents: documents done of all,
        documents per second, time left (the run's output may be a file: whole lines, flushed)."""
        now = time.monotonic()
        if now - self._shown < self.progress_interval or self.total < 2:
            return
        self._shown = now
        done = self.counts.written + self.counts.failed
        rate = done / max(now - self._started, 1e-9)
        left = (self.total - self.counts.already - done) / rate if rate else 0.0
        print(f"{self.command}: {self.counts.already + done}/{self.total} documents, {rate:.1f} documents/s, "
              f"{datetime.timedelta(seconds=round(left))} left", file=sys.stderr, flush=True)  # fmt: skip

    def model_progress(self, done: int, total: int) -> None:
        """A line on stderr every ``progress_interval`` seconds inside one batch of documents (a long judgment):
        windows of the model done of all (``Deidentifier.progress``)."""
        now = time.monotonic()
        if now - self._shown < self.progress_interval or done == total:
            return
        self._shown = now
        print(f"{self.command}: document {self.counts.already + self.counts.written + self.counts.failed + 1} of "
              f"{self.total}: {done:,}/{total:,} windows of the model ({done / total:.0%})", file=sys.stderr, flush=True)

    def summary(self) -> str:
        already = f", {self.counts.already} already done" if self.counts.already else ""
        return f"{self.counts.written} written{already}, {self.counts.failed} failed, of {self.total} documents"

    def interrupted(self) -> str:
        return f"interrupted: {self.done_count()} of {self.total} documents written"

    def close(self) -> None:
        """Close every file and release the lock (also after an error)."""
        for appender in (*self._jsonl.values(), self._spans, self._failures):
            if appender is not None:
                appender.close()
        self._jsonl, self._spans, self._failures = {}, None, None
        if self._lock is not None:
            os.close(self._lock)  # releases the flock
            self._lock = None

    # -- helpers ----------------------------------------------------------------------------------------------

    def _exists(self, slot: Slot) -> bool:
        """Whether ``slot``'s output exists (under its name, or its digest: :meth:`named`)."""
        if slot.record:
            path = self.out / slot.name  # type: ignore[operator]
            return path.is_file() and path.stat().st_size > 0
        names = (slot.name,) if self.keep_names else (slot.name, slot.hidden_name)
        return any((self.out / name).is_file() for name in names)  # type: ignore[operator]

    def _take_lock(self) -> None:
        path = self.out / LOCK_FILE  # type: ignore[operator]
        refused = InputError(f"{path} is not a lock file of its own (a link, or not a plain file); remove it or "
                             "choose another directory")  # fmt: skip
        try:  # never through a link: a lock linked to an input would be written over it
            descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.EISDIR):
                raise refused from None
            raise
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode) or status.st_nlink != 1:
            os.close(descriptor)
            raise refused
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(descriptor, 300).decode("utf-8", "replace").strip() or "another process"
            os.close(descriptor)
            raise InputError(f"{self.out_option} {self.out} is locked by a run in progress ({holder}); wait for it "
                             "to end, or choose another directory") from None  # fmt: skip
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"{self.command}, process {os.getpid()} on {socket.gethostname()} since {now}".encode(), 0)
        self._lock = descriptor

    def _read_record(self) -> dict[str, Any]:
        """The run record of the output directory: ``outputs`` (file name -> settings key), ``made_under`` (settings
        key -> settings) and ``appended``; empty when there is none. An older Thunder's record names no output."""
        path = self.out / RECORD_FILE  # type: ignore[operator]
        empty: dict[str, Any] = {"outputs": {}, "made_under": {}, "appended": {}}
        if not path.is_file():
            return empty
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, ValueError) as error:
            raise InputError(f"{path}: not a Thunder run record ({error}); remove it to redo the directory") from None
        if isinstance(record, dict) and record.get("format") == OLD_RECORD_FORMAT:
            return empty | {"appended": record.get("appended") or {}}
        if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT or not _consistent(record):
            raise InputError(f"{path}: not a Thunder run record ({RECORD_FORMAT}); remove it to redo the directory")
        return record


def _mode_of(source: Path | None) -> int:
    """An output's permission bits: its input's read and write bits (0600 where the input cannot be read)."""
    try:
        return source.stat().st_mode & 0o666 if source is not None else 0o600
    except OSError:
        return 0o600


def _consistent(record: Mapping[str, Any]) -> bool:
    """Whether every output of a record names settings the record holds, under their own key."""
    outputs, made_under = record.get("outputs"), record.get("made_under")
    if not isinstance(outputs, dict) or not isinstance(made_under, dict) or not isinstance(record.get("appended"), dict):
        return False
    if not all(isinstance(key, str) for key in outputs.values()):
        return False
    return all(isinstance(made_under.get(key), dict) and settings_key(made_under[key]) == key
               for key in set(outputs.values()))  # fmt: skip


def _identity(path: Path) -> tuple[int, int] | Path:
    """A file's device and inode (every hard link of one file has them; a symbolic link: its target's); a file not
    there yet: its resolved path."""
    try:
        status = path.stat()
    except OSError:
        return path.resolve()
    return status.st_dev, status.st_ino


def _one_file(same: str, path: Path, what: str, other: Path) -> str:
    """How ``path`` is ``other``: ``same`` when both names resolve to one path, else a hard link to ``what other``."""
    return same if path.resolve() == other.resolve() else f"a hard link to {what} {other} (one file)"


def _owner(slot: Slot) -> str:
    """The input a slot's file belongs to (a JSONL output: the JSONL input)."""
    return str(slot.source) if slot.record else slot.where


def _collision(slot: Slot, other: Slot | None, target: Path) -> str:
    if other is None:
        return f"{slot.where}: its output {target} is a name the writer keeps for its own use"
    if other.source == slot.source and other.doc == slot.doc and ":" in other.where:
        return f"{slot.where}: id {slot.doc!r} repeats line {other.where.rpartition(':')[2]}"
    return f"{slot.where}: would be written to {target}, as {other.where} is"


def _differences(previous: Mapping[str, Any], current: Mapping[str, Any]) -> str:
    def shown(value: Any) -> str:
        if isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value):
            value = value[:12]  # a SHA-256
        return "none" if value is None else json.dumps(value, ensure_ascii=False)

    keys = [*current, *(key for key in previous if key not in current)]
    changed = [key for key in keys if previous.get(key) != current.get(key)]
    return ", ".join(f"{key}: {shown(previous.get(key))} -> {shown(current.get(key))}" for key in changed)


# ----------------------------------------------------------------------------------------------- signals


def catch_signals(exception: type[BaseException] = KeyboardInterrupt) -> Callable[[], None]:
    """Make Ctrl-C and SIGTERM raise ``exception`` in this process (``KeyboardInterrupt`` in processes forked from
    it, such as DataLoader workers), so a run ends between documents with what it finished written; returns the
    function that restores the previous handlers. Outside the main thread nothing is installed."""
    owner = os.getpid()

    def handler(signum: int, frame: object) -> None:
        raise exception(signal.Signals(signum).name) if os.getpid() == owner else KeyboardInterrupt

    try:
        previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread
        previous = {}

    def restore() -> None:
        for signum, old in previous.items():
            signal.signal(signum, old)
        previous.clear()

    return restore
