"""Corpus-scale de-identification with Lightning: ``thunder predict --config configs/predict.yaml``.

- :class:`DeidPredictor` (LightningModule) holds a :class:`~thunder.deid.Deidentifier`; its model is a submodule,
  so Lightning places it on each device (and applies the precision plugin, e.g. ``bf16-mixed``).
- :class:`CorpusDataModule` lists the documents of text files, directories (``*.txt``/``*.md``) and JSONL files
  once, in a fixed order, and reads each lazily; the predict loader is a plain map-style dataset, so Lightning's
  ``DistributedSampler`` splits it over processes, GPUs and nodes. Tokenization and windowing run in the loader
  workers (the predictor's :meth:`~DeidPredictor.collate`).
- :class:`DeidWriter` (BasePredictionWriter) writes each document's text, and optionally its spans as JSONL,
  atomically (temporary file, then ``os.replace``; the text last, as the "done" marker). Documents whose output
  already exists are skipped by the loader, so a restarted run continues where it stopped.

Outputs: a text input ``DIR/a/b.txt`` given as ``DIR`` is written to ``OUT/a/b.txt``; a JSONL record with id ``X``
from ``c.jsonl`` to ``OUT/c/X.txt`` (ids made filesystem-safe); spans to the same path plus ``.spans.jsonl``.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from lightning.pytorch import LightningDataModule, LightningModule, Trainer
from lightning.pytorch.callbacks import BasePredictionWriter
from torch.utils.data import DataLoader, Dataset

from thunder.deid import DeidResult, Deidentifier, merge_windows
from thunder.outputs import span_record, write_atomic

log = logging.getLogger(__name__)
_UNSAFE = re.compile(r"[^\w.\-]+")


@dataclass(frozen=True)
class DocumentRef:
    """Where one document is: a whole text file (``offset`` None) or one JSONL line at byte ``offset``."""

    id: str
    path: str
    offset: int | None
    output: str  # relative output path


@dataclass(frozen=True)
class CorpusDocument:
    ref: DocumentRef
    text: str


def safe_name(doc_id: str) -> str:
    """A file name for a document id (path separators and odd characters replaced)."""
    name = _UNSAFE.sub("_", doc_id).strip("._") or "doc"
    return name[:200]


def list_documents(inputs: Sequence[str | Path]) -> list[DocumentRef]:
    """Every document of ``inputs`` in a fixed order (a JSONL record is kept as its id and byte offset)."""
    refs: list[DocumentRef] = []
    for name in inputs:
        root = Path(name)
        if root.is_dir():
            files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".txt", ".md", ".jsonl"))
            pairs = [(p, p.relative_to(root)) for p in files]
        elif root.is_file():
            pairs = [(root, Path(root.name))]
        else:
            raise FileNotFoundError(f"input {root} does not exist")
        for path, relative in pairs:
            if path.suffix == ".jsonl":
                refs += _jsonl_refs(path, relative)
            else:
                refs.append(DocumentRef(relative.as_posix(), str(path), None, relative.as_posix()))
    return refs


def _jsonl_refs(path: Path, relative: Path) -> list[DocumentRef]:
    refs, offset = [], 0
    with path.open("rb") as stream:
        for number, line in enumerate(stream, start=1):
            start, offset = offset, offset + len(line)
            if not line.strip():
                continue
            try:
                doc_id = str(json.loads(line).get("id", f"{path.name}:{number}"))
            except (ValueError, AttributeError) as error:
                log.error("skipping %s:%d: bad JSONL record (%s)", path, number, error)
                continue
            output = (relative.with_suffix("") / f"{safe_name(doc_id)}.txt").as_posix()
            refs.append(DocumentRef(doc_id, str(path), start, output))
    return refs


class CorpusDataset(Dataset):
    """Documents read on access; one whose output exists (``done``) or that cannot be read (logged with its file
    and position) is ``None`` and dropped by the collate."""

    def __init__(self, refs: Sequence[DocumentRef], done: Any = None) -> None:
        self.refs, self.done = list(refs), done

    def __len__(self) -> int:
        return len(self.refs)

    def __getitem__(self, index: int) -> CorpusDocument | None:
        ref = self.refs[index]
        if self.done is not None and self.done(ref):
            return None
        path = Path(ref.path)
        try:
            if ref.offset is None:
                return CorpusDocument(ref, path.read_bytes().decode("utf-8"))
            with path.open("rb") as stream:
                stream.seek(ref.offset)
                return CorpusDocument(ref, json.loads(stream.readline().decode("utf-8"))["text"])
        except UnicodeDecodeError as error:
            at = error.start + (ref.offset or 0)
            log.error("skipping %s: not valid UTF-8 at byte %d (%s)", path, at, error.reason)
        except (OSError, ValueError, KeyError) as error:
            log.error("skipping %s (document %s): %s", path, ref.id, error)
        return None


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
        self.inputs, self.batch_size, self.num_workers = list(inputs), batch_size, num_workers
        self.refs: list[DocumentRef] = []

    def setup(self, stage: str | None = None) -> None:
        self.refs = list_documents(self.inputs)

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


class DeidPredictor(LightningModule):
    """The de-identification pipeline as a LightningModule for ``Trainer.predict``."""

    def __init__(
        self,
        model: str | None = None,
        operator: str = "placeholder",
        recognizers: list[str] | None = None,
        max_length: int = 512,
        stride: int = 128,
        window_batch_size: int = 16,
        threshold: float = 0.5,
    ) -> None:
        """
        Args:
            model: export directory or ``.ckpt`` of a trained Thunder model (``None``: recognizers only).
            operator: placeholder, tag, mask, surrogate or a module.Class path.
            recognizers: recognizer names or module.Class paths (default: all built-in).
            max_length: window length in tokens, special tokens included.
            stride: overlap of consecutive windows in tokens.
            window_batch_size: windows per forward pass.
            threshold: a token is an identifier when the model's 1 - P(O) exceeds this.
        """
        super().__init__()
        self.save_hyperparameters()
        options = dict(recognizers=recognizers, operator=operator, max_length=max_length, stride=stride,
                       batch_size=window_batch_size, threshold=threshold)  # fmt: skip
        self.deid = Deidentifier.from_pretrained(model, **options) if model else Deidentifier(**options)
        self.model = self.deid.model  # a submodule: Lightning moves it to the device

    def collate(self, items: Sequence[CorpusDocument | None]) -> dict[str, Any]:
        """Documents of a batch and their windows (runs in the DataLoader workers)."""
        docs = _drop_done(items)
        windows = self.deid.windows([d.text for d in docs]) if self.deid.model is not None and docs else []
        return {"docs": docs, "windows": windows}

    def predict_step(self, batch: dict[str, Any], batch_idx: int = 0) -> list[tuple[DocumentRef, DeidResult]]:
        docs, windows = batch["docs"], batch["windows"]
        if self.deid.model is not None and docs:
            predictions = merge_windows(len(docs), windows, self.deid.forward_windows(windows))
        else:
            predictions = self.deid.predict_tokens([d.text for d in docs])
        return [(doc.ref, self.deid.finish(doc.text, p)) for doc, p in zip(docs, predictions)]


class DeidWriter(BasePredictionWriter):
    """Writes each de-identified document (and its spans) under ``output_dir`` as soon as its batch is done."""

    def __init__(self, output_dir: str, spans: bool = True) -> None:
        """
        Args:
            output_dir: where the de-identified documents go (created when missing).
            spans: also write ``<output>.spans.jsonl`` with the replaced spans of each document.
        """
        super().__init__(write_interval="batch")
        self.output_dir, self.spans = Path(output_dir), spans

    def is_done(self, ref: DocumentRef) -> bool:
        """Whether the output of ``ref`` exists (written by this or an earlier run)."""
        return (self.output_dir / ref.output).is_file()

    def write_on_batch_end(
        self,
        trainer: Trainer,
        pl_module: LightningModule,
        prediction: list[tuple[DocumentRef, DeidResult]],
        batch_indices: Sequence[int] | None,
        batch: Any,
        batch_idx: int,
        dataloader_idx: int,
    ) -> None:
        for ref, result in prediction:
            target = self.output_dir / ref.output
            if self.spans:
                lines = (json.dumps(span_record(ref.id, span), ensure_ascii=False) + "\n" for span in result.spans)
                write_atomic(target.with_name(target.name + ".spans.jsonl"), "".join(lines))
            write_atomic(target, result.text)
        prediction.clear()  # written: do not keep millions of documents in the predict loop's outputs
