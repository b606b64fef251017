"""Training data: synthesized judgments -> token labels -> overlapping windows -> batches; the LightningDataModules.

Token classification
    Every annotated judgment is synthesized (placeholders filled with sampled mentions, :mod:`thunder.synthesis`),
    tokenized with exact character offsets (:mod:`thunder.tokenizer`) and labelled: a token is inside an entity when
    its character range overlaps the entity's span (IO, or BIO where the first token of a span is ``B-``). Documents
    longer than ``max_length`` become overlapping windows (``[CLS]`` + tokens + ``[SEP]``, consecutive windows share
    ``stride`` tokens) so no text is ever dropped. For validation and testing each token is scored once: a token of
    an overlap gets label -100 in every window but the one that owns it (overlaps are split halfway, so each token
    is scored in the window where it has the most context).

Determinism and resumption
    One dataset item is one document (all its windows; the collate function flattens them). The training sampler,
    :class:`EpochSampler`, yields ``(epoch, index)`` keys, so the epoch reaches the dataset inside any DataLoader
    worker without shared state: a document's text depends only on ``(seed, epoch, doc_id)``, identical with any
    number of workers and on every DDP/FSDP rank (the sampler is a ``DistributedSampler`` that Lightning keeps and
    calls ``set_epoch`` on). :class:`ResumableDataLoader` implements Lightning's ``state_dict``/``load_state_dict``
    loader protocol: a checkpoint records the epoch and the number of batches already consumed, and a run resumed from
    a mid-epoch checkpoint continues with exactly the next batch it would have seen.

Masked-LM pretraining
    :class:`MLMDataModule` reads synthesized judgments and/or plain-text files, masks 15% of tokens (80% ``[MASK]``,
    10% random, 10% unchanged), optionally whole Mecab-ko morphemes at once, and packs the documents of a batch into
    ``max_length`` blocks.
"""

from __future__ import annotations

import math
import random
import warnings
from bisect import bisect_right
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Literal, Sequence

import torch
from lightning.pytorch import LightningDataModule
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from thunder.annotation import AnnotatedDocument, iter_corpus
from thunder.identifiers import CATALOGUE
from thunder.mentions import MentionBank, MentionSource, load_generators
from thunder.names import ShapeNoise
from thunder.synthesis import EntitySpan, SynthesizedDocument, Synthesizer, head_outside_labels, stable_seed
from thunder.taxonomy import GRANULARITIES, SCHEMES, LabelSet, Taxonomy
from thunder.tokenizer import THUNDER_CONFIG, Encoding, ThunderTokenizer, check_windows, morpheme_pieces, window_ranges

IGNORE_INDEX = -100
RESOURCES = Path(__file__).resolve().parent / "resources"
DEMO_CORPUS = RESOURCES / "demo" / "annotated"
DEMO_MENTIONS = RESOURCES / "demo" / "mentions"
DEMO_TOKENIZER = RESOURCES / "demo" / "tokenizer"
REPLACEMENTS = ("per_epoch", "single")
SPLITS = ("train", "val", "test")
TEST_MENTIONS = ("seen", "unseen", "both")
HEAD_NOUNS = ("inside", "corpus")

Example = dict[str, list[int]]  # "input_ids" and "labels" of one window / one masked document, no padding


# ----------------------------------------------------------------------------------------------- token labels


def token_labels(offsets: Sequence[tuple[int, int]], spans: Sequence[EntitySpan], label_set: LabelSet) -> list[int]:
    """Tag id of every token: inside a span when its character range overlaps it (the first such token begins it).

    ``offsets`` are the tokens' character ranges in the text the ``spans`` point into; tokens outside every span
    get ``O`` (id 0). Spans must not overlap each other.
    """
    labels = [0] * len(offsets)
    for span in sorted(spans, key=lambda span: (span.start, span.end)):
        if span.end <= span.start:
            continue
        entity_type = label_set.entity_type(span.label)
        begin, inside = label_set.begin_id(entity_type), label_set.inside_id(entity_type)
        first = True
        for index in range(_first_token_at_or_after(offsets, span.start), len(offsets)):
            start, end = offsets[index]
            if start >= span.end:
                break
            if end > span.start or (start == end and start >= span.start):
                labels[index] = begin if first else inside
                first = False
    return labels


def _first_token_at_or_after(offsets: Sequence[tuple[int, int]], position: int) -> int:
    """Index of the first token whose end lies after ``position`` (binary search; offsets are ordered)."""
    low, high = 0, len(offsets)
    while low < high:
        middle = (low + high) // 2
        start, end = offsets[middle]
        if max(end, start + 1) <= position:
            low = middle + 1
        else:
            high = middle
    return low


def window_examples(
    encoding: Encoding,
    labels: Sequence[int],
    tokenizer: ThunderTokenizer,
    max_length: int,
    stride: int,
    score_once: bool,
) -> list[Example]:
    """``[CLS] tokens [SEP]`` windows of one document with their labels (-100 on special tokens).

    With ``score_once`` (validation/test) tokens owned by another window are -100 too, so every token is scored
    exactly once over the document's windows.
    """
    examples = []
    for start, end, own_start, own_end in window_ranges(len(encoding.ids), max_length, stride):
        window_labels = list(labels[start:end])
        if score_once:
            for position in range(start, end):
                if not own_start <= position < own_end:
                    window_labels[position - start] = IGNORE_INDEX
        examples.append(
            {
                "input_ids": [tokenizer.cls_token_id, *encoding.ids[start:end], tokenizer.sep_token_id],
                "labels": [IGNORE_INDEX, *window_labels, IGNORE_INDEX],
            }
        )
    return examples


# ----------------------------------------------------------------------------------------------- datasets


