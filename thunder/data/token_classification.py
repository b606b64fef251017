"""Token-classification data: annotated judgments synthesized afresh every epoch, windowed and labelled.

:class:`DeIdDataModule` builds its :class:`~thunder.data.recipe.Recipe` from its arguments and keeps it in its
checkpoints (``state_dict``), so ``thunder evaluate`` fills the same test documents as ``thunder test``.
"""

from __future__ import annotations

import warnings
from functools import cached_property
from typing import Any, Literal, Sequence

from lightning.pytorch import LightningDataModule
from torch.utils.data import DataLoader

from thunder.annotation import AnnotatedDocument
from thunder.checkpoint import classifier_parts, load_tokenizer
from thunder.composition import ComposingSynthesizer
from thunder.data.labels import Example, TokenCollator, token_labels, window_examples
from thunder.data.loaders import EpochDataset, ResumableDataLoader, evaluation_loader, training_loader
from thunder.data.recipe import DEMO_TOKENIZER, Filler, Recipe, check_choice, check_inputs, check_positive
from thunder.data.splits import SPLITS
from thunder.mentions import MentionSource
from thunder.synthesis import SynthesizedDocument, Synthesizer
from thunder.taxonomy import LabelSet
from thunder.tokenizer import ThunderTokenizer, check_windows

TEST_MENTIONS = ("seen", "unseen", "both")
_RESUME_KEYS = ("seed", "replacement", "split", "split_seed", "mention_holdout", "random_mentions",
                "substitute_nouns", "compose", "reviewed", "reviewed_share")


def reviewed_slots(documents: int, reviewed: int, share: float | None) -> tuple[int, int]:
    """``(documents, reviewed slots)`` of a training epoch of ``documents`` train-split judgments and ``reviewed``
    reviewed ones, reviewed judgments making ``share`` of it (None: each once; 1: alone)."""
    if share is None:
        return documents, reviewed
    if share == 1 or documents == 0:
        return 0, reviewed
    return documents, max(1, round(documents * share / (1 - share)))


