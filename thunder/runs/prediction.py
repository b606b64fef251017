"""Corpus-scale de-identification with Lightning: ``thunder predict --config configs/predict.yaml``.

- :class:`DeidPredictor` (LightningModule) holds the :class:`~thunder.deid.pipeline.Deidentifier` that its
  :class:`~thunder.deid.pipeline.PipelineOptions` build; the model is a submodule, so Lightning places it on each device.
- :class:`CorpusDataModule` lists the documents once (:func:`thunder.documents.sources.list_inputs`: files, directories,
  JSONL, extensions compared case-insensitively) and reads each lazily; Lightning's distributed sampler splits
  them over processes, GPUs and nodes. Tokenization and windowing run in the loader workers.
- :class:`DeidWriter` (BasePredictionWriter) drives the output plan (:class:`thunder.runs.plan.OutputPlan`, layout
  ``PER_DOCUMENT``): checked before any work, locked, the settings recorded, finished documents skipped, each
  document written atomically (its spans first, its text last: it marks the document done), failures reported.

Fail closed: every output path is planned before any work (no two documents, and no input, share one; the output
directory is outside the input directories); one run at a time writes into an output directory, and every output
keeps the settings that made it in the run record: a run into a directory holding an output made under other
settings is refused (unless ``overwrite``), never counts it done; a document that cannot be read or de-identified is reported
as ``file:line: reason`` (and in ``failed.jsonl``) while the others are written, and the run exits 1; Ctrl-C or
SIGTERM ends it with ``interrupted: N of M documents written`` and exit 130 (:func:`exit_status`).

Outputs: a text input ``DIR/a/b.txt`` given as ``DIR`` is written to ``OUT/a/b.txt``; a JSONL record with id ``X``
from ``c.jsonl`` to ``OUT/c/X.txt`` (ids made filesystem-safe); a document (``.docx``, ``.hwpx``, ``.hwp``, ``.pdf``),
read by :mod:`thunder.documents.formats`, as ``thunder deid`` writes it: ``OUT/a/b.docx`` in its own format (an HWP as
HWPX, a PDF as text) or in the writer's ``out_format``, checked after writing; spans to the same path plus
``.spans.jsonl``.
"""

from __future__ import annotations

import json
import re
import signal
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Collection, Sequence

from lightning.pytorch import LightningDataModule, LightningModule, Trainer
from lightning.pytorch.callbacks import BasePredictionWriter
from torch.utils.data import DataLoader, Dataset

from thunder.model.decoding import TokenPredictions
from thunder.deid.pipeline import DeidResult, PipelineOptions
from thunder.deid.policy import PublicationPolicy
from thunder.documents.formats import OUT_FORMATS, Extracted, FormatError, output_name, read_document
from thunder.model.integrity import unverified_allowed
from thunder.runs.names import Layout, Slot, hide_identifying, identifying_names
from thunder.runs.plan import INTERRUPTED, OutputPlan, catch_signals, document_output
from thunder.runs.settings import run_settings
from thunder.documents.sources import (DOCUMENT_SUFFIXES, JSONL_SUFFIXES, TEXT_SUFFIXES, InputError, InputFile,
                                      Listing, list_inputs, read_jsonl, read_text, suffix_of)  # fmt: skip

_UNSAFE = re.compile(r"[^\w.\-]+")


class Interrupted(BaseException):
    """Ctrl-C or SIGTERM during ``thunder predict`` (not a KeyboardInterrupt, so Lightning passes it on)."""


@dataclass(frozen=True)
class DocumentRef:
    """Where one document is: a whole text file (``offset`` None) or one JSONL line of ``length`` bytes at byte
    ``offset``; ``error`` when it was found unreadable while listing."""

    id: str
    path: str
    offset: int | None
    output: str  # relative output path
    line: int | None = None
    length: int = 0
    error: str | None = None

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line is not None else self.path


@dataclass(frozen=True)
class CorpusDocument:
    ref: DocumentRef
    text: str
    error: str | None = None  # the document could not be read
    extracted: Extracted | None = None  # a document file (DOCX, HWPX, HWP, PDF): what its writer works from


@dataclass
class Corpus:
    """The documents of the inputs and the listing they come from."""

    refs: list[DocumentRef]
    listing: Listing

    @property
    def skipped(self) -> list[str]:
        return self.listing.skipped


