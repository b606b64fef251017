"""Replacement operators: what a detected entity becomes in the de-identified text.

The pipeline (:mod:`thunder.deid.pipeline`) groups the spans of a document into :class:`Entity` objects (same normalised
text = same entity) and gives each the next placeholder letter (A, B, ..., Z, AA, AB, ...). An :class:`Operator`
then turns each mention into its replacement:

- :class:`PlaceholderOperator` (``placeholder``): the entity's letter, as in the published judgments.
- :class:`TagOperator` (``tag``): the label in brackets, ``[내국인이름]``.
- :class:`MaskOperator` (``mask``): ``*`` for every character of the mention, or a fixed-length mask.
- :class:`SurrogateOperator` (``surrogate``): a realistic replacement sampled from the synthesis generators and
  mention lists (pseudonymisation), the same for every mention of an entity.

Users add their own by subclassing :class:`Operator` and passing an instance or a ``module.Class`` path.
"""

from __future__ import annotations

import itertools
import random
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, Iterable, Mapping, Sequence, Union

from thunder.identifiers.normalize import normal_text
from thunder.language.regions import address_key
from thunder.plugins import load_part

_SPACE = re.compile(r"\s+")


def entity_key(text: str) -> str:
    """Normalised entity text: whitespace-insensitive (``홍 길동`` and ``홍길동`` are one entity), as the recognizers read
    it (:func:`thunder.identifiers.normalize.normal_text`: full-width forms, invisible characters, character
    references), and an address's leading province in its full name (``서울시 강남구 …``, ``서울 강남구 …`` ->
    ``서울특별시강남구…``; :func:`thunder.language.regions.address_key`)."""
    return address_key(_SPACE.sub("", normal_text(text)))


@dataclass(frozen=True)
class Entity:
    """One entity of a document: every mention whose normalised text (:func:`entity_key`) is ``key``."""

    key: str
    placeholder: str  # the entity's letter in the document (A, B, ...)
    label: str
    mentions: tuple[str, ...]
    contexts: tuple[tuple[str, str], ...] = ()  # (left, right) text around each mention
    avoid: frozenset[str] = frozenset()  # normalised texts of every entity in the document
    category: str | None = None
    tier1: str | None = None


class Operator(ABC):
    """Turns one mention of an entity into its replacement text."""

    name: ClassVar[str]

    @abstractmethod
    def replace(self, entity: Entity, mention: str) -> str:
        """Replacement for ``mention`` (one surface form of ``entity``)."""


class PlaceholderOperator(Operator):
    """The entity's placeholder letter (``A``, ``B``, ...)."""

    name = "placeholder"

    def replace(self, entity: Entity, mention: str) -> str:
        return entity.placeholder


class TagOperator(Operator):
    """The entity's label in a template, ``[내국인이름]`` by default."""

    name = "tag"

    def __init__(self, template: str = "[{label}]") -> None:
        self.template = template

    def replace(self, entity: Entity, mention: str) -> str:
        return self.template.format(label=entity.label, placeholder=entity.placeholder)


MASK_FALLBACKS = "#●■×"  # mask characters used, in this order, when the chosen one occurs in a detected text


def mask_character(preferred: str, texts: Iterable[str]) -> str:
    """``preferred``, else the first of :data:`MASK_FALLBACKS` (else of the private use area), that no text in
    ``texts`` holds: a mask then never rebuilds a detected text (``*`` would rebuild ``900101-1******`` beside
    ``900101-1`` followed by another masked mention)."""
    used = set().union(*map(set, texts))
    candidates = itertools.chain(preferred + MASK_FALLBACKS, map(chr, range(0xE000, 0xF900)))
    return next(char for char in candidates if char not in used)


@lru_cache(maxsize=16)
def _document_mask(preferred: str, texts: frozenset[str]) -> str:
    """:func:`mask_character` of one document's detected texts, found once for all its mentions."""
    return mask_character(preferred, texts)


class MaskOperator(Operator):
    """``char`` for every non-space character of the mention (spaces kept), or ``length`` characters when set.

    When a detected text of the document holds ``char`` (an already masked ``900101-1******``), the document is
    masked with the first character no detected text holds (:func:`mask_character`: ``#``, ``●``, ...).
    """

    name = "mask"

    def __init__(self, char: str = "*", length: int | None = None) -> None:
        if len(char) != 1:
            raise ValueError(f"mask char must be one character, got {char!r}")
        if length is not None and length < 1:
            raise ValueError(f"mask length must be positive, got {length}")
        self.char, self.length = char, length

    def replace(self, entity: Entity, mention: str) -> str:
        char = _document_mask(self.char, entity.avoid)
        if self.length is not None:
            return char * self.length
        return "".join(c if c.isspace() else char for c in mention)


