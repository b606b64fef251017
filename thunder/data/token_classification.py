"""Token-classification data: annotated judgments synthesized afresh every epoch, windowed and labelled.

:class:`DeIdDataModule` builds its :class:`~thunder.data.recipe.Recipe` from its arguments and keeps it in its
checkpoints (``state_dict``), so ``thunder evaluate`` fills the same test documents as ``thunder test``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Literal, Sequence

from lightning.pytorch.utilities import rank_zero_info
from torch.utils.data import DataLoader

from thunder.data.base import RecipeDataModule
from thunder.data.labels import IGNORE_INDEX, Example, TokenCollator, token_labels, window_examples
from thunder.data.loaders import (
    EpochDataset,
    ResumableDataLoader,
    epoch_slots,
    evaluation_loader,
    pool_turn,
    training_loader,
)
from thunder.data.recipe import Filler, InputPath, check_choice, check_inputs, check_positive, path_text
from thunder.data.splits import SPLITS
from thunder.documents.annotation import AnnotatedDocument
from thunder.language.morphemes import tagged_chars
from thunder.language.tokenizer import ThunderTokenizer, check_windows
from thunder.synthesis.composition import ComposingSynthesizer
from thunder.synthesis.mentions import MentionSource
from thunder.synthesis.synthesizer import SynthesizedDocument, Synthesizer
from thunder.taxonomy import LabelSet, Taxonomy

TEST_MENTIONS = ("seen", "unseen", "both")
_RESUME_KEYS = ("seed", "replacement", "split", "split_seed", "mention_holdout", "random_mentions",
                "substitute_nouns", "compose", "reviewed", "reviewed_share", "published", "published_share",
                "published_unscored")


@dataclass(frozen=True)
class Pool:
    """Documents trained on beside the train split (reviewed judgments, published decisions): ``slots`` of them
    each epoch, taken in turn, so each comes back as often as needed and is filled anew each time; never composed."""

    documents: Sequence[AnnotatedDocument]
    slots: int
    unscored: frozenset[str] = frozenset()  # Mecab-ko parts of speech not scored outside the documents' spans


class TokenClassificationDataset(EpochDataset):
    """Synthesized, tokenized, labelled and windowed documents; item = all windows of one document.

    ``epoch=None`` for training (the epoch comes with the sampler key); a fixed ``epoch`` for validation/test.

    ``pools`` (training only) take their slots after the documents. The slots of all epochs walk through a pool's
    documents in turn, slot ``j`` of epoch ``e`` being the ``k = e * slots + j``-th: document ``k % len(pool)``,
    filled as its epoch ``k // len(pool)``, so a document seen several times an epoch reads other mentions each time.
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
        pools: Sequence[Pool] = (),
    ) -> None:
        super().__init__(documents, synthesizer, tokenizer, epoch)
        self.label_set = label_set
        self.max_length, self.stride = max_length, stride
        self.score_once = score_once
        self.pools = [pool for pool in pools if pool.slots]
        if any(not pool.documents for pool in self.pools):
            raise ValueError("a pool with slots but no documents")

    def __len__(self) -> int:
        return len(self.items) + sum(pool.slots for pool in self.pools)

    def _pool(self, index: int) -> tuple[Pool, int]:
        """The pool of slot ``index`` (past the items) and the slot's place in it."""
        index -= len(self.items)
        for pool in self.pools:
            if index < pool.slots:
                return pool, index
            index -= pool.slots
        raise IndexError(index)

    def _pooled(self, index: int, epoch: int) -> tuple[AnnotatedDocument, int]:
        """The document of slot ``index`` (past the items) at ``epoch``, and the epoch it is filled as."""
        pool, slot = self._pool(index)
        document, filling = pool_turn(epoch, pool.slots, slot, len(pool.documents))
        return pool.documents[document], filling

    def lengths(self) -> list[int]:
        """Length of each item's annotated document in characters (a pool's slot: the document of its first
        epoch): the bucketing key of length-grouped batches."""
        pooled = [len(self._pooled(index, 0)[0].text) for index in range(len(self.items), len(self))]
        return [len(doc.text) for doc in self.items] + pooled

    def synthesize(self, index: int, epoch: int | None = None) -> SynthesizedDocument:
        """The synthesized text and gold spans of item ``index`` at ``epoch`` (default: the dataset's)."""
        epoch, index = self.resolve(index if epoch is None else (epoch, index))
        if index < len(self.items):
            return self.synthesizer(self.items[index], epoch=epoch)
        document, filling = self._pooled(index, epoch)
        filler = self.synthesizer  # a pool's document is a court's document as written: never composed
        if isinstance(filler, ComposingSynthesizer):
            filler = filler.synthesizer
        return filler(document, epoch=filling)

    def __getitem__(self, key: int | tuple[int, int]) -> list[Example]:
        epoch, index = self.resolve(key)
        document = self.synthesize(index, epoch)
        encoding = self.tokenizer.encode(document.text)
        labels = token_labels(encoding.offsets, document.spans, self.label_set)
        unscored = self._pool(index)[0].unscored if index >= len(self.items) else frozenset()
        if unscored:
            labels = unscored_labels(document, encoding.offsets, labels, unscored)
        return window_examples(encoding, labels, self.tokenizer, self.max_length, self.stride, self.score_once)


