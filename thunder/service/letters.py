"""Letters that stay put while a judgment is reviewed: ``/v1/apply`` takes the letters the review page shows, and
re-applying gives every entity it names the same letter again; a new entity takes the next free letter after all of
them (in order of appearance, skipping what the pipeline skips: capitals of a detected text, letters standing alone
in the text). The pipeline's operators make the replacements, so particles agree with the kept letters
(``홍길동이`` -> ``F가``, ``L이``)."""

from __future__ import annotations

import copy
import string
from dataclasses import replace
from typing import Iterable, Sequence

from thunder.deid.operators import Entity, Operator, OperatorChoice, entity_key
from thunder.deid.overlaps import REVIEWER
from thunder.deid.pipeline import _STANDING_LETTERS, Deidentifier, DeidResult
from thunder.deid.recognizers.registry import ScoredSpan
from thunder.documents.annotation import placeholder_sequence


def _rank(letter: str) -> tuple[int, str]:
    """A letter's place in the sequence A, ..., Z, AA, ...: shorter first, then alphabetical."""
    return len(letter), letter


class _Lettered(Operator):
    """``operator`` making its replacement with the entity's letter set to ``letter``."""

    name = "lettered"

    def __init__(self, operator: Operator, letter: str) -> None:
        self.operator, self.letter = operator, letter

    def replace(self, entity: Entity, mention: str) -> str:
        return self.operator.replace(replace(entity, placeholder=self.letter), mention)


class KeptLetters:
    """The operators of ``choice``, each entity with its kept letter (``kept``: entity key -> letter) or, for an
    entity without one, the next free letter after every kept one; ``letters`` is every entity's letter so far."""

    def __init__(self, choice: OperatorChoice, text: str, kept: dict[str, str]) -> None:
        self.choice, self.letters = choice, dict(kept)
        self.standing = set(_STANDING_LETTERS.findall(text))  # placeholders of an earlier, partial de-identification
        self.last = max(kept.values(), key=_rank, default="")

    def __call__(self, entity: Entity) -> Operator:
        if entity.key not in self.letters:
            self.letters[entity.key] = self._next(entity.avoid)
        return _Lettered(self.choice(entity), self.letters[entity.key])

    def _next(self, keys: Iterable[str]) -> str:
        used = {c for key in keys for c in key}
        alphabet = "".join(c for c in string.ascii_uppercase if c not in used) or string.ascii_uppercase
        taken = set(self.letters.values())
        self.last = next(letter for letter in placeholder_sequence(alphabet)
                         if _rank(letter) > _rank(self.last) and letter not in self.standing | taken)  # fmt: skip
        return self.last


def kept_letters(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Entity key -> letter from ``(text, letter)`` pairs; the first pair wins a key or a letter claimed twice."""
    kept: dict[str, str] = {}
    for text, letter in pairs:
        key = entity_key(text)
        if key and key not in kept and letter not in kept.values():
            kept[key] = letter
    return kept


def apply_keeping_letters(deidentifier: Deidentifier, text: str, spans: list[ScoredSpan], kept: dict[str, str],
                          rejected: Sequence[tuple[int, int]] = ()) -> DeidResult:  # fmt: skip
    """:meth:`Deidentifier.apply` with the entities of ``kept`` keeping their letters (in the text and the spans) and
    the ``rejected`` ranges as written. A reviewer's span keeps the bounds the reviewer gave it: no longer text
    spreads over it (``홍길동`` shrunk to ``홍길`` at one place stays ``홍길`` there, its ``동`` kept)."""
    variant = copy.copy(deidentifier)
    variant.operators = letters = KeptLetters(deidentifier.operators, text, kept)
    bounded = [(span.start, span.end) for span in spans if span.source == REVIEWER]
    result = variant.apply(text, spans, rejected=[*rejected, *bounded])
    detected = tuple(replace(span, placeholder=letters.letters[entity_key(span.text)]) for span in result.spans)
    return replace(result, spans=detected)