class _EpochDataset(Dataset):
    """A dataset whose items depend on the epoch: training takes it from the sampler key, evaluation fixes it.

    Keys are ``(epoch, index)`` pairs (see :class:`EpochSampler`) or plain indices, which use :meth:`set_epoch`'s
    epoch. A fixed ``epoch`` (validation/test) overrides both.
    """

    def __init__(self, epoch: int | None) -> None:
        self.fixed_epoch = epoch
        self.epoch = epoch or 0

    def set_epoch(self, epoch: int) -> None:
        """Epoch used for plain integer indices (ignored when the epoch is fixed)."""
        if self.fixed_epoch is None:
            self.epoch = epoch

    def resolve(self, key: int | tuple[int, int]) -> tuple[int, int]:
        """``(epoch, index)`` of a sampler key."""
        epoch, index = (int(key[0]), int(key[1])) if isinstance(key, (tuple, list)) else (self.epoch, int(key))
        return (epoch if self.fixed_epoch is None else self.fixed_epoch), index


class TokenClassificationDataset(_EpochDataset):
    """Synthesized, tokenized, labelled and windowed documents; item = all windows of one document.

    ``epoch=None`` for training (the epoch comes with the sampler key); a fixed ``epoch`` for validation/test.
    """

    def __init__(
        self,
        documents: Sequence[AnnotatedDocument],
        synthesizer: Synthesizer,
        tokenizer: ThunderTokenizer,
        label_set: LabelSet,
        max_length: int,
        stride: int,
        score_once: bool,
        epoch: int | None = None,
    ) -> None:
        super().__init__(epoch)
        self.documents = list(documents)
        self.synthesizer = synthesizer
        self.tokenizer = tokenizer
        self.label_set = label_set
        self.max_length = max_length
        self.stride = stride
        self.score_once = score_once

    def __len__(self) -> int:
        return len(self.documents)

    def lengths(self) -> list[int]:
        """Length of each annotated document in characters: the bucketing key of length-grouped batches."""
        return [len(doc.text) for doc in self.documents]

    def synthesize(self, index: int, epoch: int | None = None) -> SynthesizedDocument:
        """The synthesized text and gold spans of document ``index`` at ``epoch`` (default: the dataset's)."""
        epoch, index = self.resolve(index if epoch is None else (epoch, index))
        return self.synthesizer(self.documents[index], epoch=epoch)

    def __getitem__(self, key: int | tuple[int, int]) -> list[Example]:
        epoch, index = self.resolve(key)
        document = self.synthesize(index, epoch)
        encoding = self.tokenizer.encode(document.text)
        labels = token_labels(encoding.offsets, document.spans, self.label_set)
        return window_examples(encoding, labels, self.tokenizer, self.max_length, self.stride, self.score_once)