class SurrogateOperator(Operator):
    """A realistic surrogate per entity (pseudonymisation) from a :class:`thunder.synthesis.mentions.MentionBank`.

    Each label draws from its generator (``generator:<name>`` in the taxonomy) or its mention list under
    ``mention_dirs`` (default: the packaged demo lists); a label with neither gets ``fallback`` (a template like
    :class:`TagOperator`'s). The draw is seeded by ``(seed, label, entity text)``, so every mention of an entity,
    in any process, gets the same surrogate; one that contains, or is contained in, the text of any entity of
    the document is drawn again.
    """

    name = "surrogate"

    def __init__(
        self,
        seed: int = 0,
        mention_dirs: Sequence[str | Path] | None = None,
        taxonomy: Any = None,
        fallback: str = "[{label}]",
    ) -> None:
        """
        Args:
            seed: seed of the draws (with the label and the entity text).
            mention_dirs: the user's mention lists (default: the packaged demo lists).
            taxonomy: a taxonomy file or :class:`~thunder.taxonomy.Taxonomy` (the de-identifier passes the model's).
            fallback: replacement for a label with no generator or list (``{label}``, ``{placeholder}``).
        """
        from thunder.synthesis.mentions import DEMO_MENTIONS, MentionBank
        from thunder.taxonomy import Taxonomy

        self.seed, self.fallback = seed, fallback
        dirs = [DEMO_MENTIONS] if mention_dirs is None else list(mention_dirs)
        self.bank = MentionBank.from_dirs(taxonomy if isinstance(taxonomy, Taxonomy) else Taxonomy.load(taxonomy), dirs)

    def replace(self, entity: Entity, mention: str) -> str:
        from thunder.seeds import stable_seed
        from thunder.synthesis.mentions import MentionContext

        rng = random.Random(stable_seed(self.seed, entity.label, entity.key))
        context = MentionContext(label=entity.label, occurrences=tuple(entity.contexts))
        for _ in range(20):
            try:
                value = self.bank.sample(entity.label, rng, context)
            except LookupError:  # MentionError: the label has no source
                break
            key = entity_key(value)
            if key and not any(text in key or key in text for text in entity.avoid if text):
                return value
        return self.fallback.format(label=entity.label, placeholder=entity.placeholder)


OPERATORS: dict[str, type[Operator]] = {
    cls.name: cls for cls in (PlaceholderOperator, TagOperator, MaskOperator, SurrogateOperator)
}


OperatorSpec = Union[str, dict, Operator]


def load_operator(spec: OperatorSpec, taxonomy: Any = None, **init_args) -> Operator:
    """An operator from a name in :data:`OPERATORS`, a ``module.Class`` path, a ``{"class_path", "init_args"}``
    dict, or an instance (:func:`thunder.plugins.load_part`). A class that takes ``taxonomy`` gets ``taxonomy``
    unless its init_args set one."""
    return load_part(spec, "operator", Operator, OPERATORS, init_args, context={"taxonomy": taxonomy})


class OperatorChoice:
    """The operator of each entity: the one set for its label, else its category, else its tier 1 (``direct`` /
    ``quasi``), else ``default``. ``by`` maps those names to operator specs (YAML: ``{주소: mask, direct: ...}``)."""

    def __init__(
        self, default: OperatorSpec = "placeholder", by: Mapping[str, OperatorSpec] | None = None, taxonomy: Any = None
    ) -> None:
        self.default = load_operator(default, taxonomy)
        self.by = {str(key): load_operator(spec, taxonomy) for key, spec in (by or {}).items()}

    def check(self, labels: Iterable[str], categories: Iterable[str], tiers: Iterable[str]) -> None:
        """Refuse a key that names no label, category or tier 1 of the taxonomy in use."""
        known = set(labels) | set(categories) | set(tiers)
        unknown = sorted(set(self.by) - known)
        if unknown:
            raise ValueError(f"operators: {unknown} name no label, category or tier 1 (direct, quasi) of the taxonomy")

    def __call__(self, entity: Entity) -> Operator:
        for key in (entity.label, entity.category, entity.tier1):
            if key is not None and key in self.by:
                return self.by[key]
        return self.default
