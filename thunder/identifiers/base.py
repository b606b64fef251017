"""What a structured identifier is made of: a recognizer (pattern, context words, validator, score) and a generator."""

from __future__ import annotations

import random
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, ClassVar

from thunder.identifiers.context import MentionContext
from thunder.identifiers.normalize import normal_view
from thunder.taxonomy import Label, Taxonomy


@dataclass(frozen=True)
class ScoredSpan:
    """A labelled character span ``[start, end)`` with a confidence in ``(0, 1]``, from a recognizer or the model."""

    start: int
    end: int
    label: str
    score: float
    source: str  # recognizer name or "model"
    category: str | None = None
    tier1: str | None = None
    origin: tuple[int, int] | None = None  # a propagated span: the span whose text it repeats


class Recognizer(ABC):
    """Finds one kind of identifier in raw text."""

    name: ClassVar[str]
    label: str
    category: str | None = None
    tier1: str | None = "direct"

    @abstractmethod
    def find(self, text: str) -> list[ScoredSpan]:
        """All spans of this identifier in ``text``."""


@lru_cache(maxsize=1)
def packaged_taxonomy() -> Taxonomy:
    """The packaged default taxonomy (read once per process)."""
    return Taxonomy.load()


class PatternRecognizer(Recognizer):
    """A regular expression, context words and a ``score(match, text)`` hook; a score of 0 rejects the match.

    Pattern and score read the normalised view of the text (ASCII digits, letters, ``-`` and spaces wherever the
    text writes their full-width, dash, space or invisible variants); spans are reported in the original text.

    The label comes from ``label`` (argument, else class attribute) or from the taxonomy: the label whose
    ``source`` is ``generator:<identifier>`` (else ``generator:<one of fallback_identifiers>``) in ``taxonomy``,
    else in the packaged one. Category and tier 1 are the label's in that taxonomy.
    """

    identifier: ClassVar[str | None] = None  # the generator name that taxonomy labels name in `source`
    # generators whose label is emitted when no label names `identifier` (an IP address is a URL's kind of address)
    fallback_identifiers: ClassVar[tuple[str, ...]] = ()
    pattern: ClassVar[re.Pattern]
    context: ClassVar[tuple[str, ...]] = ()  # words that, shortly before a match, make it likelier
    context_chars: ClassVar[int] = 25
    base_score: ClassVar[float] = 0.85

    def __init__(self, label: str | None = None, taxonomy: Taxonomy | None = None) -> None:
        label = label or getattr(type(self), "label", None)
        found = _label_of(self, label, taxonomy)
        self.label = found.name if found else label
        if found is not None:
            self.category, self.tier1 = found.category, found.tier1

    def score(self, match: re.Match, text: str) -> float:
        """Confidence for one match of the normalised ``text`` (0 rejects it)."""
        return self.base_score

    def near_context(self, text: str, match: re.Match) -> bool:
        """Whether one of the :attr:`context` words occurs in the ``context_chars`` characters before the match."""
        start = match.start("id") if "id" in match.re.groupindex else match.start()
        before = text[max(0, start - self.context_chars) : start]
        return any(word in before for word in self.context)

    def find(self, text: str) -> list[ScoredSpan]:
        """Matches in the normalised view of ``text`` (:mod:`thunder.identifiers.normalize`: full-width forms, dash
        and space variants, invisible characters), as spans of the original characters."""
        view = normal_view(text)
        spans = []
        for match in self.pattern.finditer(view.text):
            start, end = match.span("id") if "id" in self.pattern.groupindex else match.span()
            score = self.score(match, view.text)
            if score > 0 and end > start:
                start, end = view.original_span(start, end)
                spans.append(ScoredSpan(start, end, self.label, score, self.name, self.category, self.tier1))
        return spans


def _label_of(recognizer: PatternRecognizer, label: str | None, taxonomy: Taxonomy | None) -> Label | None:
    """The taxonomy label a recognizer emits (``None``: a given label that no taxonomy knows)."""
    taxonomies = [t for t in (taxonomy, packaged_taxonomy()) if t is not None]
    sources = (recognizer.identifier, *recognizer.fallback_identifiers) if recognizer.identifier else ()
    for candidate in taxonomies:
        if label is not None and label in candidate.labels:
            return candidate.labels[label]
        if label is None:
            filled = [found for source in sources for found in candidate.filled_by(source)]
            if filled:
                return filled[0]
    if label is None:
        names = ", ".join(dict.fromkeys(t.name for t in taxonomies))
        raise ValueError(
            f"recognizer {recognizer.name!r}: no label of taxonomy {names} has source "
            f"'generator:{recognizer.identifier}'; give it a `label`"
        )
    return None


@dataclass(frozen=True)
class Identifier:
    """One catalogue entry: the generator name taxonomies use, its recognizer (if it has a pattern) and generator."""

    name: str  # taxonomy labels say `source: "generator:<name>"`
    recognizer: type[PatternRecognizer] | None
    generate: Callable[[random.Random, MentionContext], str]


AMOUNT_UNITS = ("원", "만", "억", "천", "달러")


def followed_by_amount(text: str, match: re.Match) -> bool:
    """Whether a unit of money (원, 만, 억, ...) follows the match: a number, not an identifier."""
    return text[match.end("id") : match.end("id") + 10].lstrip().startswith(AMOUNT_UNITS)


def digits_of(value: str) -> str:
    """The digits of ``value``."""
    return re.sub(r"\D", "", value)


def fill_digits(rng: random.Random, pattern: str) -> str:
    """``pattern`` with every ``#`` replaced by a random digit."""
    return "".join(str(rng.randrange(10)) if c == "#" else c for c in pattern)
