"""``thunder deid``: de-identify text files, documents (DOCX, HWPX, HWP, PDF), directories, JSONL or stdin.

The outputs follow :class:`thunder.runs.plan.OutputPlan` (layout ``MIRROR``): every output is planned before any work
starts (inputs keep their relative layout under ``--out``; nothing is written over an input or another output),
one run at a time writes into an ``--out``, each document is written as soon as it is done, a re-run under the same
settings skips the documents already written (another model or other options: refused unless ``--overwrite``), a
bad document is reported as ``file:line: reason`` while the others go on, and the exit code is non-zero whenever
some document was not de-identified.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from typing import Callable, Iterator

from thunder.deid.mapping import MappingKey, MappingWriter
from thunder.deid.pipeline import Deidentifier, PipelineOptions
from thunder.deid.policy import PublicationPolicy
from thunder.deid.triage import ReviewQueue, Triage, TriageRule
from thunder.documents.formats import OUT_FORMATS, FormatError, output_name
from thunder.documents.sources import (DOCUMENT_SUFFIXES, JSONL_SUFFIXES, TEXT_SUFFIXES, Document, InputError,
                                      list_inputs, read_documents)  # fmt: skip
from thunder.runs.names import Layout, Slot, hide_identifying, identifying_names, mirror_slots
from thunder.runs.plan import INTERRUPTED, OutputPlan, catch_signals, document_output
from thunder.runs.settings import run_settings


def _batches(documents: Iterator[Document], plan: OutputPlan, size: int) -> Iterator[list[Document]]:
    """Documents to process in batches; unreadable ones are reported, finished ones skipped."""
    batch: list[Document] = []
    for doc in documents:
        if doc.error is not None:
            plan.fail(plan.shown(doc), doc.error)
        elif not plan.is_done(plan.slot_of(doc)):  # type: ignore[arg-type]
            batch.append(doc)
            if len(batch) == size:
                yield batch
                batch = []
    if batch:
        yield batch


def _process(
    deidentifier: Deidentifier | Triage,
    batch: list[Document],
    plan: OutputPlan,
    mapping: MappingWriter | None,
    queue: ReviewQueue | None = None,
    out_format: str | None = None,
) -> None:
    """De-identify and write a batch; when it fails, each document alone, so one bad document stops no other."""
    try:
        results: list = deidentifier.deidentify_batch([d.text for d in batch])
    except Exception as error:
        results = [error] if len(batch) == 1 else [None] * len(batch)
    for doc, result in zip(batch, results):
        try:
            if isinstance(result, Exception):
                raise result
            if result is None:  # the batch failed: this document alone
                result = deidentifier(doc.text)
        except Exception as error:  # reported per document; the run goes on and exits 1
            plan.fail(plan.shown(doc), f"not de-identified ({type(error).__name__}: {error})")
            continue
        try:
            written = plan.out is not None or plan.in_place
            content = document_output(doc.extracted, result, out_format) if doc.extracted and written else None
        except FormatError as error:  # refused, nothing written for it; the run goes on and exits 1
            plan.fail(plan.shown(doc), f"not written: {error}")
            continue
        slot = plan.named(plan.slot_of(doc), result)  # under its digest when its name holds what was replaced
        if mapping is not None:  # the mapping, queue and spans first: the output marks the document done
            mapping.add(doc.id, doc.text, result)
        if queue is not None:
            queue.add(slot.output_id if slot else doc.id, slot.name if slot else None, result)
        plan.write(slot, result, content)


def deid_command(
    inputs: list[str] = [],
    out: str | None = None,
    spans: str | None = None,
    pipeline: PipelineOptions = PipelineOptions(),
    policy: PublicationPolicy = PublicationPolicy(),
    in_place: bool = False,
    overwrite: bool = False,
    no_span_text: bool = False,
    mapping: str | None = None,
    key_file: str | None = None,
    review_queue: str | None = None,
    triage: TriageRule = TriageRule(),
    allow_unverified: bool = False,
    out_format: str | None = None,
    keep_names: bool = False,
) -> None:
    """De-identify text files, documents, directories (*.txt, *.md, *.jsonl, *.docx, *.hwpx, *.hwp, *.pdf
    recursively), JSONL ({"id", "text"} per line) or stdin.

    Args:
        inputs: files, directories or .jsonl files; stdin when none.
        out: output directory; each input keeps its path relative to the inputs' common folder (text files
            written atomically, JSONL outputs one line per document). One run at a time writes there; every output
            keeps the settings that made it: a re-run under the same settings skips the documents already written,
            a run into a directory holding outputs made under others (model, pipeline options, --spans, --mapping)
            is refused unless --overwrite. Omitted: stdout (the text itself for stdin or a
            single text file, else one {"id", "text"} JSON line per document).
        spans: append the replaced spans as JSONL (doc, file, start, end, text, label, category, tier1,
            placeholder, score, source) to this file (created readable by the owner only), one document at a
            time; the records already in it stay. doc and file name the document as the outputs do (de-identified
            unless --keep_names, which reading the file back as reviewed judgments needs).
        in_place: write each output over its input file (no --out), keeping its owner and mode; a symbolic link
            keeps pointing at the file it names, which is de-identified; a file with a second hard link is refused.
        overwrite: redo every document in --out, whatever settings made it (default: skip the documents already
            written).
        no_span_text: leave the original identifier texts out of the spans file.
        mapping: append each document's entity <-> placeholder table, encrypted and authenticated (AES-GCM), to this
            file, for authorised re-identification (`thunder reidentify`); needs --key_file.
        key_file: the mapping key (created, readable by the owner only, when it does not exist).
        review_queue: write the documents ranked by risk to this JSONL file when the run ends (id, file, risk,
            number of possible misses, the top reasons; see thunder.deid.triage); a re-run keeps the records of the
            documents already done.
        policy: the publication policy (--keep_officials, --keep_regions, --legal_text, --protected_words,
            --genre_words, --propagate_threshold, --propagate_share).
        triage: the triage rule (--near_margin, --near_weight, --cut_word_weight, --part_weight, ...).
        allow_unverified: run a model that records no fingerprint or self-test answers (refused otherwise); the
            run record of --out says so.
        out_format: the format documents are written in: text, docx or hwpx (default: each .docx and .hwpx in its
            own, a .hwp as .hwpx, a .pdf as text; docs/formats.md). Text and JSONL inputs stay text.
        keep_names: write JSONL ids and output folder and file names as the inputs have them (default: an output
            whose name or id holds an identifier the recognizers find, or a text replaced in its document, is named
            by its input's digest instead, doc-<20 hex digits>, at the top of --out: ``홍길동_800101-1234567.txt``
            -> ``doc-3f0c….txt``; the spans file and the review queue name documents as the outputs do, the
            encrypted mapping by the inputs' own ids and paths).
    """
    try:
        listing = list_inputs(inputs, TEXT_SUFFIXES + JSONL_SUFFIXES + DOCUMENT_SUFFIXES)
        if out_format not in (None, *OUT_FORMATS):
            raise InputError(f"--out_format {out_format}: choose one of {', '.join(OUT_FORMATS)}")
        rename = partial(output_name, out_format=out_format)
        changed = next((f for f in listing.files if rename(f.relative) != f.relative), None)
        if in_place and changed is not None:
            raise InputError(f"--in_place writes each document over itself in its own format, but {changed.path} "
                             f"would be written as {rename(changed.path.name)}: give --out")  # fmt: skip
        out_dir, spans_path = Path(out) if out else None, Path(spans) if spans else None
        if (mapping is None) != (key_file is None):
            raise InputError("--mapping and --key_file go together")

        def slots(names: Callable[[list[str]], list[bool]] | None) -> list[Slot]:
            found = mirror_slots(listing, rename)
            return found if names is None else hide_identifying(found, names)

        def planned(names: Callable[[list[str]], list[bool]] | None = None) -> OutputPlan:
            """The outputs, checked (``names``: which output names and JSONL ids hold an identifier)."""
            plan = OutputPlan("thunder deid", Layout.MIRROR, out_dir, listing, slots(names),
                              in_place=in_place, spans=spans_path, with_span_text=not no_span_text,
                              keep_names=keep_names)  # fmt: skip
            plan.check({"--spans": spans_path, "--mapping": Path(mapping) if mapping else None,
                        "--key_file": Path(key_file) if key_file else None,
                        "--review_queue": Path(review_queue) if review_queue else None})  # fmt: skip
            return plan

        plan = planned()  # as the inputs name them: mistakes are refused before the model loads
    except InputError as error:
        raise SystemExit(f"thunder deid: error: {error}") from None
    from thunder.model.integrity import unverified_allowed  # torch: not for --help

    pipeline = pipeline.resolved()  # the shipped model without --model
    with unverified_allowed(allow_unverified):
        deidentifier = pipeline.build(policy)
    if not keep_names:  # ids and file names may identify too: named by their inputs' digests
        named = plan.slots
        try:
            # the recognizers alone: a model reads names without a sentence around them (a small one takes any
            # word for a name), and output names must stay the same from run to run; the document's own
            # replacements are looked for in its name when it is written (OutputPlan.named)
            names = identifying_names(pipeline, policy)
            plan = planned(names) if names is not None else plan
        except InputError as error:
            raise SystemExit(f"thunder deid: error: {error}") from None
        except Exception as error:  # fail closed: no output under a name that was not checked
            raise SystemExit(f"thunder deid: error: the output names and ids were not checked for identifiers "
                             f"({type(error).__name__}: {error}); nothing written") from None  # fmt: skip
        if hidden := sum(a.output_id != b.output_id for a, b in zip(named, plan.slots)):
            print(f"thunder deid: {hidden} outputs named by their inputs' digests: their names or ids hold "
                  "identifiers (--keep_names keeps them)", file=sys.stderr)  # fmt: skip
    deidentifier.progress = plan.model_progress
    model = Triage(deidentifier, triage) if review_queue is not None else deidentifier
    if note := deidentifier.coverage():
        print(f"thunder deid: {note}", file=sys.stderr)
    settings = run_settings(pipeline, deidentifier, allow_unverified, layout=Layout.MIRROR.value, spans=_absolute(spans_path),
                            span_text=not no_span_text, mapping=_absolute(mapping), keep_names=keep_names,
                            **({"out_format": out_format} if out_format else {}))  # fmt: skip
    restore = catch_signals()  # Ctrl-C and SIGTERM: KeyboardInterrupt, finished documents stay written
    writer = queue = None
    try:
        plan.claim(settings, overwrite)
        plan.resume()
        plan.open_spans()
        if mapping is not None:
            writer = MappingWriter(mapping, MappingKey.load_or_create(key_file, mapping), plan.ours(Path(mapping)))
            done = {slot.doc for slot in plan.slots if plan.is_done(slot)}  # ids alone: a done one's records stay
            writer.drop_unfinished({slot.doc for slot in plan.pending()} - done, {slot.doc for slot in plan.slots})
            plan.appended(Path(mapping), writer.start)
        if review_queue is not None:
            done = {key for slot in plan.slots if plan.is_done(slot) for key in plan.keys(slot)}
            queue = ReviewQueue(review_queue, keep=lambda r: (r.get("file"), str(r.get("id"))) in done)
        plan.save_record()
        if listing.stdin and sys.stdin is not None and sys.stdin.isatty():  # a terminal would wait without a word
            print("thunder deid: reading standard input, Ctrl-D to end", file=sys.stderr, flush=True)
        for batch in _batches(read_documents(listing), plan, pipeline.batch_size):
            _process(model, batch, plan, writer, queue, out_format)
    except InputError as error:
        raise SystemExit(f"thunder deid: error: {error}") from None
    except OSError as error:  # a full or read-only disk: the documents written stay, the same command resumes
        plan.report(summary=False)
        where = f": {error.filename}" if error.filename else ""
        raise SystemExit(f"thunder deid: error: {error.strerror or error}{where}; {plan.done_count()} of "
                         f"{plan.total} documents written; run the same command again to resume") from None
    except KeyboardInterrupt:
        plan.report(summary=False)
        print(f"\n{plan.interrupted()}", file=sys.stderr)
        raise SystemExit(INTERRUPTED) from None
    finally:
        restore()
        if writer is not None:
            writer.close()
        plan.close()
        if queue is not None:
            _write_queue(queue)
    plan.report(summary=bool(plan.counts.failed or out_dir is not None))
    if plan.counts.failed:
        raise SystemExit(1)


def _write_queue(queue: ReviewQueue) -> None:
    """Write the review queue; a full disk is one line (its journal stays, so the same command writes it)."""
    try:
        queue.close()
    except OSError as error:
        raise SystemExit(f"thunder deid: error: {error.strerror or error}: {queue.path}; the review queue was not "
                         "written; run the same command again to write it") from None


def _absolute(path: str | Path | None) -> str | None:
    return str(Path(path).resolve()) if path is not None else None