def safe_name(doc_id: str) -> str:
    """A file name for a document id (path separators and odd characters replaced)."""
    name = _UNSAFE.sub("_", doc_id).strip("._") or "doc"
    return name[:200]


def list_documents(inputs: Sequence[str | Path]) -> Corpus:
    """Every document of ``inputs`` in a fixed order (a JSONL record is kept as its id and byte range).

    Raises :class:`~thunder.documents.sources.InputError` for a missing input, a file given twice or no input at all; bad
    JSONL records are kept with their ``error`` (reported, never skipped silently).
    """
    if not inputs:
        raise InputError("no inputs: give files or directories (data.init_args.inputs)")
    listing = list_inputs(inputs, TEXT_SUFFIXES + JSONL_SUFFIXES + DOCUMENT_SUFFIXES)
    refs: list[DocumentRef] = []
    for file in listing.files:
        if file.jsonl:
            refs += _jsonl_refs(file)
        else:
            refs.append(DocumentRef(file.relative, str(file.path), None, file.relative))
    return Corpus(refs, listing)


def _jsonl_refs(file: InputFile) -> list[DocumentRef]:
    try:
        lines = [line + "\n" for line in read_text(file.path).split("\n")]  # numbered as sources.read_jsonl does
        documents = list(read_jsonl(file))
    except (InputError, OSError) as error:
        reason = str(error).removeprefix(f"{file.path}: ") if isinstance(error, InputError) else str(error)
        return [DocumentRef(file.relative, str(file.path), None, file.relative, error=reason)]
    offsets, offset = [], 0
    for line in lines:
        size = len(line.encode("utf-8", "surrogatepass"))
        offsets.append((offset, size))
        offset += size
    base = PurePosixPath(file.relative).with_suffix("")
    refs = []
    for doc in documents:
        start, size = offsets[doc.line - 1]  # type: ignore[operator]
        output = (base / f"{safe_name(doc.id)}.txt").as_posix()
        refs.append(DocumentRef(doc.id, str(file.path), start, output, doc.line, size, doc.error))
    return refs


class CorpusDataset(Dataset):
    """Documents read on access; one whose output is ``done`` already is ``None`` (dropped by the collate), one
    that cannot be read comes with ``error`` set."""

    def __init__(self, refs: Sequence[DocumentRef], done: Collection[str] = ()) -> None:
        self.refs, self.done = list(refs), done

    def __len__(self) -> int:
        return len(self.refs)

    def __getitem__(self, index: int) -> CorpusDocument | None:
        ref = self.refs[index]
        if ref.error is not None:
            return CorpusDocument(ref, "", ref.error)
        if ref.output in self.done:
            return None
        path = Path(ref.path)
        try:
            if ref.offset is None and suffix_of(path) in DOCUMENT_SUFFIXES:
                extracted = read_document(path)
                return CorpusDocument(ref, extracted.text, extracted=extracted)
            if ref.offset is None:
                return CorpusDocument(ref, read_text(path))
            with path.open("rb") as stream:
                stream.seek(ref.offset)
                text = json.loads(stream.read(ref.length).decode("utf-8"))["text"]
            if not isinstance(text, str):
                raise TypeError("'text' is not a string")
            text.encode("utf-8")  # a lone surrogate raises
            return CorpusDocument(ref, text)
        except (InputError, FormatError) as error:
            return CorpusDocument(ref, "", str(error).removeprefix(f"{path}: "))
        except (OSError, ValueError, KeyError, TypeError) as error:
            return CorpusDocument(ref, "", f"cannot be read, the file changed since it was listed? ({error})")


