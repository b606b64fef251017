"""Pretraining shards: documents -> Mecab-ko + BPE token shards (LitData ``optimize``), read back as masked blocks."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import numpy as np
import torch
from litdata import StreamingDataset, optimize
from litdata import TokensLoader as LitDataTokensLoader

from thunder.documents.corpus import SPLIT_BYTES, Span, documents, plan
from thunder.language.morphemes import cut
from thunder.language.tokenizer import ThunderTokenizer
from thunder.seeds import stable_seed, stable_share

FORMAT = "thunder-corpus/1"
MANIFEST = "thunder_corpus.json"
CONTINUES = 1 << 30  # flag on a stored id: the token continues the morpheme (piece) of the token before it
# LitData starts each worker and, per worker, an uploader and a remover process. Spawned, each re-imports torch,
# litdata and thunder (about 5 CPU seconds apiece: 32 CPU seconds for 2 workers, docs/pretraining.md); forked, they
# start at once. Fork is Linux's default (and LitData's own choice in notebooks); elsewhere keep LitData's default
# (spawn).
START_METHOD = "fork" if sys.platform == "linux" else None


# ----------------------------------------------------------------------------------------------- preparation


@dataclass(frozen=True)
class PrepareOptions:
    """How documents become tokens: tokenizer directory, Mecab call size, JSONL field, held-out share."""

    tokenizer: str
    max_chars: int = 4096
    batch_chars: int = 1 << 20
    text_field: str = "text"
    val_fraction: float = 0.01


@lru_cache(maxsize=2)
def _tokenizer(path: str) -> ThunderTokenizer:
    # one worker is one core: no Rust thread pool competing with the other workers
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    return _load_tokenizer(path)


def _load_tokenizer(path: str) -> ThunderTokenizer:
    from thunder.language.release_tokenizer import load_tokenizer

    return load_tokenizer(path)


def held_out(text: str, val_fraction: float) -> bool:
    """Whether a document belongs to the validation split (a stable hash of its text)."""
    if val_fraction <= 0:
        return False
    return stable_share("corpus-val", hashlib.blake2b(text.encode()).hexdigest()) < val_fraction


def encode_stream(tokenizer: ThunderTokenizer, texts: Sequence[str], ends: Sequence[bool]) -> np.ndarray:
    """Stored tokens of consecutive texts: ids, ``| CONTINUES`` inside a morpheme, ``[SEP]`` after each document end."""
    ids, begins, bounds = tokenizer.encode_ids(texts)
    values = np.where(begins, ids, ids | CONTINUES).astype(np.int32)
    sep_after = bounds[1:][np.asarray(ends, dtype=bool)]
    return np.insert(values, sep_after, np.int32(tokenizer.sep_token_id))


def tokenize_span(span: Span, options: PrepareOptions, split: str) -> Iterator[torch.Tensor]:
    """LitData ``optimize`` function: the stored tokens of one work item's ``split`` share, in batches."""
    tokenizer = _tokenizer(options.tokenizer)
    texts: list[str] = []
    ends: list[bool] = []
    size = 0
    for document in documents(span, options.text_field):
        if held_out(document, options.val_fraction) != (split == "val"):
            continue
        parts = list(cut(document, options.max_chars))
        texts += parts
        ends += [False] * (len(parts) - 1) + [True]
        size += len(document)
        if size >= options.batch_chars:
            yield torch.from_numpy(encode_stream(tokenizer, texts, ends))
            texts, ends, size = [], [], 0
    if texts:
        yield torch.from_numpy(encode_stream(tokenizer, texts, ends))


def tokenizer_digest(path: str | Path) -> str:
    """SHA-256 of a tokenizer's ``tokenizer.json``: prepared shards record it, readers check it."""
    return hashlib.sha256((Path(path) / "tokenizer.json").read_bytes()).hexdigest()