def unscored_labels(document: SynthesizedDocument, offsets: Sequence[tuple[int, int]], labels: Sequence[int],
                    tags: frozenset[str]) -> list[int]:  # fmt: skip
    """``labels`` with every token outside the document's spans that touches a word of the parts of speech ``tags``
    (:func:`~thunder.language.morphemes.tagged_chars`) not scored (-100)."""
    unscored = tagged_chars(document.text, tags)
    for span in document.spans:
        unscored[span.start : span.end] = bytes(span.end - span.start)
    return [IGNORE_INDEX if label == 0 and any(unscored[start:end]) else label
            for (start, end), label in zip(offsets, labels)]  # fmt: skip


def epoch_line(base: int, pools: Sequence[tuple[str, Sequence[AnnotatedDocument], int]]) -> str:
    """What a training epoch reads: ``base`` documents of the train split and each pool's slots, with how many
    documents and spans each pool holds (``training epoch: 2,520 train-split documents + 1,080 of 8,113 published
    decision chunks (21,455 spans)``)."""
    parts = [f"training epoch: {base:,} train-split documents"]
    parts += [f"{slots:,} of {len(docs):,} {name} ({sum(len(d.placeholders) for d in docs):,} spans)"
              for name, docs, slots in pools if docs]  # fmt: skip
    return " + ".join(parts)