class CorpusDataModule(LightningDataModule):
    """Predict-only data: text files, documents, directories (``*.txt``, ``*.md``, ``*.jsonl``, ``*.docx``, ``*.hwpx``,
    ``*.hwp``, ``*.pdf`` recursively) and JSONL files."""

    def __init__(self, inputs: list[str], batch_size: int = 8, num_workers: int = 0) -> None:
        """
        Args:
            inputs: files and directories to de-identify.
            batch_size: documents per step (their windows go through the model together).
            num_workers: DataLoader worker processes (reading, tokenization, windowing).
        """
        super().__init__()
        if isinstance(batch_size, bool) or batch_size < 1 or num_workers < 0:
            raise ValueError(f"batch_size must be at least 1 and num_workers at least 0, got {batch_size}, {num_workers}")
        self.inputs, self.batch_size, self.num_workers = list(inputs), batch_size, num_workers
        self.corpus: Corpus | None = None

    @property
    def refs(self) -> list[DocumentRef]:
        return self.corpus.refs if self.corpus is not None else []

    def setup(self, stage: str | None = None) -> None:
        self.corpus = list_documents(self.inputs)  # what was skipped is reported by the writer

    def predict_dataloader(self) -> DataLoader:
        trainer = self.trainer
        writer = next((cb for cb in trainer.callbacks if isinstance(cb, DeidWriter)), None) if trainer else None
        module = trainer.lightning_module if trainer else None
        collate = getattr(module, "collate", None) or _drop_done
        return DataLoader(
            CorpusDataset(self.refs, writer.done() if writer else ()),
            batch_size=self.batch_size,
            num_workers=self.num_workers,
            collate_fn=collate,
            shuffle=False,
        )

    def transfer_batch_to_device(self, batch: Any, device: Any, dataloader_idx: int) -> Any:
        return batch  # documents and windows stay on the CPU; windows are padded and moved per forward pass


def _drop_done(items: Sequence[CorpusDocument | None]) -> list[CorpusDocument]:
    return [item for item in items if item is not None]


# a result, or why the document was not de-identified; and the document as its format's reader read it
Outcome = tuple[DocumentRef, "DeidResult | str", Extracted | None]


class DeidPredictor(LightningModule):
    """The de-identification pipeline as a LightningModule for ``Trainer.predict``."""

    def __init__(
        self,
        pipeline: PipelineOptions = PipelineOptions(),
        policy: PublicationPolicy = PublicationPolicy(),
        allow_unverified: bool = False,
    ) -> None:
        """
        Args:
            pipeline: the options ``thunder deid`` takes (model, recognizers, operator(s), max_length, stride,
                batch_size = windows per forward pass, threshold, ...); out of range: refused here.
            policy: the publication policy ``thunder deid`` takes (kept officials and regions, legal text, ...).
            allow_unverified: run a model that records no fingerprint or self-test answers (refused otherwise);
                the run record says so.
        """
        super().__init__()
        self.save_hyperparameters()
        pipeline = pipeline.resolved()  # the shipped model without --model
        self.pipeline, self.policy, self.allow_unverified = pipeline, policy, allow_unverified
        with unverified_allowed(allow_unverified):
            self.deid = pipeline.build(policy)
        self.model = self.deid.model  # a submodule: Lightning moves it to the device

    def setup(self, stage: str) -> None:
        if (note := self.deid.coverage()) and self.trainer.is_global_zero:
            print(f"thunder predict: {note}", file=sys.stderr, flush=True)

    def collate(self, items: Sequence[CorpusDocument | None]) -> dict[str, Any]:
        """Documents of a batch and the windows of the readable ones (runs in the DataLoader workers)."""
        docs = _drop_done(items)
        texts = [d.text for d in docs if d.error is None]
        windows = None
        if self.deid.model is not None and texts:
            try:
                windows = self.deid.windows(texts)
            except Exception:  # noqa: BLE001  (predict_step redoes the documents one by one and names the bad one)
                windows = None
        return {"docs": docs, "windows": windows}

    def predict_step(self, batch: dict[str, Any], batch_idx: int = 0) -> list[Outcome]:
        docs: list[CorpusDocument] = batch["docs"]
        readable = [d for d in docs if d.error is None]
        try:
            predictions: list[TokenPredictions] | None = self._predict(readable, batch.get("windows"))
        except Exception:  # noqa: BLE001  (one document may break the batch: redo each alone)
            predictions = None
        each = predictions if predictions is not None else [None] * len(readable)
        results = iter([self._finish(doc, prediction) for doc, prediction in zip(readable, each)])
        return [(doc.ref, doc.error if doc.error is not None else next(results), doc.extracted) for doc in docs]

    def _finish(self, doc: CorpusDocument, prediction: TokenPredictions | None) -> DeidResult | str:
        """One document's result (``prediction`` None: its own forward pass), or why there is none."""
        try:
            if prediction is None:
                prediction = self.deid.predict_tokens([doc.text])[0]
            return self.deid.finish(doc.text, prediction)
        except Exception as error:  # noqa: BLE001  (reported per document; the run goes on and exits 1)
            return f"not de-identified ({type(error).__name__}: {error})"

    def _predict(self, docs: list[CorpusDocument], windows: list | None) -> list[TokenPredictions]:
        if self.deid.model is None or not docs:
            return self.deid.predict_tokens([d.text for d in docs])
        if windows is None:
            raise ValueError("windowing failed")
        return self.deid.forward(windows, len(docs))