class TokenClassificationDataset(EpochDataset):
    """Synthesized, tokenized, labelled and windowed documents; item = all windows of one document.

    ``epoch=None`` for training (the epoch comes with the sampler key); a fixed ``epoch`` for validation/test.

    ``reviewed`` judgments (training only) take ``reviewed_slots`` items after the documents (default: one each).
    The slots of all epochs walk through the reviewed judgments in turn, slot ``j`` of epoch ``e`` being the
    ``k = e * slots + j``-th: judgment ``k % len(reviewed)``, filled as its epoch ``k // len(reviewed)``, so a
    judgment seen several times an epoch reads other mentions each time; reviewed judgments are never composed.
    """

    def __init__(
        self,
        documents: Sequence[AnnotatedDocument],
        synthesizer: Synthesizer | ComposingSynthesizer,
        tokenizer: ThunderTokenizer,
        label_set: LabelSet,
        max_length: int,
        stride: int,
        score_once: bool,
        epoch: int | None = None,
        reviewed: Sequence[AnnotatedDocument] = (),
        reviewed_slots: int | None = None,
    ) -> None:
        super().__init__(documents, synthesizer, tokenizer, epoch)
        self.label_set = label_set
        self.max_length, self.stride = max_length, stride
        self.score_once = score_once
        self.reviewed = list(reviewed)
        self.reviewed_slots = len(self.reviewed) if reviewed_slots is None else reviewed_slots
        if self.reviewed_slots and not self.reviewed:
            raise ValueError(f"{self.reviewed_slots} reviewed slots but no reviewed judgments")

    def __len__(self) -> int:
        return len(self.items) + self.reviewed_slots

    def lengths(self) -> list[int]:
        """Length of each item's annotated document in characters (a reviewed slot: the judgment of its first
        epoch): the bucketing key of length-grouped batches."""
        reviewed = [len(self.reviewed[j % len(self.reviewed)].text) for j in range(self.reviewed_slots)]
        return [len(doc.text) for doc in self.items] + reviewed

    def synthesize(self, index: int, epoch: int | None = None) -> SynthesizedDocument:
        """The synthesized text and gold spans of item ``index`` at ``epoch`` (default: the dataset's)."""
        epoch, index = self.resolve(index if epoch is None else (epoch, index))
        if index < len(self.items):
            return self.synthesizer(self.items[index], epoch=epoch)
        turn = epoch * self.reviewed_slots + index - len(self.items)
        filler = self.synthesizer  # a reviewed judgment is a court's document as written: never composed
        if isinstance(filler, ComposingSynthesizer):
            filler = filler.synthesizer
        return filler(self.reviewed[turn % len(self.reviewed)], epoch=turn // len(self.reviewed))

    def __getitem__(self, key: int | tuple[int, int]) -> list[Example]:
        epoch, index = self.resolve(key)
        document = self.synthesize(index, epoch)
        encoding = self.tokenizer.encode(document.text)
        labels = token_labels(encoding.offsets, document.spans, self.label_set)
        return window_examples(encoding, labels, self.tokenizer, self.max_length, self.stride, self.score_once)


class DeIdDataModule(LightningDataModule):
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
        granularity: Entity types to predict: ``binary`` (identifier or not), ``category`` or ``label`` (default:
            the base model's, else ``label``).
        scheme: Tagging scheme, ``IO`` or ``BIO`` (default: the base model's, else ``IO``).
        max_length: Tokens per window including ``[CLS]`` and ``[SEP]``.
        stride: Tokens shared by consecutive windows of a long document.
        batch_size: Documents per batch (a long document contributes all its windows).
        num_workers: DataLoader worker processes.
        seed: Seed of synthesis (every training epoch, and the one filling of validation and test) and of the
            training order.
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
        substitute_nouns: Share of the general nouns outside identifiers replaced every epoch by other general nouns
            of Korean (:mod:`thunder.vocabulary`), so that an unfamiliar word is not taken for a name.
        compose: Share of training documents composed into whole judgments every epoch (header, 주문, evidence,
            statutes, sentencing and signatures around the facts paragraph, :mod:`thunder.composition`); their
            windows overlap like any long document's. Validation and test stay facts paragraphs.
        head_nouns: ``inside``: spans cover whole mentions; ``corpus``: a generic head noun ending a mention
            (``래미안아파트`` under 아파트, ``강남역`` under 지하철역) stays outside its span for the quasi labels whose
            training documents mostly write it after the placeholder (``<<<아파트>>>E<<</아파트>>>아파트``), the
            corpus's own convention (docs/results.md: it did not train a better model).
        train_dirs: Explicit training directories (replace the train share of ``data_dir``).
        val_dirs: Explicit validation directories (replace the val share of ``data_dir``).
        test_dirs: Explicit test directories: any directory of annotated judgments can be a test set.
        group_by_length: Batch documents of similar length together (less padding).
        pad_to_multiple_of: Pad batches to a multiple of this many tokens (e.g. 8 for tensor cores).
        reviewed: Reviewed judgments to train on beside the train split: span-annotated JSONL files or folders (the
            review page's download, corrected ``thunder deid --spans`` files; :mod:`thunder.reviewed`). Every span
            becomes a placeholder of its label, filled afresh every epoch: the identifiers never reach training.
        reviewed_share: Share of every training epoch's documents that are reviewed judgments (each comes back as
            often as needed, with other mentions each time; 1: reviewed judgments alone); None: each reviewed
            judgment once per epoch beside the train split.
        base_model: A token classifier to adapt (a Thunder ``.ckpt``, an export, an imported or published release):
            the data is tokenized with its tokenizer and labelled with its label set (taxonomy, granularity,
            scheme), so ``tokenizer`` and ``taxonomy`` are left out; :class:`~thunder.models.TokenClassifier`
            starts from it unless given another ``init_from``.
    """

    def __init__(
        self,
        tokenizer: str | None = None,
        data_dir: str | None = None,
        mention_dirs: list[str] | None = None,
        taxonomy: str | None = None,
        alias_files: list[str] | None = None,
        generators: dict[str, Any] | None = None,
        granularity: Literal["binary", "category", "label"] | None = None,
        scheme: Literal["IO", "BIO"] | None = None,
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
        substitute_nouns: float = 0.0,
        compose: float = 0.0,
        head_nouns: Literal["inside", "corpus"] = "inside",
        train_dirs: list[str] | None = None,
        val_dirs: list[str] | None = None,
        test_dirs: list[str] | None = None,
        group_by_length: bool = False,
        pad_to_multiple_of: int | None = None,
        reviewed: list[str] | None = None,
        reviewed_share: float | None = None,
        base_model: str | None = None,
    ) -> None:
        super().__init__()
        self.recipe = Recipe(
            data_dir=data_dir, train_dirs=train_dirs, val_dirs=val_dirs, test_dirs=test_dirs,
            mention_dirs=mention_dirs, taxonomy=taxonomy, alias_files=alias_files or (), generators=generators,
            split=split, split_seed=split_seed, mention_holdout=mention_holdout, random_mentions=random_mentions,
            substitute_nouns=substitute_nouns, head_nouns=head_nouns, seed=seed, replacement=replacement,
            compose=compose, reviewed=reviewed, reviewed_share=reviewed_share,
        )  # fmt: skip
        test_mentions = test_mentions or ("both" if mention_holdout > 0 else "seen")
        check_choice("test_mentions", test_mentions, TEST_MENTIONS)
        if test_mentions != "seen" and mention_holdout == 0:
            raise ValueError(f"test_mentions {test_mentions!r} needs mention_holdout > 0 (e.g. 0.1)")
        # names of the test sets, in test dataloader order ("": one test set, logged as test/...)
        self.test_sets = {"seen": ("",), "unseen": ("unseen",), "both": ("seen", "unseen")}[test_mentions]
        if test_mentions == "seen" and mention_holdout > 0:
            self.test_sets = ("seen",)
        check_windows(max_length, stride)
        check_positive(batch_size=batch_size, pad_to_multiple_of=pad_to_multiple_of or 1)
        if num_workers < 0:
            raise ValueError(f"num_workers must be >= 0, got {num_workers}")
        self.base_model = base_model
        self.tokenizer_path = str(tokenizer) if tokenizer is not None else str(DEMO_TOKENIZER)
        self.max_length, self.stride = max_length, stride
        self.batch_size, self.num_workers = batch_size, num_workers
        self.group_by_length = group_by_length
        self.pad_to_multiple_of = pad_to_multiple_of
        recipe = self.recipe
        needs_data_dir = any(recipe.explicit_dirs(name) is None for name in SPLITS)
        check_inputs(
            None if base_model else self.tokenizer_path, data_dir=recipe.corpus if needs_data_dir else None,
            mention_dirs=recipe.mention_lists, train_dirs=recipe.train_dirs, val_dirs=recipe.val_dirs,
            test_dirs=recipe.test_dirs, reviewed=recipe.reviewed, base_model=base_model,
        )  # fmt: skip
        if base_model is None:
            self.taxonomy = recipe.load_taxonomy()
            self.label_set = LabelSet(self.taxonomy, granularity=granularity or "label", scheme=scheme or "IO")
        else:
            if tokenizer is not None or taxonomy is not None:
                raise ValueError("base_model brings its own tokenizer and taxonomy: leave tokenizer and taxonomy out")
            self._base_tokenizer, self.label_set = classifier_parts(base_model)
            for name, value in (("granularity", granularity), ("scheme", scheme)):
                if value is not None and value != getattr(self.label_set, name):
                    raise ValueError(f"{name} {value!r} is not the base model's ({getattr(self.label_set, name)!r})")
            self.taxonomy = self.label_set.taxonomy.with_alias_files(recipe.alias_files)
        self.filler = Filler(recipe, self.taxonomy)
        self.filler.reviewed()  # read now: a bad reviewed file stops the run before it starts
        self.datasets: dict[str, TokenClassificationDataset] = {}

    @cached_property
    def tokenizer(self) -> ThunderTokenizer:
        """The tokenizer: the base model's, else loaded from ``tokenizer`` on first use."""
        return self._base_tokenizer if self.base_model else load_tokenizer(self.tokenizer_path)

    @property
    def generators(self) -> dict[str, MentionSource]:
        """The recipe's per-label generators, loaded."""
        return self.filler.generators

    # -- data ---------------------------------------------------------------------------------------------------

    def documents(self) -> dict[str, list[AnnotatedDocument]]:
        """The documents of every split: explicit ``*_dirs`` where given, else the split share of ``data_dir``."""
        return self.filler.documents()

    def head_outside(self) -> frozenset[str]:
        """Labels whose head nouns stay outside spans (``head_nouns``), read once from the training documents."""
        return self.filler.head_outside()

    def synthesizer(self, split: str, part: str = "train") -> Synthesizer | ComposingSynthesizer:
        """The synthesizer of a split: training re-fills (and composes the ``compose`` share) every epoch;
        validation and test are filled once, from the ``part`` of the mention lists (``heldout``: the unseen test
        set)."""
        check_choice("split", split, SPLITS)
        return self.filler.training_synthesizer() if split == "train" else self.filler.synthesizer(part)

    def setup(self, stage: str | None = None) -> None:
        """Read the corpus and build the datasets (once)."""
        if self.datasets:
            return
        documents = self.documents()
        sets = {name: (documents[name], self.synthesizer(name)) for name in SPLITS}
        if "unseen" in self.test_sets:
            sets["test_unseen"] = (documents["test"], self.synthesizer("test", "heldout"))
        reviewed = self.filler.reviewed()
        base, slots = reviewed_slots(len(documents["train"]), len(reviewed), self.recipe.reviewed_share)
        sets["train"] = (documents["train"][:base], sets["train"][1])
        for name, (docs, synthesizer) in sets.items():
            training = name == "train"
            self.datasets[name] = TokenClassificationDataset(
                docs, synthesizer, self.tokenizer, self.label_set, self.max_length, self.stride,
                score_once=not training, epoch=None if training else 0, reviewed=reviewed if training else (),
                reviewed_slots=slots if training else None,
            )  # fmt: skip

    def _collator(self) -> TokenCollator:
        return TokenCollator(self.tokenizer.pad_token_id, self.pad_to_multiple_of)

    def train_dataloader(self) -> ResumableDataLoader:
        dataset = self.datasets["train"]
        lengths = dataset.lengths() if self.group_by_length else None
        return training_loader(self, dataset, self.batch_size, self.num_workers, self._collator(), self.recipe.seed,
                               lengths)  # fmt: skip

    def _eval_dataloader(self, name: str) -> DataLoader | list:
        return evaluation_loader(self.datasets[name], self.batch_size, self.num_workers, self._collator(),
                                 self.recipe.seed)  # fmt: skip

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
        """What a resumed run must agree on (synthesis seed and strategy, split, label set) and the whole recipe,
        which ``thunder evaluate`` and ``thunder export`` read."""
        recipe = self.recipe.to_dict()
        return {**{key: recipe[key] for key in _RESUME_KEYS}, "label_set": self.label_set.to_dict(), "recipe": recipe}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Check a checkpoint's data state: a different label set is an error, other differences a warning."""
        if "label_set" in state_dict:
            self.label_set.check_compatible(state_dict["label_set"])
        current = self.state_dict()
        changed = [key for key in _RESUME_KEYS if key in state_dict and state_dict[key] != current[key]]
        if changed:
            warnings.warn(
                "resuming with different data settings than the checkpoint ("
                + ", ".join(f"{key}: {state_dict[key]!r} -> {current[key]!r}" for key in changed)
                + "): the run will not see the samples the interrupted run would have seen",
                stacklevel=2,
            )
