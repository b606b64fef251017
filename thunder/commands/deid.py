"""``thunder deid``: de-identify text files, directories, JSONL or stdin.

Every output is planned before any work starts (inputs keep their relative layout under ``--out``; nothing is
written over an input or another output), each document is written as soon as it is done, a re-run skips the
documents already written, a bad document is reported as ``file:line: reason`` while the others go on, and the
exit code is non-zero whenever some document was not de-identified.
"""

from __future__ import annotations

import json
import signal
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from thunder.deid import DeidResult, Deidentifier, PipelineOptions
from thunder.mapping import MappingKey, MappingWriter
from thunder.outputs import JsonlAppender, remove_temporary_files, span_record, write_atomic
from thunder.sources import Document, InputError, InputFile, Listing, check_unique_ids, list_inputs, read_documents

INTERRUPTED = 130


@dataclass
class _Run:
    """Where a run writes, what is already done, and how many documents went which way."""

    out: Path | None
    in_place: bool
    plain: bool  # stdout gets the bare text (one text input or stdin), not JSON lines
    spans: JsonlAppender | None
    with_span_text: bool
    mapping: MappingWriter | None = None
    jsonl: dict[Path, JsonlAppender] = field(default_factory=dict)
    done: set[tuple[str, str]] = field(default_factory=set)  # (relative file, doc id) written by an earlier run
    written: int = 0
    resumed: int = 0
    failed: list[str] = field(default_factory=list)

    def target(self, file: InputFile) -> Path:
        return file.path if self.in_place else self.out / file.relative  # type: ignore[operator]

    def is_done(self, doc: Document) -> bool:
        if doc.file is None or self.out is None:
            return False
        if doc.file.jsonl:
            return (doc.file.relative, doc.id) in self.done
        return self.target(doc.file).is_file()

    def write(self, doc: Document, result: DeidResult) -> None:
        """The mapping and spans first, then the output: the output marks the document done."""
        if self.mapping is not None:
            self.mapping.add(doc.id, doc.text, result)
        source = doc.file.relative if doc.file else None
        if self.spans is not None:
            self.spans.write([span_record(doc.id, s, source, self.with_span_text) for s in result.spans])
        if self.out is None and not self.in_place:
            line = json.dumps({"id": doc.id, "text": result.text}, ensure_ascii=False) + "\n"
            sys.stdout.write(result.text if self.plain else line)
            sys.stdout.flush()
        elif doc.file is not None and doc.file.jsonl:
            self._appender(doc.file).write([{"id": doc.id, "text": result.text}])
        else:
            write_atomic(self.target(doc.file), result.text)  # type: ignore[arg-type]
        self.written += 1

    def _appender(self, file: InputFile) -> JsonlAppender:
        target = self.target(file)
        if target not in self.jsonl:
            self.jsonl[target] = JsonlAppender(target)
        return self.jsonl[target]

    def close(self) -> None:
        for appender in self.jsonl.values():
            appender.close()
        if self.spans is not None:
            self.spans.close()
        if self.mapping is not None:
            self.mapping.close()


def _check_outputs(listing: Listing, out: Path | None, files: dict[str, Path | None], in_place: bool) -> None:
    """Refuse an output that could overwrite an input or another output, before any work starts (``files``: the
    run's single-file outputs by option name, e.g. ``{"--spans": path}``)."""
    if in_place and out is not None:
        raise InputError("--in_place writes each output over its input: drop --out")
    if in_place and listing.stdin:
        raise InputError("--in_place needs input files, not stdin")
    if in_place and any(f.jsonl for f in listing.files):
        raise InputError("--in_place replaces text files only; give JSONL inputs an --out directory")
    inputs = {f.path.resolve() for f in listing.files}
    if out is not None:
        real_out = out.resolve()
        for directory in listing.directories:
            if real_out == directory or directory in real_out.parents:
                raise InputError(f"--out {out} is inside the input directory {directory}; choose a directory outside "
                                 "the inputs (or --in_place to replace the inputs)")  # fmt: skip
        for file in listing.files:
            target = (real_out / file.relative).resolve()
            if target in inputs:
                raise InputError(f"--out {out}: would write {target} over an input; choose another directory "
                                 "(or --in_place to replace the inputs)")  # fmt: skip
    outputs = {(out.resolve() / f.relative).resolve() for f in listing.files} if out is not None else set()
    named = {option: path.resolve() for option, path in files.items() if path is not None}
    for option, real in named.items():
        if real in inputs:
            raise InputError(f"{option} {files[option]} is an input file")
        if real in outputs:
            raise InputError(f"{option} {files[option]} is also the output of an input")
    if len(set(named.values())) < len(named):
        raise InputError(f"{' and '.join(named)} name the same file")


def _resume(run: _Run, listing: Listing, overwrite: bool) -> None:
    """Remove a killed run's temporary files, then note what an earlier run finished (or redo all: ``overwrite``)."""
    if run.out is None:
        return
    remove_temporary_files(run.out)
    for file in listing.files:
        target = run.target(file)
        if overwrite:
            target.unlink(missing_ok=True)
        elif file.jsonl:
            run.jsonl[target] = appender = JsonlAppender(target)
            run.done |= {(file.relative, str(r.get("id"))) for r in appender.records}


