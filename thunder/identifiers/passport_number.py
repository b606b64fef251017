"""여권번호: a type letter, then 8 digits (before Dec 2021) or 3 digits, a letter and 4 digits; no check digit."""

from __future__ import annotations

import random
import re

from thunder.identifiers.base import Identifier, PatternRecognizer, fill_digits
from thunder.identifiers.context import MentionContext

NAME = "passport_number"
TYPES = "MSROD"  # M multiple, S single, R residence, O official, D diplomatic
_TYPE_HINTS = (("외교", "D"), ("관용", "O"), ("단수", "S"), ("거주", "R"))


class PassportNumber(PatternRecognizer):
    """``M123A4567`` (0.75, 0.9 after a context word) and ``M12345678`` (0.5, 0.85 after a context word); written
    in lower case or with a space after the type letter (``m12345678``, ``M 12345678``) only after a context word
    (0.8)."""

    name = NAME
    identifier = NAME
    pattern = re.compile(
        rf"(?<![A-Za-z0-9])(?P<id>(?i:[{TYPES}]) ?(?:(?P<current>\d{{3}}[A-Za-z]\d{{4}})|\d{{8}}))(?![A-Za-z0-9])"
    )
    context = ("여권", "여권번호", "passport", "Passport", "PASSPORT")

    def score(self, match: re.Match, text: str) -> float:
        has_context = self.near_context(text, match)
        value = match.group("id")
        if value != value.upper() or " " in value:
            return 0.8 if has_context else 0
        if match.group("current"):
            return 0.9 if has_context else 0.75
        return 0.85 if has_context else 0.5


def generate(rng: random.Random, context: MentionContext) -> str:
    """A passport number of the type the context names (외교관 -> D, ...), else mostly M; 60% current format."""
    text = " ".join(context.lefts)
    kind = next((letter for word, letter in _TYPE_HINTS if word in text), None) or rng.choice("MMMMMMMMMS")
    if rng.random() < 0.6:
        return kind + fill_digits(rng, "###") + rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") + fill_digits(rng, "####")
    return kind + fill_digits(rng, "########")


IDENTIFIER = Identifier(NAME, PassportNumber, generate)