@dataclass
class TokenCollator:
    """Flattens items (lists of windows) and right-pads them: ``input_ids``, ``attention_mask``, ``labels`` (B, T)."""

    pad_token_id: int
    pad_to_multiple_of: int | None = None

    def __call__(self, items: Sequence[list[Example] | Example]) -> dict[str, torch.Tensor]:
        examples = [example for item in items for example in (item if isinstance(item, list) else [item])]
        length = max((len(example["input_ids"]) for example in examples), default=0)
        if self.pad_to_multiple_of:
            length = -(-length // self.pad_to_multiple_of) * self.pad_to_multiple_of
        input_ids = torch.full((len(examples), length), self.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((len(examples), length), dtype=torch.long)
        labels = torch.full((len(examples), length), IGNORE_INDEX, dtype=torch.long)
        for row, example in enumerate(examples):
            size = len(example["input_ids"])
            input_ids[row, :size] = torch.tensor(example["input_ids"], dtype=torch.long)
            attention_mask[row, :size] = 1
            labels[row, :size] = torch.tensor(example["labels"], dtype=torch.long)
        return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}


# ----------------------------------------------------------------------------------------------- sampling


class EpochSampler(DistributedSampler):
    """Deterministic per-epoch order of ``(epoch, index)`` keys; a ``DistributedSampler`` so Lightning keeps it.

    The order depends only on ``(seed, epoch)``; each of ``num_replicas`` ranks takes every ``num_replicas``-th key
    (padded to equal length, like ``DistributedSampler``). With ``lengths`` and ``batch_size``, keys are grouped
    into batches of similar length: the shuffled order is cut into chunks of ``50 * batch_size`` that are sorted by
    length (longest first), so padding stays small while batches still vary from epoch to epoch.
    :meth:`skip` makes the next iteration start after the first ``n`` keys (mid-epoch resumption).
    """

    GROUP_FACTOR = 50

    def __init__(
        self,
        dataset: Dataset,
        num_replicas: int = 1,
        rank: int = 0,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
        lengths: Sequence[int] | None = None,
        batch_size: int = 1,
    ) -> None:
        super().__init__(dataset, num_replicas=num_replicas, rank=rank, shuffle=shuffle, seed=seed, drop_last=drop_last)
        if lengths is not None and len(lengths) != len(dataset):  # type: ignore[arg-type]
            size = len(dataset)  # type: ignore[arg-type]
            raise ValueError(f"lengths has {len(lengths)} entries for a dataset of {size}")
        self.lengths = list(lengths) if lengths is not None else None
        self.batch_size = batch_size
        self._skip: tuple[int, int] | None = None  # (epoch, keys)

    def skip(self, n: int, epoch: int) -> None:
        """Leave out the first ``n`` keys of the next iteration if it is one of ``epoch`` (only that iteration)."""
        self._skip = (epoch, n)

    def indices(self) -> list[int]:
        """This rank's dataset indices for the current epoch, in order."""
        n = len(self.dataset)  # type: ignore[arg-type]
        if self.shuffle:
            generator = torch.Generator()
            generator.manual_seed(stable_seed("sampler", self.seed, self.epoch) % 2**63)
            order = torch.randperm(n, generator=generator).tolist()
        else:
            order = list(range(n))
        if self.drop_last:
            order = order[: self.total_size]
        elif order:
            padding = self.total_size - len(order)
            order += (order * math.ceil(padding / len(order)))[:padding]
        mine = order[self.rank : self.total_size : self.num_replicas]
        if self.lengths is not None:
            lengths = self.lengths
            chunk = self.GROUP_FACTOR * self.batch_size
            mine = [
                index
                for begin in range(0, len(mine), chunk)
                for index in sorted(mine[begin : begin + chunk], key=lambda i: -lengths[i])
            ]
        return mine

    def __iter__(self) -> Iterator[tuple[int, int]]:  # type: ignore[override]
        epoch, skip = self.epoch, self._skip
        self._skip = None
        start = skip[1] if skip is not None and skip[0] == epoch else 0
        return iter([(epoch, index) for index in self.indices()[start:]])


class ResumableDataLoader(DataLoader):
    """A DataLoader over an :class:`EpochSampler` that Lightning can checkpoint mid-epoch.

    ``state_dict()`` is ``{"epoch", "batches"}``: the sampler's epoch and how many batches of it were handed out.
    ``load_state_dict`` makes the next iteration continue after those batches (or start the next epoch when the
    saved one was complete). Lightning calls both through its loader-state protocol (fit loop checkpoints).
    """

    def __init__(self, dataset: Dataset, *args: Any, **kwargs: Any) -> None:
        super().__init__(dataset, *args, **kwargs)
        if not isinstance(self.sampler, EpochSampler):
            raise TypeError("ResumableDataLoader needs an EpochSampler as its sampler")
        self._epoch = self.sampler.epoch  # epoch of the current (or last) iteration
        self._batches = 0  # batches handed out in it
        self._resume: tuple[int, int] | None = None  # (epoch, batches) to continue after

    def __iter__(self) -> Iterator[Any]:  # type: ignore[override]
        # A generator, so nothing runs before the first ``next``: workers start and the sampler reads its epoch
        # only then, after Lightning's ``set_epoch`` (Lightning creates the iterator before a resumed run's epoch
        # is set).
        sampler: EpochSampler = self.sampler  # type: ignore[assignment]
        self._epoch = sampler.epoch
        resume, self._resume = self._resume, None
        self._batches = resume[1] if resume is not None and resume[0] == self._epoch else 0
        for batch in super().__iter__():
            self._batches += 1
            yield batch

    def state_dict(self) -> dict[str, int]:
        """Epoch of the current iteration and the number of its batches handed out so far."""
        return {"epoch": self._epoch, "batches": self._batches}

    def load_state_dict(self, state: dict[str, int]) -> None:
        """Continue after ``state["batches"]`` batches of epoch ``state["epoch"]`` on the next iteration."""
        sampler: EpochSampler = self.sampler  # type: ignore[assignment]
        epoch, batches = int(state["epoch"]), int(state["batches"])
        if batches >= len(self):
            epoch, batches = epoch + 1, 0
        assert self.batch_size is not None
        sampler.set_epoch(epoch)
        sampler.skip(batches * self.batch_size, epoch)
        self._resume = (epoch, batches)


def loader_generator(seed: int) -> torch.Generator:
    """A loader's own generator for its worker seeds: starting an iteration then draws nothing from the global
    generator, which only dropout uses, so a run resumed with the same random state continues it exactly."""
    return torch.Generator().manual_seed(stable_seed("loader", seed) % 2**63)


def _distributed_context(module: LightningDataModule) -> tuple[int, int]:
    """``(replicas, rank)`` of data parallelism under the attached trainer (FSDP/DDP/model-parallel), ``(1, 0)``."""
    trainer = module.trainer
    kwargs = trainer.distributed_sampler_kwargs if trainer is not None else None
    if not kwargs:
        return 1, 0
    return max(int(kwargs["num_replicas"]), 1), int(kwargs["rank"])


# ----------------------------------------------------------------------------------------------- splits


def _check_split(split: Sequence[float]) -> None:
    if len(split) != 3 or any(f < 0 for f in split) or not math.isclose(sum(split), 1.0, abs_tol=1e-6):
        raise ValueError(f"split must be three non-negative fractions (train, val, test) summing to 1, got {split}")


def split_documents(
    documents: Sequence[AnnotatedDocument], fractions: Sequence[float], seed: int
) -> dict[str, list[AnnotatedDocument]]:
    """Split by document into train/val/test, stratified by ``case_type``, reproducible from ``seed``.

    Within each case type documents are ordered by ``doc_id``, shuffled with ``seed`` and cut by ``fractions``
    (rounded, the test share taking the remainder), so every case type keeps its share in every split.
    """
    groups: dict[str, list[AnnotatedDocument]] = defaultdict(list)
    for doc in documents:
        groups[doc.case_type or ""].append(doc)
    result: dict[str, list[AnnotatedDocument]] = {name: [] for name in SPLITS}
    for case_type in sorted(groups):
        docs = sorted(groups[case_type], key=lambda doc: doc.doc_id)
        random.Random(stable_seed("split", seed, case_type)).shuffle(docs)
        n_train = round(fractions[0] * len(docs))
        n_val = min(round(fractions[1] * len(docs)), len(docs) - n_train)
        if fractions[2] == 0:
            n_val = len(docs) - n_train
        result["train"] += docs[:n_train]
        result["val"] += docs[n_train : n_train + n_val]
        result["test"] += docs[n_train + n_val :]
    return result


def read_corpus(dirs: Sequence[str | Path]) -> list[AnnotatedDocument]:
    """Every annotated judgment under ``dirs`` (see :func:`thunder.annotation.iter_corpus`); errors name the path."""
    documents: list[AnnotatedDocument] = []
    for directory in dirs:
        if not Path(directory).exists():
            raise FileNotFoundError(f"corpus directory {directory} does not exist")
        documents.extend(iter_corpus(directory))
    seen: dict[str, AnnotatedDocument] = {}
    for doc in documents:
        if doc.doc_id in seen and seen[doc.doc_id].text != doc.text:
            warnings.warn(
                f"two different documents share doc_id {doc.doc_id!r} ({seen[doc.doc_id].source} and {doc.source}):"
                " synthesis seeds depend on doc_id, so they get the same mention choices",
                stacklevel=2,
            )
        seen[doc.doc_id] = doc
    return documents


def _check_mention_options(holdout: float, random_share: float) -> tuple[float, float]:
    if not 0 <= holdout < 1:
        raise ValueError(f"mention_holdout must be in [0, 1), got {holdout}")
    if not 0 <= random_share <= 1:
        raise ValueError(f"random_mentions must be in [0, 1], got {random_share}")
    return float(holdout), float(random_share)


def _check_choice(name: str, value: str, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")


def _check_positive(**values: int) -> None:
    for name, value in values.items():
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")


def _check_inputs(tokenizer: str, **paths: str | Sequence[str] | None) -> None:
    """Missing inputs fail when the data module is built, before a Trainer creates any directory."""
    for name, value in paths.items():
        for path in [value] if isinstance(value, str) else value or ():
            if not Path(path).exists():
                raise FileNotFoundError(f"{name} not found: {path}")
    if not (Path(tokenizer) / THUNDER_CONFIG).is_file():
        raise FileNotFoundError(
            f"tokenizer not found: {tokenizer} is not a Thunder tokenizer directory (no {THUNDER_CONFIG};"
            " write one with `thunder tokenizer train`)"
        )


class _SynthesisMixin:
    """Taxonomy, mention bank and tokenizer shared by both data modules (loaded lazily, once)."""

    taxonomy_path: str | None
    alias_files: list[str] | None
    mention_dirs: list[str]
    tokenizer_path: str
    generators: dict[str, MentionSource] | None = None  # per-label generators replacing the taxonomy's sources
    mention_holdout: float = 0.0  # share of every mention list held back from training (by entity)
    random_mentions: float = 0.0  # share of training mentions replaced by random strings of their shape
    split_seed: int = 0

    def _load_taxonomy(self) -> Taxonomy:
        return Taxonomy.load(self.taxonomy_path, alias_files=self.alias_files or ())

    def _synthesizer(
        self, seed: int, replacement: str, part: str = "train", noise: bool = False,
        head_outside: frozenset[str] = frozenset(),
    ) -> Synthesizer:  # fmt: skip
        """A synthesizer over one part of the mention lists (``train`` or ``heldout``), with random-shape
        mentions (``noise``) for training and head nouns kept outside the spans of ``head_outside``."""
        banks = self.__dict__.setdefault("_mention_banks", {})
        key = (part, noise)
        if key not in banks:
            bank = MentionBank.from_dirs(
                self.taxonomy, self.mention_dirs, generators=self.generators, holdout=self.mention_holdout,
                part=part, holdout_seed=self.split_seed,
            )  # fmt: skip
            if noise and self.random_mentions > 0:
                bank = with_random_mentions(bank, self.random_mentions)
            banks[key] = bank
        return Synthesizer(self.taxonomy, banks[key], seed=seed, replacement=replacement, head_outside=head_outside)

    @property
    def tokenizer(self) -> ThunderTokenizer:
        """The tokenizer, loaded on first use."""
        if getattr(self, "_tokenizer", None) is None:
            if self.tokenizer_path == str(DEMO_TOKENIZER) and not DEMO_TOKENIZER.is_dir():
                raise FileNotFoundError(
                    f"no tokenizer given and no packaged demo tokenizer at {DEMO_TOKENIZER}: set `tokenizer` to a"
                    " directory written by `thunder tokenizer train`"
                )
            self._tokenizer = ThunderTokenizer.from_pretrained(self.tokenizer_path)
        return self._tokenizer


def with_random_mentions(bank: MentionBank, share: float) -> MentionBank:
    """``bank`` with ``share`` of the mentions of every label replaced by random strings of their shape
    (:class:`thunder.names.ShapeNoise`), except structured identifiers (their shape is their pattern)."""
    if not 0 <= share <= 1:
        raise ValueError(f"random_mentions must be in [0, 1], got {share}")
    structured = {f"generator:{name}" for name in CATALOGUE}
    labels = bank.taxonomy.labels if bank.taxonomy is not None else {}
    sources = {
        name: source if name in labels and labels[name].source in structured else ShapeNoise(source, share, name)
        for name, source in bank.sources.items()
    }
    return MentionBank(sources, bank.taxonomy, bank.missing)


# ----------------------------------------------------------------------------------------------- DeIdDataModule


class DeIdDataModule(_SynthesisMixin, LightningDataModule):
    """Token-classification data: annotated judgments synthesized afresh every epoch, windowed and labelled.

    Args:
        tokenizer: Directory of a Thunder tokenizer (``thunder tokenizer train``); None: the packaged demo tokenizer.
        data_dir: Root of annotated judgments (``*.md`` by case-type folder, or the Hugging Face layout), split by
            ``split``; None: the packaged demo corpus.
        mention_dirs: Mention-list directories; None: the packaged demo lists. For the shared corpus give
            ``[DIR/mentions, DIR/mentions-llm]``.
        taxonomy: Taxonomy file; None: the packaged default.
        alias_files: Extra raw-tag alias files (e.g. ``DIR/tag_aliases.json``) for the taxonomy.
        generators: Per-label mention generators replacing the taxonomy's source, ``{label: {class_path,
            init_args}}`` (a class with ``sample(rng, context) -> str``) or ``{label: name}`` of a built-in one.
        granularity: Entity types to predict: ``binary`` (identifier or not), ``category`` or ``label``.
        scheme: Tagging scheme, ``IO`` or ``BIO``.
        max_length: Tokens per window including ``[CLS]`` and ``[SEP]``.
        stride: Tokens shared by consecutive windows of a long document.
        batch_size: Documents per batch (a long document contributes all its windows).
        num_workers: DataLoader worker processes.
        seed: Seed of synthesis and of the training order.
        replacement: ``per_epoch`` re-samples every mention every epoch; ``single`` keeps the epoch-0 mentions.
        split: Train/val/test fractions of ``data_dir`` by document, stratified by case type.
        split_seed: Seed of the split (kept apart from ``seed`` so runs with different seeds share a test set), and
            of the mention holdout.
        mention_holdout: Share of every mention list held back from training, by entity (a stable hash of its
            text): training and validation draw only from the rest; the ``unseen`` test set only from the held-back
            share, with person names from a generator family training never uses (``PersonNames("unseen")``).
        test_mentions: Test sets: ``seen`` (mentions as in training), ``unseen`` or ``both`` (two test dataloaders,
            logged as ``test/seen/...`` and ``test/unseen/...``); default ``both`` with a holdout, else ``seen``.
        random_mentions: Share of training mentions replaced by random strings of their shape (structured
            identifiers excepted), so that the context is the only cue.
        head_nouns: ``inside``: spans cover whole mentions; ``corpus``: a generic head noun ending a mention
            (``래미안아파트`` under 아파트, ``강남역`` under 지하철역) stays outside its span for the quasi labels whose
            training documents mostly write it after the placeholder (``<<<아파트>>>E<<</아파트>>>아파트``), the
            corpus's own convention (README: it did not train a better model).
        train_dirs: Explicit training directories (replace the train share of ``data_dir``).
        val_dirs: Explicit validation directories (replace the val share of ``data_dir``).
        test_dirs: Explicit test directories: any directory of annotated judgments can be a test set.
        group_by_length: Batch documents of similar length together (less padding).
        pad_to_multiple_of: Pad batches to a multiple of this many tokens (e.g. 8 for tensor cores).
    """

    def __init__(
        self,
        tokenizer: str | None = None,
        data_dir: str | None = None,
        mention_dirs: list[str] | None = None,
        taxonomy: str | None = None,
        alias_files: list[str] | None = None,
        generators: dict[str, Any] | None = None,
        granularity: Literal["binary", "category", "label"] = "label",
        scheme: Literal["IO", "BIO"] = "IO",
        max_length: int = 512,
        stride: int = 128,
        batch_size: int = 8,
        num_workers: int = 0,
        seed: int = 0,
        replacement: Literal["per_epoch", "single"] = "per_epoch",
        split: tuple[float, float, float] = (0.8, 0.1, 0.1),
        split_seed: int = 0,
        mention_holdout: float = 0.0,
        test_mentions: Literal["seen", "unseen", "both"] | None = None,
        random_mentions: float = 0.0,
        head_nouns: Literal["inside", "corpus"] = "inside",
        train_dirs: list[str] | None = None,
        val_dirs: list[str] | None = None,
        test_dirs: list[str] | None = None,
        group_by_length: bool = False,
        pad_to_multiple_of: int | None = None,
    ) -> None:
        super().__init__()
        self.mention_holdout, self.random_mentions = _check_mention_options(mention_holdout, random_mentions)
        test_mentions = test_mentions or ("both" if mention_holdout > 0 else "seen")
        _check_choice("test_mentions", test_mentions, TEST_MENTIONS)
        if test_mentions != "seen" and mention_holdout == 0:
            raise ValueError(f"test_mentions {test_mentions!r} needs mention_holdout > 0 (e.g. 0.1)")
        # names of the test sets, in test dataloader order ("": one test set, logged as test/...)
        self.test_sets = {"seen": ("",), "unseen": ("unseen",), "both": ("seen", "unseen")}[test_mentions]
        if test_mentions == "seen" and mention_holdout > 0:
            self.test_sets = ("seen",)
        _check_choice("granularity", granularity, GRANULARITIES)
        _check_choice("scheme", scheme, SCHEMES)
        _check_choice("replacement", replacement, REPLACEMENTS)
        _check_choice("head_nouns", head_nouns, HEAD_NOUNS)
        self.head_nouns = head_nouns
        self._head_outside: frozenset[str] | None = None
        check_windows(max_length, stride)
        _check_positive(batch_size=batch_size, pad_to_multiple_of=pad_to_multiple_of or 1)
        if num_workers < 0:
            raise ValueError(f"num_workers must be >= 0, got {num_workers}")
        _check_split(split)
        self.tokenizer_path = str(tokenizer) if tokenizer is not None else str(DEMO_TOKENIZER)
        self.data_dir = str(data_dir) if data_dir is not None else str(DEMO_CORPUS)
        self.mention_dirs = [str(d) for d in mention_dirs] if mention_dirs is not None else [str(DEMO_MENTIONS)]
        self.taxonomy_path = taxonomy
        self.alias_files = alias_files
        self.max_length, self.stride = max_length, stride
        self.batch_size, self.num_workers = batch_size, num_workers
        self.seed, self.replacement = seed, replacement
        self.split, self.split_seed = tuple(split), split_seed
        self.explicit_dirs = {"train": train_dirs, "val": val_dirs, "test": test_dirs}
        self.group_by_length = group_by_length
        self.pad_to_multiple_of = pad_to_multiple_of
        needs_data_dir = any(dirs is None for dirs in self.explicit_dirs.values())
        _check_inputs(
            self.tokenizer_path, data_dir=self.data_dir if needs_data_dir else None, mention_dirs=self.mention_dirs,
            train_dirs=train_dirs, val_dirs=val_dirs, test_dirs=test_dirs,
        )
        self.taxonomy = self._load_taxonomy()
        self.generators = load_generators(generators or {}, self.taxonomy)
        self.label_set = LabelSet(self.taxonomy, granularity=granularity, scheme=scheme)
        self.datasets: dict[str, TokenClassificationDataset] = {}

    # -- data ---------------------------------------------------------------------------------------------------

    def documents(self) -> dict[str, list[AnnotatedDocument]]:
        """The documents of every split: explicit ``*_dirs`` where given, else the split share of ``data_dir``."""
        result: dict[str, list[AnnotatedDocument]] = {}
        shares: dict[str, list[AnnotatedDocument]] | None = None
        for name in SPLITS:
            dirs = self.explicit_dirs[name]
            if dirs is not None:
                result[name] = read_corpus(dirs)
                continue
            if shares is None:
                shares = split_documents(read_corpus([self.data_dir]), self.split, self.split_seed)
            result[name] = shares[name]
        return result

    def head_outside(self, train_documents: Sequence[AnnotatedDocument] | None = None) -> frozenset[str]:
        """Labels whose head nouns stay outside spans (``head_nouns``), read once from the training documents."""
        if self.head_nouns == "inside":
            return frozenset()
        if self._head_outside is None:
            documents = self.documents()["train"] if train_documents is None else train_documents
            self._head_outside = head_outside_labels(documents, self.taxonomy)
        return self._head_outside

    def synthesizer(self, split: str) -> Synthesizer:
        """The synthesizer of a split: ``seed``/``replacement`` for training, fixed mentions for evaluation."""
        _check_choice("split", split, SPLITS)
        if split == "train":
            return self._synthesizer(self.seed, self.replacement, noise=True, head_outside=self.head_outside())
        return self._synthesizer(stable_seed("eval", self.seed) % 2**31, "single", head_outside=self.head_outside())

    def unseen_synthesizer(self) -> Synthesizer:
        """The synthesizer of the ``unseen`` test set: the held-back mentions and the unseen name family."""
        return self._synthesizer(
            stable_seed("eval", self.seed) % 2**31, "single", part="heldout", head_outside=self.head_outside()
        )

    def setup(self, stage: str | None = None) -> None:
        """Read the corpus and build the datasets (once)."""
        if self.datasets:
            return
        documents = self.documents()
        self.head_outside(documents["train"])
        for name in SPLITS:
            training = name == "train"
            self.datasets[name] = TokenClassificationDataset(
                documents[name],
                self.synthesizer(name),
                self.tokenizer,
                self.label_set,
                self.max_length,
                self.stride,
                score_once=not training,
                epoch=None if training else 0,
            )
        if "unseen" in self.test_sets:
            self.datasets["test_unseen"] = TokenClassificationDataset(
                documents["test"], self.unseen_synthesizer(), self.tokenizer, self.label_set, self.max_length,
                self.stride, score_once=True, epoch=0,
            )  # fmt: skip

    def _collator(self) -> TokenCollator:
        return TokenCollator(self.tokenizer.pad_token_id, self.pad_to_multiple_of)

    def train_dataloader(self) -> ResumableDataLoader:
        dataset = self.datasets["train"]
        world_size, rank = _distributed_context(self)
        sampler = EpochSampler(
            dataset,
            num_replicas=world_size,
            rank=rank,
            seed=self.seed,
            lengths=dataset.lengths() if self.group_by_length else None,
            batch_size=self.batch_size,
        )
        return ResumableDataLoader(
            dataset,
            batch_size=self.batch_size,
            sampler=sampler,
            num_workers=self.num_workers,
            collate_fn=self._collator(),
            generator=loader_generator(self.seed),
        )

    def _eval_dataloader(self, name: str) -> DataLoader | list:
        dataset = self.datasets[name]
        if len(dataset) == 0:
            return []
        return DataLoader(
            dataset, batch_size=self.batch_size, num_workers=self.num_workers, collate_fn=self._collator(),
            generator=loader_generator(self.seed),
        )

    def val_dataloader(self) -> DataLoader | list:
        return self._eval_dataloader("val")

    def test_dataloader(self) -> DataLoader | list:
        """One loader per test set, in :attr:`test_sets` order (a single one when there is one set)."""
        loaders = [self._eval_dataloader("test_unseen" if name == "unseen" else "test") for name in self.test_sets]
        if any(isinstance(loader, list) for loader in loaders):
            return []
        return loaders[0] if len(loaders) == 1 else loaders

    # -- checkpoints --------------------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """What a resumed run must agree on: synthesis seed and strategy, split and label set."""
        return {
            "seed": self.seed,
            "replacement": self.replacement,
            "split": list(self.split),
            "split_seed": self.split_seed,
            "mention_holdout": self.mention_holdout,
            "random_mentions": self.random_mentions,
            "label_set": self.label_set.to_dict(),
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Check a checkpoint's data state: a different label set is an error, other differences a warning."""
        if "label_set" in state_dict:
            self.label_set.check_compatible(state_dict["label_set"])
        current = self.state_dict()
        keys = ("seed", "replacement", "split", "split_seed", "mention_holdout", "random_mentions")
        changed = [key for key in keys if key in state_dict and state_dict[key] != current[key]]
        if changed:
            warnings.warn(
                "resuming with different data settings than the checkpoint ("
                + ", ".join(f"{key}: {state_dict[key]!r} -> {current[key]!r}" for key in changed)
                + "): the run will not see the samples the interrupted run would have seen",
                stacklevel=2,
            )


# ----------------------------------------------------------------------------------------------- MLM


def morpheme_groups(text: str, offsets: Sequence[tuple[int, int]]) -> list[int]:
    """Index of the Mecab-ko morpheme (tokenizer piece) each token belongs to, for whole-morpheme masking."""
    piece_starts = [start for start, _ in morpheme_pieces(text)]
    return [max(bisect_right(piece_starts, start) - 1, 0) for start, _ in offsets]


def mask_tokens(
    ids: Sequence[int],
    rng: random.Random,
    mask_token_id: int,
    vocab_size: int,
    special_ids: Sequence[int],
    probability: float = 0.15,
    groups: Sequence[int] | None = None,
) -> Example:
    """BERT masking: each token (or each group, e.g. morpheme, as a whole) is chosen with ``probability``.

    A chosen token becomes ``[MASK]`` (80%), a random non-special token (10%) or stays (10%); ``labels`` holds the
    original id at chosen positions and -100 elsewhere.
    """
    input_ids, labels = list(ids), [IGNORE_INDEX] * len(ids)
    special = set(special_ids)
    chosen_groups: dict[int, bool] = {}
    for position, token in enumerate(ids):
        if groups is None:
            chosen = rng.random() < probability
        else:
            group = groups[position]
            if group not in chosen_groups:
                chosen_groups[group] = rng.random() < probability
            chosen = chosen_groups[group]
        if not chosen or token in special:
            continue
        labels[position] = token
        roll = rng.random()
        if roll < 0.8:
            input_ids[position] = mask_token_id
        elif roll < 0.9:
            replacement = rng.randrange(vocab_size - len(special))
            for special_id in sorted(special):  # skip over special ids
                if replacement >= special_id:
                    replacement += 1
            input_ids[position] = replacement
    return {"input_ids": input_ids, "labels": labels}


class MLMDataset(_EpochDataset):
    """Masked documents: annotated judgments (synthesized per epoch) and plain-text chunks; item = one document."""

    def __init__(
        self,
        items: Sequence[AnnotatedDocument | str],
        synthesizer: Synthesizer | None,
        tokenizer: ThunderTokenizer,
        seed: int,
        probability: float = 0.15,
        whole_morpheme: bool = False,
        epoch: int | None = None,
    ) -> None:
        super().__init__(epoch)
        self.items = list(items)
        self.synthesizer = synthesizer
        self.tokenizer = tokenizer
        self.seed = seed
        self.probability = probability
        self.whole_morpheme = whole_morpheme
        self.special_ids = sorted(
            {
                tokenizer.pad_token_id,
                tokenizer.cls_token_id,
                tokenizer.sep_token_id,
                tokenizer.unk_token_id,
                tokenizer.mask_token_id,
            }
        )

    def __len__(self) -> int:
        return len(self.items)

    def text(self, index: int, epoch: int) -> str:
        """Text of item ``index`` at ``epoch``: synthesized for a judgment, as is for plain text."""
        item = self.items[index]
        if isinstance(item, str):
            return item
        assert self.synthesizer is not None
        return self.synthesizer(item, epoch=epoch).text

    def __getitem__(self, key: int | tuple[int, int]) -> Example:
        epoch, index = self.resolve(key)
        text = self.text(index, epoch)
        encoding = self.tokenizer.encode(text)
        groups = morpheme_groups(text, encoding.offsets) if self.whole_morpheme else None
        rng = random.Random(stable_seed("mask", self.seed, epoch, index))
        return mask_tokens(
            encoding.ids,
            rng,
            self.tokenizer.mask_token_id,
            self.tokenizer.vocab_size,
            self.special_ids,
            self.probability,
            groups,
        )


@dataclass
class PackingCollator:
    """Packs the documents of a batch into ``[CLS]``-led blocks of at most ``max_length`` tokens.

    Documents are concatenated in order, each followed by ``[SEP]``, and cut every ``max_length - 1`` tokens; the
    last block is right-padded. No token is dropped, so the number of rows varies with the batch's text.
    """

    max_length: int
    cls_token_id: int
    sep_token_id: int
    pad_token_id: int

    def __call__(self, items: Sequence[Example]) -> dict[str, torch.Tensor]:
        stream: list[int] = []
        stream_labels: list[int] = []
        for item in items:
            stream += [*item["input_ids"], self.sep_token_id]
            stream_labels += [*item["labels"], IGNORE_INDEX]
        size = self.max_length - 1
        blocks = [
            {
                "input_ids": [self.cls_token_id, *stream[i : i + size]],
                "labels": [IGNORE_INDEX, *stream_labels[i : i + size]],
            }
            for i in range(0, len(stream), size)
        ]
        return TokenCollator(self.pad_token_id)(blocks)


def read_text_chunks(paths: Sequence[str | Path], max_chars: int) -> list[str]:
    """Plain-text files (or ``*.txt`` under directories) cut at line ends into chunks of about ``max_chars``.

    Lines longer than ``max_chars`` are cut at ``max_chars``; nothing is dropped except empty chunks.
    """
    files: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            files += sorted(path.rglob("*.txt"))
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"text corpus path {path} does not exist")
    chunks: list[str] = []
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(f"{file}: not UTF-8 (byte {error.start})") from error
        current = ""
        for line in text.splitlines(keepends=True):
            while len(line) > max_chars:
                if current:
                    chunks.append(current)
                    current = ""
                chunks.append(line[:max_chars])
                line = line[max_chars:]
            if len(current) + len(line) > max_chars and current:
                chunks.append(current)
                current = ""
            current += line
        if current:
            chunks.append(current)
    return [chunk for chunk in chunks if chunk.strip()]


class MLMDataModule(_SynthesisMixin, LightningDataModule):
    """Masked-LM pretraining data: synthesized judgments and/or plain text, masked and packed to ``max_length``.

    Args:
        tokenizer: Directory of a Thunder tokenizer; None: the packaged demo tokenizer.
        data_dir: Annotated judgments to synthesize (None: the packaged demo corpus).
        use_judgments: Include the synthesized judgments of ``data_dir`` (False: plain text only).
        text_paths: Plain-text corpus: ``.txt`` files or directories searched recursively for them.
        mention_dirs: Mention-list directories; None: the packaged demo lists.
        taxonomy: Taxonomy file; None: the packaged default.
        alias_files: Extra raw-tag alias files for the taxonomy.
        max_length: Tokens per packed block including ``[CLS]``.
        mlm_probability: Share of tokens (or morphemes) chosen for prediction.
        whole_morpheme: Mask all BPE pieces of a Mecab-ko morpheme together.
        batch_size: Documents per batch (packed into as many blocks as they need).
        num_workers: DataLoader worker processes.
        seed: Seed of synthesis, masking and order.
        replacement: ``per_epoch`` or ``single`` mention sampling for the judgments.
        val_fraction: Share of documents held out for validation (chosen by a stable hash).
        judgments: ``train``: only the train share of ``data_dir`` under ``split``/``split_seed`` (the split
            :class:`DeIdDataModule` makes with the same values), so pretraining never reads held-out judgments;
            ``all``: every judgment.
        split: Train/val/test fractions used with ``judgments: train``.
        split_seed: Seed of that split (and of the mention holdout).
        mention_holdout: Share of every mention list held back (as in :class:`DeIdDataModule`): pretraining draws
            only from the rest, so the unseen test mentions stay unseen.
        prepared_dir: Output of ``thunder data prepare`` (made with ``tokenizer``): train from its token shards
            instead (``data_dir``, ``text_paths`` and the judgments are not read). Batches are then ``batch_size``
            full blocks of ``max_length`` tokens, shuffled per epoch, distinct per rank and worker, resumable
            mid-epoch (LitData ``StreamingDataLoader``); any ``max_length`` reuses the same shards (phase 2).
    """

    def __init__(
        self,
        tokenizer: str | None = None,
        data_dir: str | None = None,
        use_judgments: bool = True,
        text_paths: list[str] | None = None,
        mention_dirs: list[str] | None = None,
        taxonomy: str | None = None,
        alias_files: list[str] | None = None,
        max_length: int = 512,
        mlm_probability: float = 0.15,
        whole_morpheme: bool = False,
        batch_size: int = 8,
        num_workers: int = 0,
        seed: int = 0,
        replacement: Literal["per_epoch", "single"] = "per_epoch",
        val_fraction: float = 0.01,
        judgments: Literal["train", "all"] = "train",
        split: tuple[float, float, float] = (0.8, 0.1, 0.1),
        split_seed: int = 0,
        prepared_dir: str | None = None,
        mention_holdout: float = 0.0,
    ) -> None:
        super().__init__()
        self.mention_holdout, _ = _check_mention_options(mention_holdout, 0.0)
        _check_choice("replacement", replacement, REPLACEMENTS)
        _check_choice("judgments", judgments, ("train", "all"))
        _check_split(split)
        _check_positive(batch_size=batch_size)
        if num_workers < 0:
            raise ValueError(f"num_workers must be >= 0, got {num_workers}")
        if max_length < 3:
            raise ValueError(f"max_length must be at least 3, got {max_length}")
        if not 0 < mlm_probability < 1:
            raise ValueError(f"mlm_probability must be in (0, 1), got {mlm_probability}")
        if not 0 <= val_fraction < 1:
            raise ValueError(f"val_fraction must be in [0, 1), got {val_fraction}")
        if not use_judgments and not text_paths and not prepared_dir:
            raise ValueError("nothing to train on: use_judgments is False and no text_paths are given")
        self.tokenizer_path = str(tokenizer) if tokenizer is not None else str(DEMO_TOKENIZER)
        self.data_dir = str(data_dir) if data_dir is not None else str(DEMO_CORPUS)
        self.use_judgments = use_judgments
        self.text_paths = list(text_paths or [])
        self.mention_dirs = [str(d) for d in mention_dirs] if mention_dirs is not None else [str(DEMO_MENTIONS)]
        self.taxonomy_path = taxonomy
        self.alias_files = alias_files
        self.max_length = max_length
        self.mlm_probability = mlm_probability
        self.whole_morpheme = whole_morpheme
        self.batch_size, self.num_workers = batch_size, num_workers
        self.seed, self.replacement = seed, replacement
        self.val_fraction = val_fraction
        self.judgments, self.split, self.split_seed = judgments, tuple(split), split_seed
        self.prepared_dir = prepared_dir
        judgments_read = use_judgments and prepared_dir is None
        _check_inputs(
            self.tokenizer_path, prepared_dir=prepared_dir, data_dir=self.data_dir if judgments_read else None,
            mention_dirs=self.mention_dirs if judgments_read else None,
            text_paths=self.text_paths if prepared_dir is None else None,
        )
        self.datasets: dict[str, Any] = {}

    def setup(self, stage: str | None = None) -> None:
        """Read judgments and text, hold out ``val_fraction`` and build the datasets (once)."""
        if self.datasets:
            return
        if self.prepared_dir is not None:
            self._setup_prepared()
            return
        items: list[AnnotatedDocument | str] = []
        synthesizer = None
        if self.use_judgments:
            self.taxonomy = self._load_taxonomy()
            documents = read_corpus([self.data_dir])
            if self.judgments == "train":
                documents = split_documents(documents, self.split, self.split_seed)["train"]
            items += documents
            synthesizer = self._synthesizer(self.seed, self.replacement)
        items += read_text_chunks(self.text_paths, max_chars=4 * self.max_length)
        parts: dict[str, list[AnnotatedDocument | str]] = {"train": [], "val": []}
        for item in items:
            key = item if isinstance(item, str) else item.doc_id
            held_out = stable_seed("mlm-val", key) / 2**64 < self.val_fraction
            parts["val" if held_out else "train"].append(item)
        for name, epoch in (("train", None), ("val", 0)):
            self.datasets[name] = MLMDataset(
                parts[name], synthesizer, self.tokenizer, self.seed, self.mlm_probability, self.whole_morpheme, epoch
            )

    def _collator(self) -> PackingCollator:
        tok = self.tokenizer
        return PackingCollator(self.max_length, tok.cls_token_id, tok.sep_token_id, tok.pad_token_id)

    def _setup_prepared(self) -> None:
        """Datasets over the prepared shards' ``train`` and (when present) ``val`` directories."""
        from thunder.shards import MaskedBlocks, read_manifest

        manifest = read_manifest(self.prepared_dir, self.tokenizer_path)
        for name, shuffle in (("train", True), ("val", False)):
            if manifest["tokens"].get(name):
                self.datasets[name] = MaskedBlocks(
                    Path(self.prepared_dir) / name, self.max_length, self.tokenizer, self.seed,
                    self.mlm_probability, self.whole_morpheme, shuffle, masking_epoch=None if shuffle else 0,
                )  # fmt: skip

    def _prepared_loader(self, name: str) -> Any:
        from litdata import StreamingDataLoader

        from thunder.shards import collate_blocks

        if name not in self.datasets:
            return []
        return StreamingDataLoader(
            self.datasets[name], batch_size=self.batch_size, num_workers=self.num_workers, collate_fn=collate_blocks
        )

    def train_dataloader(self) -> Any:
        if self.prepared_dir is not None:
            return self._prepared_loader("train")
        world_size, rank = _distributed_context(self)
        dataset = self.datasets["train"]
        sampler = EpochSampler(dataset, num_replicas=world_size, rank=rank, seed=self.seed, batch_size=self.batch_size)
        return ResumableDataLoader(
            dataset,
            batch_size=self.batch_size,
            sampler=sampler,
            num_workers=self.num_workers,
            collate_fn=self._collator(),
            generator=loader_generator(self.seed),
        )

    def val_dataloader(self) -> DataLoader | list:
        if self.prepared_dir is not None:
            return self._prepared_loader("val")
        dataset = self.datasets["val"]
        if len(dataset) == 0:
            return []
        return DataLoader(
            dataset, batch_size=self.batch_size, num_workers=self.num_workers, collate_fn=self._collator(),
            generator=loader_generator(self.seed),
        )


# ----------------------------------------------------------------------------------------------- preview