def _done_keys(run: _Run, listing: Listing) -> set[tuple[str, str]]:
    keys = set(run.done)
    for file in listing.files:
        if not file.jsonl and run.target(file).is_file():
            keys.add((file.relative, str(file.path)))
    return keys


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM ends the run like Ctrl-C (finished documents stay written)."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _batches(documents: Iterator[Document], run: _Run, size: int) -> Iterator[list[Document]]:
    """Documents to process in batches; unreadable ones are reported, finished ones skipped."""
    batch: list[Document] = []
    for doc in documents:
        if doc.error is not None:
            run.failed.append(f"{doc.where}: {doc.error}")
        elif run.is_done(doc):
            run.resumed += 1
        else:
            batch.append(doc)
            if len(batch) == size:
                yield batch
                batch = []
    if batch:
        yield batch


def _process(deidentifier: Deidentifier, batch: list[Document], run: _Run) -> None:
    """De-identify and write a batch; when it fails, each document alone, so one bad document stops no other."""
    try:
        results = deidentifier.deidentify_batch([d.text for d in batch])
    except Exception:
        if len(batch) == 1:
            raise
        results = None
    if results is not None:
        for doc, result in zip(batch, results):
            run.write(doc, result)
        return
    for doc in batch:
        try:
            result = deidentifier(doc.text)
        except Exception as error:  # reported per document; the run goes on and exits 1
            run.failed.append(f"{doc.where}: not de-identified ({type(error).__name__}: {error})")
            continue
        run.write(doc, result)


def _count(listing: Listing) -> int:
    """Documents in the inputs: one per text file, one per non-blank JSONL line."""
    if listing.stdin:
        return 1
    return sum(sum(1 for line in f.path.read_bytes().split(b"\n") if line.strip()) if f.jsonl else 1
               for f in listing.files)  # fmt: skip


def deid_command(
    inputs: list[str] = [],
    out: str | None = None,
    spans: str | None = None,
    pipeline: PipelineOptions = PipelineOptions(),
    in_place: bool = False,
    overwrite: bool = False,
    no_span_text: bool = False,
    mapping: str | None = None,
    key_file: str | None = None,
) -> None:
    """De-identify text files, directories (*.txt, *.md, *.jsonl recursively), JSONL ({"id", "text"} per line) or stdin.

    Args:
        inputs: files, directories or .jsonl files; stdin when none.
        out: output directory; each input keeps its path relative to the inputs' common folder (text files
            written atomically, JSONL outputs one line per document). A re-run skips documents already written
            there. Omitted: stdout (the text itself for stdin or a single text file, else one {"id", "text"} JSON
            line per document).
        spans: append the replaced spans as JSONL (doc, file, start, end, text, label, category, tier1,
            placeholder, score, source) to this file, one document at a time.
        in_place: write each output over its input file (no --out).
        overwrite: redo documents whose output already exists in --out (default: skip them).
        no_span_text: leave the original identifier texts out of the spans file.
        mapping: append each document's entity <-> placeholder table, encrypted and authenticated (AES-GCM), to this
            file, for authorised re-identification (`thunder reidentify`); needs --key_file.
        key_file: the mapping key (created, readable by the owner only, when it does not exist).
    """
    try:
        listing = list_inputs(inputs)
        out_dir, spans_path = Path(out) if out else None, Path(spans) if spans else None
        if (mapping is None) != (key_file is None):
            raise InputError("--mapping and --key_file go together")
        files = {"--spans": spans_path, "--mapping": Path(mapping) if mapping else None,
                 "--key_file": Path(key_file) if key_file else None}  # fmt: skip
        _check_outputs(listing, out_dir, files, in_place)
        check_unique_ids(listing)
    except InputError as error:
        raise SystemExit(f"thunder deid: error: {error}") from None
    for line in listing.skipped:
        print(f"thunder deid: {line}", file=sys.stderr)
    deidentifier = pipeline.build()
    plain = listing.stdin or (len(listing.files) == 1 and not listing.files[0].jsonl)
    run = _Run(out_dir, in_place, plain, None, not no_span_text)
    if mapping is not None:
        run.mapping = MappingWriter(mapping, MappingKey.load_or_create(key_file))
    _resume(run, listing, overwrite)
    if spans_path is not None:
        done = _done_keys(run, listing) if out_dir is not None and not overwrite else set()
        run.spans = JsonlAppender(spans_path, keep=lambda r: (r.get("file"), str(r.get("doc"))) in done)
    total = _count(listing)
    try:
        with _sigterm_as_interrupt():
            for batch in _batches(read_documents(listing), run, pipeline.batch_size):
                _process(deidentifier, batch, run)
    except KeyboardInterrupt:
        print(f"\ninterrupted: {run.written + run.resumed} of {total} documents written", file=sys.stderr)
        raise SystemExit(INTERRUPTED) from None
    finally:
        run.close()
    _report(run, total)


def _report(run: _Run, total: int) -> None:
    for message in run.failed:
        print(f"thunder deid: error: {message}", file=sys.stderr)
    summary = f"{run.written} written"
    if run.resumed:
        summary += f", {run.resumed} already done"
    if run.failed or run.out is not None:
        print(f"thunder deid: {summary}, {len(run.failed)} failed, of {total} documents", file=sys.stderr)
    if run.failed:
        raise SystemExit(1)

