"""Masked-LM pretraining data: synthesized judgments and/or plain text, masked and packed into blocks.

:class:`MLMDataModule` reads synthesized judgments and/or plain-text files, masks 15% of tokens (80% ``[MASK]``, 10%
random, 10% unchanged), optionally whole Mecab-ko morphemes at once, and packs the documents of a batch into
``max_length`` blocks; or reads the token shards of ``thunder data prepare`` (:mod:`thunder.data.shards`).
"""

from __future__ import annotations

import random
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Sequence

import torch
from lightning.pytorch.utilities import rank_zero_info
from torch.utils.data import DataLoader

from thunder.data.base import RecipeDataModule
from thunder.data.labels import IGNORE_INDEX, Example, TokenCollator
from thunder.data.loaders import EpochDataset, epoch_slots, evaluation_loader, pool_turn, training_loader
from thunder.data.recipe import Filler, InputPath, check_choice, check_inputs, path_text
from thunder.data.splits import read_corpus
from thunder.documents.annotation import AnnotatedDocument
from thunder.documents.corpus import iter_documents
from thunder.language.morphemes import morpheme_pieces
from thunder.language.tokenizer import ThunderTokenizer
from thunder.seeds import stable_seed, stable_share
from thunder.synthesis.composition import ComposingSynthesizer
from thunder.synthesis.synthesizer import Synthesizer


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


class MLMDataset(EpochDataset):
    """Masked documents: annotated judgments (synthesized per epoch) and plain-text chunks; item = one document.

    ``texts`` (training only) take ``text_slots`` items after ``items`` every epoch, in turn across epochs
    (:func:`~thunder.data.loaders.pool_turn`), so an epoch reads a fixed number of them whatever their count.
    """

    def __init__(
        self,
        items: Sequence[AnnotatedDocument | str],
        synthesizer: Synthesizer | ComposingSynthesizer | None,
        tokenizer: ThunderTokenizer,
        seed: int,
        probability: float = 0.15,
        whole_morpheme: bool = False,
        epoch: int | None = None,
        texts: Sequence[str] = (),
        text_slots: int = 0,
    ) -> None:
        super().__init__(items, synthesizer, tokenizer, epoch)
        if text_slots and not texts:
            raise ValueError("text_slots without texts")
        self.texts, self.text_slots = list(texts), text_slots
        self.seed = seed
        self.probability, self.whole_morpheme = probability, whole_morpheme
        special = (tokenizer.pad_token_id, tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.unk_token_id,
                   tokenizer.mask_token_id)  # fmt: skip
        self.special_ids = sorted(set(special))

    def __len__(self) -> int:
        return len(self.items) + self.text_slots

    def text(self, index: int, epoch: int) -> str:
        """Text of item ``index`` at ``epoch``: synthesized for a judgment, as is for plain text."""
        if index >= len(self.items):
            return self.texts[pool_turn(epoch, self.text_slots, index - len(self.items), len(self.texts))[0]]
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