class DeidWriter(BasePredictionWriter):
    """Writes each de-identified document (and its spans) under ``output_dir`` as soon as its batch is done, and
    reports each document that failed: the driver of a :class:`thunder.runs.plan.OutputPlan` (``PER_DOCUMENT``)."""

    def __init__(
        self, output_dir: str, spans: bool = True, overwrite: bool = False, out_format: str | None = None
    ) -> None:
        """
        Args:
            output_dir: where the de-identified documents go (created when missing; not inside an input directory).
            spans: also write ``<output>.spans.jsonl`` with the replaced spans of each document.
            overwrite: redo every document, whatever settings made the outputs there (default: skip those written
                under the same settings; other settings are refused).
            out_format: the format documents are written in: text, docx or hwpx (default: each .docx and .hwpx in
                its own, a .hwp as .hwpx, a .pdf as text; docs/formats.md); text and JSONL inputs stay text.
        """
        super().__init__(write_interval="batch")
        if out_format not in (None, *OUT_FORMATS):
            raise ValueError(f"out_format {out_format!r}: choose one of {', '.join(OUT_FORMATS)}")
        self.output_dir, self.spans, self.overwrite, self.out_format = Path(output_dir), spans, overwrite, out_format
        self.plan: OutputPlan | None = None
        self.refs: list[DocumentRef] = []
        self.interrupted = False
        self._slots: dict[str, Slot] = {}
        self._restore: Callable[[], None] = lambda: None

    def setup(self, trainer: Trainer, pl_module: LightningModule, stage: str) -> None:
        """Check every output path, then (the first process) lock the directory, compare the settings and clean up
        after a killed run, all before any document is read."""
        corpus = getattr(trainer.datamodule, "corpus", None)
        if not isinstance(corpus, Corpus):
            raise InputError("DeidWriter needs thunder.runs.prediction.CorpusDataModule as the data")
        self.refs = corpus.refs
        readable = [ref for ref in corpus.refs if ref.error is None]
        slots = [Slot(output_name(ref.output, self.out_format) if ref.offset is None else ref.output, ref.id,
                      where=ref.where, source=Path(ref.path), key=ref.output) for ref in readable]  # fmt: skip
        pipeline = getattr(pl_module, "pipeline", None)
        names = identifying_names(pipeline, pl_module.policy) if isinstance(pipeline, PipelineOptions) else None
        if names is not None:  # names hold no identifier
            slots = hide_identifying(slots, names)
        plan = OutputPlan("thunder predict", Layout.PER_DOCUMENT, self.output_dir, corpus.listing, slots,
                          total=len(corpus.refs), spans=self.spans,
                          out_option="output_dir", overwrite_option="DeidWriter's overwrite: true")  # fmt: skip
        plan.check()
        self._slots = {ref.output: slot for ref, slot in zip(readable, slots)}  # by the name the data module knows
        if trainer.world_size > 1:
            plan.failures_name = f"failed-{trainer.global_rank}.jsonl"
        self.plan, self.interrupted = plan, False
        refused = None
        if trainer.is_global_zero:
            try:
                plan.claim(self._settings(pl_module), self.overwrite)
                plan.save_record()
            except InputError as error:
                refused = str(error)
        refused = trainer.strategy.broadcast(refused)
        if refused is not None:
            raise InputError(refused)
        plan.resume()

    def _settings(self, pl_module: LightningModule) -> dict[str, Any]:
        outputs = {"layout": Layout.PER_DOCUMENT.value, "spans": self.spans,
                   **({"out_format": self.out_format} if self.out_format else {})}  # fmt: skip
        pipeline, deid = getattr(pl_module, "pipeline", None), getattr(pl_module, "deid", None)
        if pipeline is None or deid is None:
            return {**outputs, "module": f"{type(pl_module).__module__}.{type(pl_module).__qualname__}"}
        return run_settings(pipeline, deid, getattr(pl_module, "allow_unverified", False), **outputs)

    def done(self) -> set[str]:
        """The documents whose output exists already (by :attr:`DocumentRef.output`; they are skipped)."""
        return {output for output, slot in self._slots.items() if self.plan is not None and self.plan.is_done(slot)}

    def on_predict_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        """Ctrl-C and SIGTERM raise :class:`Interrupted` in this process (DataLoader workers keep their default);
        installed here, after the trainer's own handlers, and restored when the run ends."""
        self._restore = catch_signals(Interrupted)

    def write_on_batch_end(
        self,
        trainer: Trainer,
        pl_module: LightningModule,
        prediction: list[Outcome],
        batch_indices: Sequence[int] | None,
        batch: Any,
        batch_idx: int,
        dataloader_idx: int,
    ) -> None:
        assert self.plan is not None
        for ref, result, extracted in prediction:
            failure = {"doc": ref.id, "file": ref.path, "line": ref.line}
            if isinstance(result, str):
                self.plan.fail(ref.where, result, failure)
                continue
            try:
                content = document_output(extracted, result, self.out_format) if extracted is not None else None
            except FormatError as error:  # refused, nothing written for it; the run goes on and exits 1
                self.plan.fail(ref.where, f"not written: {error}", failure)
                continue
            self.plan.write(self.plan.named(self._slots[ref.output], result), result, content)
        prediction.clear()  # written: do not keep millions of documents in the predict loop's outputs

    def on_predict_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        """Totals over all processes; the summary line on the first."""
        import torch

        assert self.plan is not None
        counts = self.plan.counts
        totals = torch.tensor([counts.written, counts.failed], dtype=torch.long, device=trainer.strategy.root_device)
        totals = trainer.strategy.reduce(totals, reduce_op="sum")
        counts.written, counts.failed = (int(c) for c in totals.cpu().tolist())
        self._close()
        if trainer.is_global_zero:
            self.plan.report()

    @property
    def written(self) -> int:
        return self.plan.counts.written if self.plan is not None else 0

    @property
    def failed(self) -> int:
        return self.plan.counts.failed if self.plan is not None else 0

    @property
    def already(self) -> int:
        return self.plan.counts.already if self.plan is not None else 0

    def summary(self) -> str:
        return self.plan.summary() if self.plan is not None else ""

    def on_exception(self, trainer: Trainer, pl_module: LightningModule, exception: BaseException) -> None:
        self.interrupted = isinstance(exception, (Interrupted, KeyboardInterrupt))
        self._close()

    def teardown(self, trainer: Trainer, pl_module: LightningModule, stage: str) -> None:
        self._close()

    def _close(self) -> None:
        self._restore()
        self._restore = lambda: None
        if self.plan is not None:
            self.plan.close()