def prepare_corpus(
    inputs: Sequence[str | Path],
    out: str | Path,
    options: PrepareOptions,
    num_workers: int = 1,
    chunk_bytes: str = "64MB",
    split_bytes: int = SPLIT_BYTES,
) -> dict[str, Any]:
    """Tokenize a corpus into ``out/train`` (and ``out/val`` when ``val_fraction > 0``) with LitData ``optimize``.

    Each split is one ``optimize`` pass over the work items (the validation pass reads everything but tokenizes only
    its share). Writes ``out/thunder_corpus.json`` last, so its presence means the shards are complete.
    """
    if not 0 <= options.val_fraction < 1:
        raise ValueError(f"val_fraction must be in [0, 1), got {options.val_fraction}")
    if options.max_chars < 1 or options.batch_chars < 1:
        raise ValueError("max_chars and batch_chars must be positive")
    if num_workers < 1:
        raise ValueError(f"num_workers must be at least 1, got {num_workers}")
    tokenizer = _load_tokenizer(options.tokenizer)  # fails here, not in a worker
    spans = plan(inputs, split_bytes)
    if not spans:
        raise ValueError(f"no corpus files (*.txt, *.jsonl, *.md) under {', '.join(map(str, inputs))}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / MANIFEST).unlink(missing_ok=True)
    splits = ["train", "val"] if options.val_fraction > 0 else ["train"]
    tokens: dict[str, int] = {}
    for split in splits:
        _optimize(
            fn=partial(tokenize_span, options=options, split=split),
            inputs=spans,
            output_dir=str((out / split).resolve()),
            weights=[span.end - span.start for span in spans],
            chunk_bytes=chunk_bytes,
            num_workers=min(num_workers, len(spans)),
            item_loader=TokensLoader(),
            mode="overwrite",
            start_method=START_METHOD,
        )
        tokens[split] = _count_tokens(out / split)
    manifest = {
        "format": FORMAT,
        "tokenizer_sha256": tokenizer_digest(options.tokenizer),
        "vocab_size": tokenizer.vocab_size,
        "options": asdict(options),
        "inputs": [str(Path(p).resolve()) for p in inputs],
        "files": len({span.path for span in spans}),
        "bytes": sum(Path(path).stat().st_size for path in {span.path for span in spans}),  # on disk (xz: compressed)
        "tokens": tokens,
        "continues_flag": CONTINUES,
    }
    if int(os.getenv("DATA_OPTIMIZER_NODE_RANK", "0")) == 0:
        (out / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return manifest


def _optimize(**kwargs: Any) -> None:
    """LitData ``optimize``; a worker's error (reported as a RuntimeError holding its traceback) becomes that error's
    one-line message."""
    try:
        optimize(**kwargs)
    except RuntimeError as error:
        found = re.findall(r"^(\w+(?:Error|Exception)): (.+)$", str(error), flags=re.MULTILINE)
        found = [(kind, message) for kind, message in found if kind != "RuntimeError"]  # litdata's wrapper
        if not found:
            raise
        kind, message = found[-1]
        raise (FileNotFoundError if kind == "FileNotFoundError" else ValueError)(message) from None


def _count_tokens(directory: Path) -> int:
    """Tokens stored in a LitData output directory (from its ``index.json``)."""
    index = directory / "index.json"
    if not index.is_file():
        return 0
    return sum(int(chunk["dim"] or 0) for chunk in json.loads(index.read_text())["chunks"])


def read_manifest(directory: str | Path, tokenizer: str | Path | None = None) -> dict[str, Any]:
    """The manifest of prepared shards; with ``tokenizer``, checks that they were made with that tokenizer."""
    path = Path(directory) / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: {directory} is not a complete `thunder data prepare` output")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT:
        raise ValueError(f"{path}: unsupported format {manifest.get('format')!r} (expected {FORMAT!r})")
    if tokenizer is not None and manifest["tokenizer_sha256"] != tokenizer_digest(tokenizer):
        raise ValueError(f"{path}: the shards were made with another tokenizer than {tokenizer}")
    return manifest


# ----------------------------------------------------------------------------------------------- reading shards


class TokensLoader(LitDataTokensLoader):
    """LitData's ``TokensLoader`` that unmaps each chunk (and closes its file) once the reader has moved past it.

    LitData 0.2.44 counts a reader of a chunk on every item ``_load_chunk`` serves (``_counter[chunk] += 1``) but
    ``BinaryReader.read`` calls ``close(chunk)`` once, when the next item comes from another chunk; the count never
    returns to 0, so every chunk read stays memory-mapped with an open file until the process ends (resident pages
    growing with the corpus read, one open file per chunk: about 1,250 for the paper's 80 GB in 64 MB chunks). Here a
    chunk counts one reference while mapped, so that ``close`` unmaps it. A loader serves one reader (each DataLoader
    worker has its own copy); ``close`` only ever gets the chunk just left, after the first item of the next chunk is
    loaded; the prefetch thread (remote or compressed shards) maps chunks ahead through ``pre_load_chunk``, which maps
    a chunk once and is a no-op on a mapped one; a chunk met again is mapped again. Items are views into the map:
    ``MaskedBlocks`` turns each into new arrays before the next read. The class keeps LitData's name, which LitData
    checks against the shards' ``index.json`` (``ChunksConfig._validate_item_loader``).
    """

    def _load_chunk(self, chunk_index: int, chunk_filepath: str) -> None:
        if chunk_index not in self._mmaps:
            super()._load_chunk(chunk_index, chunk_filepath)
            self._counter[chunk_index] = 1


def mask_block(
    values: np.ndarray,
    rng: np.random.Generator,
    mask_token_id: int,
    vocab_size: int,
    special_ids: Sequence[int],
    probability: float = 0.15,
    whole_morpheme: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """BERT masking of stored tokens (vectorised :func:`thunder.data.mask_tokens`): ``(input_ids, labels)``.

    Each token, or each morpheme as a whole, is chosen with ``probability``; a chosen non-special token becomes
    ``[MASK]`` (80%), a random non-special id (10%) or stays (10%); labels are -100 where not chosen.
    """
    ids = (values & (CONTINUES - 1)).astype(np.int64)
    if whole_morpheme:
        # a block may start inside a morpheme: those first tokens are group 0, the first whole morpheme group 1
        group = np.cumsum((values & CONTINUES) == 0)
        chosen = (rng.random(int(group[-1]) + 1 if len(group) else 0) < probability)[group]
    else:
        chosen = rng.random(len(ids)) < probability
    special = np.asarray(sorted(special_ids), dtype=np.int64)
    chosen &= ~np.isin(ids, special)
    labels = np.where(chosen, ids, -100)
    roll = rng.random(len(ids))
    replacement = rng.integers(0, vocab_size - len(special), len(ids))
    for special_id in special:  # skip over the special ids, as mask_tokens does
        replacement += replacement >= special_id
    input_ids = np.where(chosen & (roll < 0.8), mask_token_id, ids)
    input_ids = np.where(chosen & (roll >= 0.8) & (roll < 0.9), replacement, input_ids)
    return input_ids, labels


class MaskedBlocks(StreamingDataset):
    """Prepared shards as ``[CLS]`` + ``max_length - 1`` consecutive stored tokens, masked per ``(seed, epoch, block)``.

    A LitData ``StreamingDataset``: shuffled per epoch, each rank and DataLoader worker reading distinct blocks,
    resumable mid-epoch through ``StreamingDataLoader.state_dict``. The token stream is cut into blocks within each
    LitData chunk, so a chunk's last partial block (fewer than ``max_length - 1`` tokens) is left out.
    """

    def __init__(
        self,
        input_dir: str | Path,
        max_length: int,
        tokenizer: ThunderTokenizer,
        seed: int = 0,
        probability: float = 0.15,
        whole_morpheme: bool = False,
        shuffle: bool = True,
        masking_epoch: int | None = None,
    ) -> None:
        super().__init__(
            str(Path(input_dir).resolve()),
            item_loader=TokensLoader(block_size=max_length - 1),
            shuffle=shuffle,
            seed=seed,
            drop_last=shuffle,
        )
        self.cls_token_id, self.mask_token_id = tokenizer.cls_token_id, tokenizer.mask_token_id
        self.vocab_size = tokenizer.vocab_size
        self.special_ids = sorted({tokenizer.pad_token_id, tokenizer.cls_token_id, tokenizer.sep_token_id,
                                   tokenizer.unk_token_id, tokenizer.mask_token_id})  # fmt: skip
        self.mask_seed, self.probability, self.whole_morpheme = seed, probability, whole_morpheme
        self.masking_epoch = masking_epoch

    def __getitem__(self, index: Any) -> dict[str, torch.Tensor]:
        block = super().__getitem__(index).numpy()  # a view into the mapped chunk: not kept past this call
        position = int(getattr(index, "index", index))
        epoch = self.current_epoch if self.masking_epoch is None else self.masking_epoch
        rng = np.random.default_rng(stable_seed("mask", self.mask_seed, epoch, position))
        input_ids, labels = mask_block(
            block, rng, self.mask_token_id, self.vocab_size, self.special_ids, self.probability, self.whole_morpheme
        )
        return {
            "input_ids": torch.from_numpy(np.concatenate([[self.cls_token_id], input_ids])),
            "labels": torch.from_numpy(np.concatenate([[-100], labels])),
        }


def collate_blocks(items: Sequence[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """Stack equal-length blocks: ``input_ids``, ``attention_mask`` (all ones) and ``labels`` (B, T)."""
    input_ids = torch.stack([item["input_ids"] for item in items])
    labels = torch.stack([item["labels"] for item in items])
    return {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids), "labels": labels}
