"""The training recipe: which annotated judgments, split how, filled from which mentions, with which seed.

A :class:`Recipe` is plain data: the settings a data module builds its documents from, kept in its checkpoints (and
in ``thunder export``'s ``thunder.json``) so that ``thunder evaluate`` fills the same documents the same way with no
path typed again. :class:`Filler` binds a recipe to a taxonomy: the documents of every split, the mention banks and the
synthesizers, each built once. Training fills the train split afresh every epoch (``seed``, ``replacement``, random
mentions); every other filling (validation, test, ``thunder evaluate``) is ``Synthesizer(seed, replacement="single")``
at epoch 0, so ``thunder test`` and ``thunder evaluate --seed S`` read the same test documents when ``S`` is the
recipe's ``seed``. :func:`check_inputs` refuses a missing input when a data module is built.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence, Union

from jsonargparse.typing import path_type

from thunder.data.splits import SPLITS, check_split, read_corpus, split_documents
from thunder.documents.annotation import AnnotatedDocument
from thunder.documents.published import read_published
from thunder.documents.reviewed import read_reviewed
from thunder.identifiers import CATALOGUE
from thunder.language.morphemes import PARTS_OF_SPEECH
from thunder.language.tokenizer import THUNDER_CONFIG
from thunder.synthesis.composition import Composer, ComposingSynthesizer
from thunder.synthesis.mentions import DEMO_MENTIONS, MentionBank, MentionSource, load_generators
from thunder.synthesis.names import ShapeNoise
from thunder.synthesis.synthesizer import REPLACEMENTS, Synthesizer, head_outside_labels
from thunder.synthesis.vocabulary import NounSubstitution
from thunder.taxonomy import Taxonomy

DEMO_CORPUS = Path(str(resources.files("thunder") / "resources" / "demo" / "annotated"))
DEMO_TOKENIZER = Path(str(resources.files("thunder") / "resources" / "demo" / "tokenizer"))
HEAD_NOUNS = ("inside", "corpus")
MENTION_PARTS = ("train", "heldout")
_PATH_LISTS = ("train_dirs", "val_dirs", "test_dirs", "mention_dirs", "alias_files")
_PATHS = ("data_dir", "taxonomy")
InputPath = Union[path_type(""), str]
"""The type of a data module's input (corpus, mention lists, taxonomy, reviewed judgments, base model, ...): written
in a config file, a relative path is read from the config's folder; on the command line, from the current directory
(jsonargparse resolves it when ``thunder fit`` parses, and the run's saved ``config.yaml`` writes it absolute; from
Python, a string is relative to the current directory)."""


def path_text(path: str | os.PathLike) -> str:
    """An input path as the data module keeps it: a string as given, a path resolved by jsonargparse as its absolute
    path (normalised: ``configs/../../shared`` reads ``/…/shared``)."""
    return path if isinstance(path, str) else os.path.normpath(os.fspath(path))


def check_choice(name: str, value: str, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")


def check_positive(**values: int) -> None:
    for name, value in values.items():
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")


@dataclass(frozen=True)
class Recipe:
    """Where a data module's documents come from and how their placeholders are filled.

    The field names are the data modules' init arguments (:meth:`from_dict` reads a config's ``data.init_args`` or
    a stored recipe as they are). Paths are kept as written; ``root`` is the directory relative ones are relative to
    (stored as the current directory of training, see :meth:`to_dict`).

    Args:
        data_dir: Annotated judgments split into train/val/test by ``split``; None: the packaged demo corpus.
        train_dirs: Explicit training directories (replace the train share of ``data_dir``); likewise ``val_dirs``
            and ``test_dirs``.
        mention_dirs: Mention-list directories; None: the packaged demo lists.
        taxonomy: Taxonomy file; None: the packaged default.
        alias_files: Extra raw-tag alias files (e.g. ``tag_aliases.json``).
        generators: Per-label mention generators replacing the taxonomy's source (``{label: name or {class_path,
            init_args}}``, see :func:`thunder.synthesis.mentions.load_generator`).
        split: Train/val/test fractions of ``data_dir`` by document, stratified by case type.
        split_seed: Seed of the split and of the mention holdout.
        mention_holdout: Share of every mention list held back from training, by entity.
        random_mentions: Share of training mentions replaced by random strings of their shape.
        substitute_nouns: Share of the general nouns outside identifiers that training replaces every epoch by other
            general nouns of Korean (:class:`thunder.synthesis.vocabulary.NounSubstitution`), so an unfamiliar word is not
            taken for a name; 0: none.
        head_nouns: ``inside`` (spans cover whole mentions) or ``corpus`` (the training split's head-noun convention).
        seed: Seed of synthesis (every epoch of training, and the one filling of every other split).
        replacement: ``per_epoch`` re-samples training mentions every epoch; ``single`` keeps the epoch-0 ones.
        compose: Share of training documents composed into whole judgments (:class:`thunder.synthesis.composition.Composer`:
            header, 주문, evidence, statutes, sentencing, signatures around the facts paragraph), drawn anew every
            epoch; 0: facts paragraphs only. Every other filling (validation, test, ``thunder evaluate``) stays
            uncomposed, so test figures compare across recipes.
        reviewed: Reviewed judgments (span-annotated JSONL files or folders, :mod:`thunder.documents.reviewed`) trained on
            beside the train split, filled afresh every epoch like it; training only (evaluation never reads them,
            so their paths are kept as written and never looked for).
        reviewed_share: Share of every training epoch's documents that are reviewed ones (each reviewed judgment
            then comes back as often as needed, with other mentions each time; 1: reviewed judgments alone);
            None: each reviewed judgment once per epoch beside the train split.
        published: Published decisions (JSONL files or folders, xz-compressed or not: ``legal-ko``'s
            ``precedents.jsonl.xz``) trained on beside the train split: their court marks become placeholders
            filled afresh every epoch, the rest is text that is no identifier (:mod:`thunder.documents.published`;
            their held-out share never). Training only.
        published_share: Share of every training epoch's documents that are chunks of published decisions, taken
            in turn; None: each chunk once per epoch.
        published_unscored: Mecab-ko parts of speech whose words in published decisions are not scored outside
            the courts' marks (``SL``; with a semantic class, ``NNP/인명``; ``UNKNOWN``: a word Mecab-ko does not know
            that holds a letter; :func:`~thunder.language.morphemes.tagged_chars`): neither taught as identifiers nor
            as text that is none, since a court leaves in clear text names of places, products and businesses that
            the taxonomy counts as identifiers. Empty: every character is scored.
        root: Directory relative paths are relative to; None: the current one.
    """

    data_dir: str | None = None
    train_dirs: tuple[str, ...] | None = None
    val_dirs: tuple[str, ...] | None = None
    test_dirs: tuple[str, ...] | None = None
    mention_dirs: tuple[str, ...] | None = None
    taxonomy: str | None = None
    alias_files: tuple[str, ...] = ()
    generators: Mapping[str, Any] | None = None
    split: tuple[float, float, float] = (0.8, 0.1, 0.1)
    split_seed: int = 0
    mention_holdout: float = 0.0
    random_mentions: float = 0.0
    substitute_nouns: float = 0.0
    head_nouns: str = "inside"
    seed: int = 0
    replacement: str = "per_epoch"
    compose: float = 0.0
    reviewed: tuple[str, ...] | None = None
    reviewed_share: float | None = None
    published: tuple[str, ...] | None = None
    published_share: float | None = None
    published_unscored: tuple[str, ...] = ()
    root: str | None = None

    def __post_init__(self) -> None:
        for name in _PATHS + ("root",):
            value = getattr(self, name)
            object.__setattr__(self, name, None if value is None else path_text(value))
        for name in _PATH_LISTS:
            value = getattr(self, name)
            if value is not None or name == "alias_files":
                object.__setattr__(self, name, tuple(path_text(path) for path in value or ()))
        object.__setattr__(self, "split", tuple(self.split))
        for pool, what in (("reviewed", "reviewed judgments"), ("published", "published decisions")):
            paths, share = getattr(self, pool), getattr(self, f"{pool}_share")
            if paths is not None:
                object.__setattr__(self, pool, tuple(path_text(path) for path in paths))
            if share is not None:
                if not 0 < share <= 1:
                    raise ValueError(f"{pool}_share must be in (0, 1], got {share}")
                if not paths:
                    raise ValueError(f"{pool}_share {share} needs {what}: give them with "
                                     f"--data.init_args.{pool} '[DIR_OR_FILE, ...]'")  # fmt: skip
                object.__setattr__(self, f"{pool}_share", float(share))
        object.__setattr__(self, "published_unscored", tuple(self.published_unscored))
        unknown = sorted(tag for tag in self.published_unscored if tag.split("/")[0] not in PARTS_OF_SPEECH)
        if unknown:
            raise ValueError(f"published_unscored: {', '.join(unknown)} is no Mecab-ko part of speech (one of "
                             f"{', '.join(sorted(PARTS_OF_SPEECH))})")  # fmt: skip
        if self.published_unscored and not self.published:
            raise ValueError("published_unscored needs published decisions: give them with --data.init_args.published")
        if (self.reviewed_share or 0) + (self.published_share or 0) > 1:
            raise ValueError(f"reviewed_share {self.reviewed_share} and published_share {self.published_share} make "
                             "more than a whole epoch")  # fmt: skip
        if not 0 <= self.mention_holdout < 1:
            raise ValueError(f"mention_holdout must be in [0, 1), got {self.mention_holdout}")
        if not 0 <= self.random_mentions <= 1:
            raise ValueError(f"random_mentions must be in [0, 1], got {self.random_mentions}")
        if not 0 <= self.substitute_nouns <= 1:
            raise ValueError(f"substitute_nouns must be in [0, 1], got {self.substitute_nouns}")
        object.__setattr__(self, "substitute_nouns", float(self.substitute_nouns))
        if not 0 <= self.compose <= 1:
            raise ValueError(f"compose must be in [0, 1], got {self.compose}")
        object.__setattr__(self, "compose", float(self.compose))
        object.__setattr__(self, "mention_holdout", float(self.mention_holdout))
        object.__setattr__(self, "random_mentions", float(self.random_mentions))
        check_choice("replacement", self.replacement, REPLACEMENTS)
        check_choice("head_nouns", self.head_nouns, HEAD_NOUNS)
        check_split(self.split)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> Recipe:
        """The recipe in ``values``: a data module's init arguments, a config's ``data.init_args`` or a stored recipe
        (other keys, such as ``batch_size``, are not part of it; None keeps a field's default)."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{key: value for key, value in values.items() if key in names and value is not None})

    def to_dict(self) -> dict[str, Any]:
        """Plain data (strings, numbers, lists) to keep in a checkpoint or ``thunder.json``. ``root`` is the current
        directory unless set; a generator given as an object from Python is kept as its ``module.Class`` path."""
        values = {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}
        values["root"] = self.root or str(Path.cwd())
        return values

    def replace(self, **changes: Any) -> Recipe:
        """A copy with ``changes``."""
        return dataclasses.replace(self, **changes)

    @property
    def corpus(self) -> str:
        """``data_dir``, or the packaged demo corpus."""
        return self.data_dir if self.data_dir is not None else str(DEMO_CORPUS)

    @property
    def mention_lists(self) -> tuple[str, ...]:
        """``mention_dirs``, or the packaged demo lists."""
        return self.mention_dirs if self.mention_dirs is not None else (str(DEMO_MENTIONS),)

    def explicit_dirs(self, split: str) -> tuple[str, ...] | None:
        """The directories given for ``split`` (None: it is a share of ``data_dir``)."""
        return {"train": self.train_dirs, "val": self.val_dirs, "test": self.test_dirs}[split]

    def located(self, bases: Iterable[str | Path], source: str) -> Recipe:
        """This recipe with every relative path joined to the first of ``bases`` where it exists (absolute paths
        must exist); a path found nowhere is :class:`FileNotFoundError` naming it and ``source``."""
        bases = list(dict.fromkeys(Path(base) for base in bases))

        def locate(name: str, path: str) -> str:
            candidates = [Path(path)] if Path(path).is_absolute() else [base / path for base in bases]
            found = next((candidate for candidate in candidates if candidate.exists()), None)
            if found is None:
                where = "" if Path(path).is_absolute() else f" (looked in {', '.join(map(str, bases))})"
                raise FileNotFoundError(f"{source}: {name} {path} not found{where}")
            return str(found)

        changes: dict[str, Any] = {}
        for name in _PATHS:
            if getattr(self, name) is not None:
                changes[name] = locate(name, getattr(self, name))
        for name in _PATH_LISTS:
            if getattr(self, name) is not None:
                changes[name] = tuple(locate(name, path) for path in getattr(self, name))
        return dataclasses.replace(self, **changes)

    def load_taxonomy(self) -> Taxonomy:
        """``taxonomy`` (None: the packaged default) with ``alias_files``."""
        return Taxonomy.load(self.taxonomy, alias_files=self.alias_files)


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return f"{type(value).__module__}.{type(value).__qualname__}"


class Filler:
    """A recipe on one taxonomy: the documents of every split, the mention banks and the synthesizers."""

    def __init__(self, recipe: Recipe, taxonomy: Taxonomy) -> None:
        self.recipe, self.taxonomy = recipe, taxonomy
        self.generators: dict[str, MentionSource] = load_generators(recipe.generators or {}, taxonomy)
        self._documents: dict[str, list[AnnotatedDocument]] | None = None
        self._reviewed: list[AnnotatedDocument] | None = None
        self._published: list[AnnotatedDocument] | None = None
        self._banks: dict[tuple[str, bool], MentionBank] = {}
        self._head_outside: frozenset[str] | None = None

    def documents(self) -> dict[str, list[AnnotatedDocument]]:
        """The documents of every split: explicit ``*_dirs`` where given, else the split share of ``data_dir``
        (read once)."""
        if self._documents is None:
            recipe, shares = self.recipe, None
            self._documents = {}
            for name in SPLITS:
                dirs = recipe.explicit_dirs(name)
                if dirs is not None:
                    self._documents[name] = read_corpus(dirs)
                    continue
                if shares is None:
                    shares = split_documents(read_corpus([recipe.corpus]), recipe.split, recipe.split_seed)
                self._documents[name] = shares[name]
        return self._documents

    def reviewed(self) -> list[AnnotatedDocument]:
        """The reviewed judgments, every span a placeholder of its label (read once; :mod:`thunder.documents.reviewed`)."""
        if self._reviewed is None:
            self._reviewed = read_reviewed(self.recipe.reviewed or (), self.taxonomy)
        return self._reviewed

    def published(self) -> list[AnnotatedDocument]:
        """The chunks of the published decisions' training part, court marks as placeholders (read once;
        :mod:`thunder.documents.published`)."""
        if self._published is None:
            self._published = read_published(self.recipe.published or (), self.taxonomy) if self.recipe.published else []
        return self._published

    def head_outside(self, documents: Sequence[AnnotatedDocument] | None = None) -> frozenset[str]:
        """Labels whose head nouns stay outside spans (``head_nouns: corpus``): the convention of ``documents``,
        by default of the training split (read once)."""
        if self.recipe.head_nouns == "inside":
            return frozenset()
        if documents is not None:
            return head_outside_labels(documents, self.taxonomy)
        if self._head_outside is None:
            self._head_outside = head_outside_labels(self.documents()["train"], self.taxonomy)
        return self._head_outside

    def bank(self, part: str = "train", noise: bool = False) -> MentionBank:
        """The mention bank of one part of the lists (``train`` or ``heldout``), with random-shape mentions
        (``noise``, training only) when the recipe has them; built once."""
        check_choice("part", part, MENTION_PARTS)
        key = (part, noise and self.recipe.random_mentions > 0)
        if key not in self._banks:
            recipe = self.recipe
            bank = MentionBank.from_dirs(
                self.taxonomy, recipe.mention_lists, generators=self.generators, holdout=recipe.mention_holdout,
                part=part, holdout_seed=recipe.split_seed,
            )  # fmt: skip
            self._banks[key] = with_random_mentions(bank, recipe.random_mentions) if key[1] else bank
        return self._banks[key]

    def training_synthesizer(self) -> Synthesizer | ComposingSynthesizer:
        """The synthesizer of the train split: mentions drawn afresh every epoch (``seed``, ``replacement``) from
        the training part of the lists, with random mentions and substituted nouns (``substitute_nouns``); the
        ``compose`` share of the documents (drawn every epoch) composed into whole judgments first."""
        recipe = self.recipe
        nouns = NounSubstitution(recipe.substitute_nouns, seed=recipe.seed) if recipe.substitute_nouns else None
        synthesizer = Synthesizer(self.taxonomy, self.bank("train", noise=True), seed=recipe.seed,
                                  replacement=recipe.replacement, head_outside=self.head_outside(),
                                  substitution=nouns)  # fmt: skip
        if recipe.compose == 0:
            return synthesizer
        return ComposingSynthesizer(Composer(self.taxonomy, seed=recipe.seed, share=recipe.compose), synthesizer)

    def synthesizer(self, part: str = "train", head_outside: frozenset[str] | None = None) -> Synthesizer:
        """The synthesizer of every other filling (validation, test, ``thunder evaluate``): one filling (``seed``,
        ``replacement="single"``, epoch 0) from the ``part`` of the lists (``heldout``: the unseen test set);
        ``head_outside`` defaults to the training split's convention."""
        outside = self.head_outside() if head_outside is None else head_outside
        return Synthesizer(self.taxonomy, self.bank(part), seed=self.recipe.seed, replacement="single",
                           head_outside=outside)  # fmt: skip


def with_random_mentions(bank: MentionBank, share: float) -> MentionBank:
    """``bank`` with ``share`` of the mentions of every label replaced by random strings of their shape
    (:class:`thunder.synthesis.names.ShapeNoise`), except structured identifiers (their shape is their pattern)."""
    if not 0 <= share <= 1:
        raise ValueError(f"random_mentions must be in [0, 1], got {share}")
    structured = {f"generator:{name}" for name in CATALOGUE}
    labels = bank.taxonomy.labels if bank.taxonomy is not None else {}
    sources = {
        name: source if name in labels and labels[name].source in structured else ShapeNoise(source, share, name)
        for name, source in bank.sources.items()
    }
    return MentionBank(sources, bank.taxonomy, bank.missing)


def check_inputs(tokenizer: str | None, **paths: str | Sequence[str] | None) -> None:
    """Missing inputs fail when a data module is built, before a Trainer creates any directory."""
    for name, value in paths.items():
        for path in [value] if isinstance(value, str) else value or ():
            if not Path(path).exists():
                raise FileNotFoundError(f"{name} not found: {path}")
    if tokenizer is not None and not (Path(tokenizer) / THUNDER_CONFIG).is_file():
        raise FileNotFoundError(
            f"tokenizer not found: {tokenizer} is not a Thunder tokenizer directory (no {THUNDER_CONFIG};"
            " write one with `thunder tokenizer train`)"
        )