class MLMDataModule(RecipeDataModule):
    """Masked-LM pretraining data: synthesized judgments and/or plain text, masked and packed to ``max_length``.

    Args:
        use_judgments: Include the synthesized judgments of ``data_dir`` (False: plain text only).
        text_paths: A plain-text corpus (:mod:`thunder.documents.corpus`): ``.txt`` paragraphs, ``.jsonl``
            records' ``text`` (the held-out share of identified records left out), ``.md`` judgments, xz-compressed
            or not; files or directories searched recursively.
        mlm_probability: Share of tokens (or morphemes) chosen for prediction.
        whole_morpheme: Mask all BPE pieces of a Mecab-ko morpheme together.
        text_share: Share of every training epoch's documents that are chunks of ``text_paths``, taken in turn
            beside each train judgment once (None: every chunk and every judgment once an epoch; the chunks then
            outnumber the judgments as the corpora's sizes do).
        val_fraction: Share of documents held out for validation (chosen by a stable hash).
        judgments: ``train``: only the train share of ``data_dir`` under ``split``/``split_seed`` (the split
            :class:`~thunder.data.token_classification.DeIdDataModule` makes with the same values), so pretraining
            never reads held-out judgments; ``all``: every judgment.
        prepared_dir: Output of ``thunder data prepare`` (made with ``tokenizer``): train from its token shards
            instead (``data_dir``, ``text_paths`` and the judgments are not read). Batches are then ``batch_size``
            full blocks of ``max_length`` tokens, shuffled per epoch, distinct per rank and worker, resumable
            mid-epoch (LitData ``StreamingDataLoader``); any ``max_length`` reuses the same shards (phase 2).
        **kwargs: the options every data module shares (:class:`~thunder.data.base.RecipeDataModule`); ``batch_size``
            counts documents packed into as many blocks as they need, ``mention_holdout`` keeps the unseen test
            mentions out of pretraining, ``compose`` lets the encoder read headers, evidence, statutes and signatures.
    """

    def __init__(
        self,
        use_judgments: bool = True,
        text_paths: list[InputPath] | None = None,
        mlm_probability: float = 0.15,
        whole_morpheme: bool = False,
        text_share: float | None = None,
        val_fraction: float = 0.01,
        judgments: Literal["train", "all"] = "train",
        prepared_dir: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        check_choice("judgments", judgments, ("train", "all"))
        if self.max_length < 3:
            raise ValueError(f"max_length must be at least 3, got {self.max_length}")
        if not 0 < mlm_probability < 1:
            raise ValueError(f"mlm_probability must be in (0, 1), got {mlm_probability}")
        if not 0 <= val_fraction < 1:
            raise ValueError(f"val_fraction must be in [0, 1), got {val_fraction}")
        if not use_judgments and not text_paths and not prepared_dir:
            raise ValueError("nothing to train on: use_judgments is False and no text_paths are given")
        if text_share is not None and not (0 < text_share < 1 and use_judgments and text_paths and not prepared_dir):
            raise ValueError(f"text_share {text_share} mixes judgments and text_paths: it must be in (0, 1), with "
                             f"use_judgments, text_paths and no prepared_dir")  # fmt: skip
        if prepared_dir is not None and self.recipe.compose > 0:
            raise ValueError(f"compose {self.recipe.compose} composes the judgments of data_dir every epoch; the shards of "
                             f"prepared_dir are trained as they were prepared: set compose to 0 with prepared_dir")  # fmt: skip
        self.use_judgments = use_judgments
        self.text_paths = [path_text(path) for path in text_paths or ()]
        self.mlm_probability = mlm_probability
        self.whole_morpheme = whole_morpheme
        self.text_share = text_share
        self.val_fraction = val_fraction
        self.judgments = judgments
        self.prepared_dir = prepared_dir
        judgments_read = use_judgments and prepared_dir is None
        check_inputs(
            self.tokenizer_path, prepared_dir=prepared_dir, data_dir=self.recipe.corpus if judgments_read else None,
            mention_dirs=self.recipe.mention_lists if judgments_read else None,
            text_paths=self.text_paths if prepared_dir is None else None,
        )  # fmt: skip
        self.datasets: dict[str, Any] = {}

    def setup(self, stage: str | None = None) -> None:
        """Read judgments and text, hold out ``val_fraction`` and build the datasets (once)."""
        if self.datasets:
            return
        if self.prepared_dir is not None:
            self._setup_prepared()
            return
        items: list[AnnotatedDocument | str] = []
        synthesizer: Synthesizer | ComposingSynthesizer | None = None
        if self.use_judgments:
            filler = Filler(self.recipe, self.recipe.load_taxonomy())
            train_only = self.judgments == "train"
            items += filler.documents()["train"] if train_only else read_corpus([self.recipe.corpus])
            synthesizer = filler.training_synthesizer()
        items += list(iter_documents(self.text_paths, max_chars=4 * self.max_length))
        parts: dict[str, list[AnnotatedDocument | str]] = {"train": [], "val": []}
        for item in items:
            key = item if isinstance(item, str) else item.doc_id
            held_out = stable_share("mlm-val", key) < self.val_fraction
            parts["val" if held_out else "train"].append(item)
        texts: list[str] = []
        text_slots = 0
        if self.text_share is not None:
            texts = [item for item in parts["train"] if isinstance(item, str)]
            parts["train"] = [item for item in parts["train"] if not isinstance(item, str)]
            _, (text_slots,) = epoch_slots(len(parts["train"]), [(len(texts), self.text_share)])
            rank_zero_info(f"training epoch: {len(parts['train']):,} judgments + {text_slots:,} of {len(texts):,} "
                           f"text chunks")  # fmt: skip
        for name, epoch in (("train", None), ("val", 0)):
            training = name == "train"
            self.datasets[name] = MLMDataset(
                parts[name], synthesizer, self.tokenizer, self.recipe.seed, self.mlm_probability, self.whole_morpheme,
                epoch, texts if training else (), text_slots if training else 0,
            )  # fmt: skip

    def _collator(self) -> PackingCollator:
        tok = self.tokenizer
        return PackingCollator(self.max_length, tok.cls_token_id, tok.sep_token_id, tok.pad_token_id)

    def _setup_prepared(self) -> None:
        """Datasets over the prepared shards' ``train`` and (when present) ``val`` directories."""
        from thunder.data.shards import MaskedBlocks, read_manifest

        manifest = read_manifest(self.prepared_dir, self.tokenizer_path)
        for name, shuffle in (("train", True), ("val", False)):
            if manifest["tokens"].get(name):
                self.datasets[name] = MaskedBlocks(
                    Path(self.prepared_dir) / name, self.max_length, self.tokenizer, self.recipe.seed,
                    self.mlm_probability, self.whole_morpheme, shuffle, masking_epoch=None if shuffle else 0,
                )  # fmt: skip

    def _prepared_loader(self, name: str) -> Any:
        from litdata import StreamingDataLoader

        from thunder.data.shards import collate_blocks

        if name not in self.datasets:
            return []
        return StreamingDataLoader(
            self.datasets[name], batch_size=self.batch_size, num_workers=self.num_workers, collate_fn=collate_blocks
        )

    def train_dataloader(self) -> Any:
        if self.prepared_dir is not None:
            return self._prepared_loader("train")
        return training_loader(self, self.datasets["train"], self.batch_size, self.num_workers, self._collator(),
                               self.recipe.seed)  # fmt: skip

    def val_dataloader(self) -> DataLoader | list:
        if self.prepared_dir is not None:
            return self._prepared_loader("val")
        return evaluation_loader(self.datasets["val"], self.batch_size, self.num_workers, self._collator(),
                                 self.recipe.seed)  # fmt: skip