def exit_status(trainer: Trainer | None, error: BaseException | None = None) -> int | str:
    """The exit status of a ``thunder predict`` run that ended (``error`` None) or raised ``error``: 0; 1 when a
    document was not written; a one-line message for refused inputs or options; 130 when interrupted. Any other
    ``error`` (a bug) is raised again."""
    writer = next((cb for cb in getattr(trainer, "callbacks", []) if isinstance(cb, DeidWriter)), None)
    interrupted = isinstance(error, (Interrupted, KeyboardInterrupt)) or (writer is not None and writer.interrupted)
    if interrupted:
        if trainer is not None and getattr(trainer.strategy, "launcher", None) is not None:
            kill = getattr(trainer.strategy.launcher, "kill", None)  # DDP processes started by this one
            if kill is not None:
                kill(signal.SIGTERM)
        if trainer is None or trainer.is_global_zero:
            plan = writer.plan if writer is not None else None
            if plan is not None:
                plan.report(summary=False)
            print(f"\n{plan.interrupted() if plan else 'interrupted: 0 documents written'}", file=sys.stderr, flush=True)
        return INTERRUPTED
    if isinstance(error, SystemExit):
        return error.code if isinstance(error.code, (int, str)) else 1
    if isinstance(error, (OSError, ValueError, LookupError)):  # InputError included
        return f"thunder predict: error: {error}"
    if error is not None:
        raise error
    return 1 if writer is not None and writer.failed else 0