class DeIdDataModule(RecipeDataModule):
    """Token-classification data: annotated judgments synthesized afresh every epoch, windowed and labelled.

    Args:
        granularity: Entity types to predict: ``binary`` (identifier or not), ``category`` or ``label`` (default:
            the base model's, else ``label``).
        scheme: Tagging scheme, ``IO`` or ``BIO`` (default: the base model's, else ``IO``).
        stride: Tokens shared by consecutive windows of a long document.
        test_mentions: Test sets: ``seen`` (mentions as in training), ``unseen`` (only held-back mentions, person
            names from a generator family training never uses, ``PersonNames("unseen")``) or ``both`` (two test
            dataloaders, logged as ``test/seen/...`` and ``test/unseen/...``); default ``both`` with a
            ``mention_holdout``, else ``seen``.
        random_mentions: Share of training mentions replaced by random strings of their shape (structured
            identifiers excepted), so that the context is the only cue.
        substitute_nouns: Share of the general nouns outside identifiers replaced every epoch by other general nouns
            of Korean (:mod:`thunder.synthesis.vocabulary`), so that an unfamiliar word is not taken for a name.
        head_nouns: ``inside``: spans cover whole mentions; ``corpus``: a generic head noun ending a mention
            (``래미안아파트`` under 아파트, ``강남역`` under 지하철역) stays outside its span for the quasi labels whose
            training documents mostly write it after the placeholder (``<<<아파트>>>E<<</아파트>>>아파트``), the
            corpus's own convention (docs/results.md: it did not train a better model).
        generators: Per-label mention generators replacing the taxonomy's source, ``{label: {class_path,
            init_args}}`` (a class with ``sample(rng, context) -> str``) or ``{label: name}`` of a built-in one.
        train_dirs: Explicit training directories (replace the train share of ``data_dir``).
        val_dirs: Explicit validation directories (replace the val share of ``data_dir``).
        test_dirs: Explicit test directories: any directory of annotated judgments can be a test set.
        group_by_length: Batch documents of similar length together (less padding).
        pad_to_multiple_of: Pad batches to a multiple of this many tokens (e.g. 8 for tensor cores).
        reviewed: Reviewed judgments to train on beside the train split: span-annotated JSONL files or folders (the
            review page's download, corrected ``thunder deid --spans`` files; :mod:`thunder.documents.reviewed`).
            Every span becomes a placeholder of its label, filled afresh every epoch: the identifiers never reach
            training.
        reviewed_share: Share of every training epoch's documents that are reviewed judgments (each comes back as
            often as needed, with other mentions each time; 1: reviewed judgments alone); None: each reviewed
            judgment once per epoch beside the train split.
        published: Published decisions to train on beside the train split (JSONL files or folders, xz-compressed
            or not, e.g. ``../shared/corpus/legal-ko/precedents.jsonl.xz``): their court marks become placeholders,
            the rest is text that is no identifier (:mod:`thunder.documents.published`); their held-out share never.
        published_share: Share of every training epoch's documents that are chunks of published decisions (taken in
            turn, each filled anew when it comes back); None: each chunk once per epoch.
        published_unscored: Mecab-ko parts of speech whose words in published decisions are not scored outside the
            courts' marks (``[NNP/인명, NNP/지명, SL, UNKNOWN]``: names of persons and places, foreign letters, unknown
            words; :func:`~thunder.language.morphemes.tagged_chars`): a court leaves names of places, products and
            businesses in clear text that the taxonomy counts as identifiers, so they are taught neither way.
        base_model: A token classifier to adapt (a Thunder ``.ckpt``, an export, an imported or published release):
            the data is tokenized with its tokenizer and labelled with its label set (taxonomy, granularity,
            scheme), handed over by :meth:`connect` (``thunder fit`` connects them), so ``tokenizer`` and
            ``taxonomy`` are left out; :class:`~thunder.model.modules.TokenClassifier` starts from it unless given
            another ``init_from``.
        **kwargs: the options every data module shares (:class:`~thunder.data.base.RecipeDataModule`).
    """

    def __init__(
        self,
        granularity: Literal["binary", "category", "label"] | None = None,
        scheme: Literal["IO", "BIO"] | None = None,
        stride: int = 128,
        test_mentions: Literal["seen", "unseen", "both"] | None = None,
        random_mentions: float = 0.0,
        substitute_nouns: float = 0.0,
        head_nouns: Literal["inside", "corpus"] = "inside",
        generators: dict[str, Any] | None = None,
        train_dirs: list[InputPath] | None = None,
        val_dirs: list[InputPath] | None = None,
        test_dirs: list[InputPath] | None = None,
        group_by_length: bool = False,
        pad_to_multiple_of: int | None = None,
        reviewed: list[InputPath] | None = None,
        reviewed_share: float | None = None,
        published: list[InputPath] | None = None,
        published_share: float | None = None,
        published_unscored: list[str] | None = None,
        base_model: InputPath | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.recipe = self.recipe.replace(
            train_dirs=train_dirs, val_dirs=val_dirs, test_dirs=test_dirs, generators=generators,
            random_mentions=random_mentions, substitute_nouns=substitute_nouns, head_nouns=head_nouns,
            reviewed=reviewed, reviewed_share=reviewed_share, published=published, published_share=published_share,
            published_unscored=tuple(published_unscored or ()),
        )  # fmt: skip
        recipe = self.recipe
        test_mentions = test_mentions or ("both" if recipe.mention_holdout > 0 else "seen")
        check_choice("test_mentions", test_mentions, TEST_MENTIONS)
        if test_mentions != "seen" and recipe.mention_holdout == 0:
            raise ValueError(f"test_mentions {test_mentions!r} needs mention_holdout > 0 (e.g. 0.1)")
        # names of the test sets, in test dataloader order ("": one test set, logged as test/...)
        self.test_sets = {"seen": ("",), "unseen": ("unseen",), "both": ("seen", "unseen")}[test_mentions]
        if test_mentions == "seen" and recipe.mention_holdout > 0:
            self.test_sets = ("seen",)
        check_windows(self.max_length, stride)
        check_positive(pad_to_multiple_of=pad_to_multiple_of or 1)
        base_model = None if base_model is None else path_text(base_model)
        self.base_model = base_model
        self.stride = stride
        self.group_by_length = group_by_length
        self.pad_to_multiple_of = pad_to_multiple_of
        self.granularity, self.scheme = granularity, scheme
        needs_data_dir = any(recipe.explicit_dirs(name) is None for name in SPLITS)
        check_inputs(
            None if base_model else self.tokenizer_path, data_dir=recipe.corpus if needs_data_dir else None,
            mention_dirs=recipe.mention_lists, train_dirs=recipe.train_dirs, val_dirs=recipe.val_dirs,
            test_dirs=recipe.test_dirs, reviewed=recipe.reviewed, published=recipe.published, base_model=base_model,
        )  # fmt: skip
        if base_model is not None and (self.tokenizer_given or recipe.taxonomy is not None):
            raise ValueError("base_model brings its own tokenizer and taxonomy: leave tokenizer and taxonomy out")
        self.label_set: LabelSet | None = None
        if base_model is None:
            taxonomy = recipe.load_taxonomy()
            self._use(LabelSet(taxonomy, granularity=granularity or "label", scheme=scheme or "IO"), taxonomy)
        self.datasets: dict[str, TokenClassificationDataset] = {}

    def connect(self, tokenizer: ThunderTokenizer, label_set: LabelSet) -> None:
        """Tokenize and label for a trained model (``base_model``): its tokenizer and label set, e.g.
        ``base = Artefact.open(path).classifier(weights=False)``, ``data.connect(base.tokenizer, base.label_set)`` (:mod:`thunder.model.loader`)."""
        for name in ("granularity", "scheme"):
            value = getattr(self, name)
            if value is not None and value != getattr(label_set, name):
                raise ValueError(f"{name} {value!r} is not the base model's ({getattr(label_set, name)!r})")
        self.use_tokenizer(tokenizer)
        self._use(label_set, label_set.taxonomy.with_alias_files(self.recipe.alias_files))

    def _use(self, label_set: LabelSet, taxonomy: Taxonomy) -> None:
        """Label with ``label_set``; read the corpus's raw tags with ``taxonomy`` (its taxonomy and the alias files)."""
        self.label_set, self.taxonomy = label_set, taxonomy
        self.filler = Filler(self.recipe, self.taxonomy)
        self.filler.reviewed()  # read now: a bad reviewed file stops the run before it starts

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
        if self.label_set is None:
            raise ValueError(f"base_model {self.base_model}: hand over its tokenizer and label set with connect() first "
                             "(thunder fit does)")  # fmt: skip
        documents = self.documents()
        sets = {name: (documents[name], self.synthesizer(name)) for name in SPLITS}
        if "unseen" in self.test_sets:
            sets["test_unseen"] = (documents["test"], self.synthesizer("test", "heldout"))
        sizes = [(len(self.filler.reviewed()), self.recipe.reviewed_share),
                 (len(self.filler.published()), self.recipe.published_share)]  # fmt: skip
        base, slots = epoch_slots(len(documents["train"]), sizes)
        pools = [Pool(self.filler.reviewed(), slots[0]),
                 Pool(self.filler.published(), slots[1], frozenset(self.recipe.published_unscored))]  # fmt: skip
        rank_zero_info(epoch_line(base, [("reviewed judgments", self.filler.reviewed(), slots[0]),
                                         ("published decision chunks", self.filler.published(), slots[1])]))
        sets["train"] = (documents["train"][:base], sets["train"][1])
        for name, (docs, synthesizer) in sets.items():
            training = name == "train"
            self.datasets[name] = TokenClassificationDataset(
                docs, synthesizer, self.tokenizer, self.label_set, self.max_length, self.stride,
                score_once=not training, epoch=None if training else 0, pools=pools if training else (),
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
