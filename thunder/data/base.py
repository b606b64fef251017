"""The options every Thunder data module shares, declared once: the tokenizer, the recipe's corpus, split, mention lists
and seeds, and the sizes of windows and batches.

:class:`RecipeDataModule` is the base of :class:`~thunder.data.token_classification.DeIdDataModule` and
:class:`~thunder.data.mlm.MLMDataModule`; each adds its own options and hands the shared ones on with ``**kwargs``
(LightningCLI shows and checks them as the subclass's own). A new recipe option is added here and in
:class:`~thunder.data.recipe.Recipe`, nowhere else.
"""

from __future__ import annotations

from functools import cached_property
from typing import Literal

from lightning.pytorch import LightningDataModule

from thunder.data.recipe import DEMO_TOKENIZER, InputPath, Recipe, check_positive
from thunder.language.release_tokenizer import load_tokenizer
from thunder.language.tokenizer import ThunderTokenizer


class RecipeDataModule(LightningDataModule):
    """A data module whose documents come from a :class:`~thunder.data.recipe.Recipe`.

    Inputs (``data_dir``, ``mention_dirs``, ``taxonomy``, ``alias_files``, and the subclasses' corpus, reviewed,
    published and base-model paths) are :data:`~thunder.data.recipe.InputPath`: a relative path written in a config
    file is read from the config's folder, on the command line from the current directory. The tokenizer, like the
    checkpoints and logs a run writes, is relative to the current directory.

    Args:
        tokenizer: Directory of a Thunder tokenizer (``thunder tokenizer train``), of an imported release's, or of a
            pretrained model (its own tokenizer behind the Mecab step); None: the model's when it brings one
            (``tokenizer: pretrained``, handed over by ``thunder fit``), else the packaged demo tokenizer.
        data_dir: Root of annotated judgments (``*.md`` by case-type folder, or the Hugging Face layout), split by
            ``split``; None: the packaged demo corpus.
        mention_dirs: Mention-list directories; None: the packaged demo lists. For the shared corpus give
            ``[DIR/mentions, DIR/mentions-llm]``.
        taxonomy: Taxonomy file; None: the packaged default.
        alias_files: Extra raw-tag alias files (e.g. ``DIR/tag_aliases.json``) for the taxonomy.
        max_length: Tokens per window (or packed block) including the special tokens.
        batch_size: Documents per batch (a long document contributes all its windows).
        num_workers: DataLoader worker processes.
        seed: Seed of synthesis (every training epoch, and the one filling of validation and test), of masking and
            of the training order.
        replacement: ``per_epoch`` re-samples every mention every epoch; ``single`` keeps the epoch-0 mentions.
        split: Train/val/test fractions of ``data_dir`` by document, stratified by case type.
        split_seed: Seed of the split (kept apart from ``seed`` so runs with different seeds share a test set), and
            of the mention holdout.
        mention_holdout: Share of every mention list held back from training, by entity (a stable hash of its
            text): training draws only from the rest, so the ``unseen`` test mentions stay unseen.
        compose: Share of the training judgments composed into whole judgments every epoch (header, 주문, evidence,
            statutes, sentencing and signatures around the facts paragraph, :mod:`thunder.synthesis.composition`).
    """

    def __init__(
        self,
        tokenizer: str | None = None,
        data_dir: InputPath | None = None,
        mention_dirs: list[InputPath] | None = None,
        taxonomy: InputPath | None = None,
        alias_files: list[InputPath] | None = None,
        max_length: int = 512,
        batch_size: int = 8,
        num_workers: int = 0,
        seed: int = 0,
        replacement: Literal["per_epoch", "single"] = "per_epoch",
        split: tuple[float, float, float] = (0.8, 0.1, 0.1),
        split_seed: int = 0,
        mention_holdout: float = 0.0,
        compose: float = 0.0,
    ) -> None:
        super().__init__()
        self.recipe = Recipe(
            data_dir=data_dir, mention_dirs=mention_dirs, taxonomy=taxonomy, alias_files=alias_files or (),
            split=split, split_seed=split_seed, mention_holdout=mention_holdout, seed=seed, replacement=replacement,
            compose=compose,
        )  # fmt: skip
        check_positive(batch_size=batch_size)
        if num_workers < 0:
            raise ValueError(f"num_workers must be >= 0, got {num_workers}")
        self.tokenizer_path = str(tokenizer) if tokenizer is not None else str(DEMO_TOKENIZER)
        self.tokenizer_given = tokenizer is not None
        self.max_length = max_length
        self.batch_size, self.num_workers = batch_size, num_workers

    @cached_property
    def tokenizer(self) -> ThunderTokenizer:
        """The tokenizer, loaded from ``tokenizer`` on first use (or handed over by :meth:`use_tokenizer`)."""
        return load_tokenizer(self.tokenizer_path)

    def use_tokenizer(self, tokenizer: ThunderTokenizer) -> None:
        """Tokenize with ``tokenizer``: the model's own (``tokenizer: pretrained``, handed over by ``thunder fit``) or
        a trained model's (``connect``)."""
        self.tokenizer = tokenizer  # the cached property's slot
