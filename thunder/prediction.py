"""Corpus-scale de-identification with Lightning: ``thunder predict --config configs/predict.yaml``.

- :class:`DeidPredictor` (LightningModule) holds the :class:`~thunder.deid.Deidentifier` that its
  :class:`~thunder.deid.PipelineOptions` build; the model is a submodule, so Lightning places it on each device.
- :class:`CorpusDataModule` lists the documents once (:func:`thunder.sources.list_inputs`: files, directories,
  JSONL, extensions compared case-insensitively) and reads each lazily; Lightning's distributed sampler splits
  them over processes, GPUs and nodes. Tokenization and windowing run in the loader workers.
- :class:`DeidWriter` (BasePredictionWriter) writes each document's text, and optionally its spans, atomically
  (the text last: it marks the document done), so a restarted run skips finished documents.

Fail closed: every output path is planned before any work (no two documents, and no input, share one; the output
directory is outside the input directories); a document that cannot be read or de-identified is reported as
``file:line: reason`` (and in ``failed.jsonl``) while the others are written, and the run exits 1; Ctrl-C or
SIGTERM ends it with ``interrupted: N of M documents written`` and exit 130 (:func:`exit_status`).

Outputs: a text input ``DIR/a/b.txt`` given as ``DIR`` is written to ``OUT/a/b.txt``; a JSONL record with id ``X``
from ``c.jsonl`` to ``OUT/c/X.txt`` (ids made filesystem-safe); spans to the same path plus ``.spans.jsonl``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Sequence

from lightning.pytorch import LightningDataModule, LightningModule, Trainer
from lightning.pytorch.callbacks import BasePredictionWriter
from torch.utils.data import DataLoader, Dataset

from thunder.deid import DeidResult, PipelineOptions, TokenPredictions, merge_windows
from thunder.outputs import JsonlAppender, remove_temporary_files, span_record, write_atomic
from thunder.sources import InputError, InputFile, list_inputs, read_jsonl, read_text

INTERRUPTED = 130
FAILED_FILE = "failed.jsonl"
SPANS_SUFFIX = ".spans.jsonl"
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


@dataclass
class Corpus:
    """The documents of the inputs, what was skipped, the input files and the input directories (resolved)."""

    refs: list[DocumentRef]
    skipped: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    directories: list[Path] = field(default_factory=list)


def safe_name(doc_id: str) -> str:
    """A file name for a document id (path separators and odd characters replaced)."""
    name = _UNSAFE.sub("_", doc_id).strip("._") or "doc"
    return name[:200]


def list_documents(inputs: Sequence[str | Path]) -> Corpus:
    """Every document of ``inputs`` in a fixed order (a JSONL record is kept as its id and byte range).

    Raises :class:`~thunder.sources.InputError` for a missing input, a file given twice or no input at all; bad
    JSONL records are kept with their ``error`` (reported, never skipped silently).
    """
    if not inputs:
        raise InputError("no inputs: give files or directories (data.init_args.inputs)")
    listing = list_inputs(inputs)
    refs: list[DocumentRef] = []
    for file in listing.files:
        if file.jsonl:
            refs += _jsonl_refs(file)
        else:
            refs.append(DocumentRef(file.relative, str(file.path), None, file.relative))
    files = [file.path.resolve() for file in listing.files]
    return Corpus(refs, listing.skipped, files, listing.directories)


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


def check_outputs(corpus: Corpus, output_dir: Path, spans: bool) -> None:
    """Refuse, before any work, an output directory inside an input directory and any output path shared by two
    documents, by a document and an input, or used both as a file and as a directory."""
    real_out = output_dir.resolve()
    for directory in corpus.directories:
        if real_out == directory or directory in real_out.parents:
            raise InputError(f"output_dir {output_dir} is inside the input directory {directory}; choose a directory "
                             "outside the inputs")  # fmt: skip
    inputs = set(corpus.files)
    owners: dict[str, DocumentRef | None] = {FAILED_FILE: None}
    for ref in corpus.refs:
        if ref.error is not None:
            continue
        for name in (ref.output, ref.output + SPANS_SUFFIX) if spans else (ref.output,):
            if name in owners:
                raise InputError(_collision(ref, owners[name], output_dir / name))
            if real_out / name in inputs:
                raise InputError(f"{ref.where}: its output {output_dir / name} is an input file")
            owners[name] = ref
    for name, ref in owners.items():
        parent = next((str(p) for p in PurePosixPath(name).parents if str(p) in owners), None)
        if parent is not None and ref is not None:
            other = owners[parent]
            taken = f"the output of {other.where}" if other is not None else "a name the writer keeps for its own use"
            raise InputError(f"{ref.where}: its output {output_dir / name} needs {output_dir / parent} as a "
                             f"directory, but that is {taken}")  # fmt: skip


def _collision(ref: DocumentRef, other: DocumentRef | None, target: Path) -> str:
    if other is None:
        return f"{ref.where}: its output {target} is a name the writer keeps for its own use"
    if other.path == ref.path and other.line is not None and other.id == ref.id:
        return f"{ref.where}: id {ref.id!r} repeats line {other.line}"
    return f"{ref.where}: would be written to {target}, as {other.where} is"


class CorpusDataset(Dataset):
    """Documents read on access; one whose output exists (``done``) is ``None`` (dropped by the collate), one that
    cannot be read comes with ``error`` set."""

    def __init__(self, refs: Sequence[DocumentRef], done: Any = None) -> None:
        self.refs, self.done = list(refs), done

    def __len__(self) -> int:
        return len(self.refs)

    def __getitem__(self, index: int) -> CorpusDocument | None:
        ref = self.refs[index]
        if ref.error is not None:
            return CorpusDocument(ref, "", ref.error)
        if self.done is not None and self.done(ref):
            return None
        path = Path(ref.path)
        try:
            if ref.offset is None:
                return CorpusDocument(ref, read_text(path))
            with path.open("rb") as stream:
                stream.seek(ref.offset)
                text = json.loads(stream.read(ref.length).decode("utf-8"))["text"]
            if not isinstance(text, str):
                raise TypeError("'text' is not a string")
            text.encode("utf-8")  # a lone surrogate raises
            return CorpusDocument(ref, text)
        except InputError as error:
            return CorpusDocument(ref, "", str(error).removeprefix(f"{path}: "))
        except (OSError, ValueError, KeyError, TypeError) as error:
            return CorpusDocument(ref, "", f"cannot be read, the file changed since it was listed? ({error})")


class CorpusDataModule(LightningDataModule):
    """Predict-only data: text files, directories (``*.txt``, ``*.md``, ``*.jsonl`` recursively) and JSONL files."""

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
        self.corpus = list_documents(self.inputs)
        if self.trainer is None or self.trainer.is_global_zero:
            for line in self.corpus.skipped:
                print(f"thunder predict: {line}", file=sys.stderr)

    def predict_dataloader(self) -> DataLoader:
        trainer = self.trainer
        writer = next((cb for cb in trainer.callbacks if isinstance(cb, DeidWriter)), None) if trainer else None
        module = trainer.lightning_module if trainer else None
        collate = getattr(module, "collate", None) or _drop_done
        return DataLoader(
            CorpusDataset(self.refs, writer.is_done if writer else None),
            batch_size=self.batch_size,
            num_workers=self.num_workers,
            collate_fn=collate,
            shuffle=False,
        )

    def transfer_batch_to_device(self, batch: Any, device: Any, dataloader_idx: int) -> Any:
        return batch  # documents and windows stay on the CPU; windows are padded and moved per forward pass


def _drop_done(items: Sequence[CorpusDocument | None]) -> list[CorpusDocument]:
    return [item for item in items if item is not None]


Outcome = tuple[DocumentRef, "DeidResult | str"]  # a result, or why the document was not de-identified


class DeidPredictor(LightningModule):
    """The de-identification pipeline as a LightningModule for ``Trainer.predict``."""

    def __init__(self, pipeline: PipelineOptions = PipelineOptions()) -> None:
        """
        Args:
            pipeline: the options ``thunder deid`` takes (model, recognizers, operator(s), max_length, stride,
                batch_size = windows per forward pass, threshold, ...); out of range: refused here.
        """
        super().__init__()
        self.save_hyperparameters()
        self.deid = pipeline.build()
        self.model = self.deid.model  # a submodule: Lightning moves it to the device

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
        return [(doc.ref, doc.error if doc.error is not None else next(results)) for doc in docs]

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
        return merge_windows(len(docs), windows, self.deid.forward_windows(windows))


class DeidWriter(BasePredictionWriter):
    """Writes each de-identified document (and its spans) under ``output_dir`` as soon as its batch is done, and
    reports each document that failed."""

    def __init__(self, output_dir: str, spans: bool = True) -> None:
        """
        Args:
            output_dir: where the de-identified documents go (created when missing; not inside an input directory).
            spans: also write ``<output>.spans.jsonl`` with the replaced spans of each document.
        """
        super().__init__(write_interval="batch")
        self.output_dir, self.spans = Path(output_dir), spans
        self.refs: list[DocumentRef] = []
        self.written = self.failed = self.already = 0  # this process; totals over all processes after the run
        self.interrupted = False
        self._failures: JsonlAppender | None = None
        self._rank, self._world = 0, 1
        self._pid = os.getpid()
        self._handlers: dict[int, Any] = {}

    def is_done(self, ref: DocumentRef) -> bool:
        """Whether the output of ``ref`` exists (written by this or an earlier run)."""
        return ref.error is None and (self.output_dir / ref.output).is_file()

    def documents_done(self) -> int:
        return sum(self.is_done(ref) for ref in self.refs)

    def setup(self, trainer: Trainer, pl_module: LightningModule, stage: str) -> None:
        """Check every output path, then clean up after a killed run (all before any document is read)."""
        corpus = getattr(trainer.datamodule, "corpus", None)
        if isinstance(corpus, Corpus):
            check_outputs(corpus, self.output_dir, self.spans)
            self.refs = corpus.refs
        self._rank, self._world = trainer.global_rank, trainer.world_size
        self.written = self.failed = 0
        self.interrupted = False
        self.output_dir.mkdir(parents=True, exist_ok=True)
        if trainer.is_global_zero:
            remove_temporary_files(self.output_dir)
            for stale in self.output_dir.glob("failed*.jsonl"):  # the failures of an earlier run: redone now
                stale.unlink()
        self.already = self.documents_done()

    def on_predict_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        """Ctrl-C and SIGTERM raise :class:`Interrupted` in this process (DataLoader workers keep their default);
        installed here, after the trainer's own handlers, and restored when the run ends."""

        def handler(signum: int, frame: object) -> None:
            if os.getpid() != self._pid:
                raise KeyboardInterrupt
            raise Interrupted(signal.Signals(signum).name)

        self._pid = os.getpid()
        try:
            self._handlers = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
        except ValueError:  # not the main thread: leave signals alone
            self._handlers = {}

    def _restore_signals(self) -> None:
        for signum, previous in self._handlers.items():
            signal.signal(signum, previous)
        self._handlers = {}

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
        for ref, result in prediction:
            if isinstance(result, str):
                self._fail(ref, result)
                continue
            target = self.output_dir / ref.output
            if self.spans:
                lines = (json.dumps(span_record(ref.id, span), ensure_ascii=False) + "\n" for span in result.spans)
                write_atomic(target.with_name(target.name + SPANS_SUFFIX), "".join(lines))
            write_atomic(target, result.text)  # last: marks the document done
            self.written += 1
        prediction.clear()  # written: do not keep millions of documents in the predict loop's outputs

    def _fail(self, ref: DocumentRef, reason: str) -> None:
        self.failed += 1
        print(f"thunder predict: error: {ref.where}: {reason}", file=sys.stderr, flush=True)
        if self._failures is None:
            name = FAILED_FILE if self._world == 1 else f"failed-{self._rank}.jsonl"
            self._failures = JsonlAppender(self.output_dir / name)
        self._failures.write([{"doc": ref.id, "file": ref.path, "line": ref.line, "error": reason}])

    def on_predict_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        """Totals over all processes; the summary line on the first."""
        import torch

        counts = torch.tensor([self.written, self.failed], dtype=torch.long, device=trainer.strategy.root_device)
        counts = trainer.strategy.reduce(counts, reduce_op="sum")
        self.written, self.failed = (int(c) for c in counts.cpu().tolist())
        self._close()
        if trainer.is_global_zero:
            print(f"thunder predict: {self.summary()}", file=sys.stderr, flush=True)

    def summary(self) -> str:
        already = f", {self.already} already done" if self.already else ""
        return f"{self.written} written{already}, {self.failed} failed, of {len(self.refs)} documents"

    def on_exception(self, trainer: Trainer, pl_module: LightningModule, exception: BaseException) -> None:
        self.interrupted = isinstance(exception, (Interrupted, KeyboardInterrupt))
        self._close()

    def teardown(self, trainer: Trainer, pl_module: LightningModule, stage: str) -> None:
        self._close()

    def _close(self) -> None:
        self._restore_signals()
        if self._failures is not None:
            self._failures.close()
            self._failures = None


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
            done = f"{writer.documents_done()} of {len(writer.refs)}" if writer is not None else "0"
            print(f"\ninterrupted: {done} documents written", file=sys.stderr, flush=True)
        return INTERRUPTED
    if isinstance(error, SystemExit):
        return error.code if isinstance(error.code, (int, str)) else 1
    if isinstance(error, (OSError, ValueError, LookupError)):  # InputError included
        return f"thunder predict: error: {error}"
    if error is not None:
        raise error
    return 1 if writer is not None and writer.failed else 0
