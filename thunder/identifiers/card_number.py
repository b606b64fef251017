"""신용카드번호: 15-16 digits with an issuer prefix and a Luhn check digit, grouped as printed on cards."""

from __future__ import annotations

import random
import re

from thunder.identifiers.base import Identifier, PatternRecognizer, digits_of, fill_digits
from thunder.identifiers.context import MentionContext

NAME = "card_number"


def luhn_check_digit(payload: str) -> int:
    """The digit that makes ``payload + digit`` pass the Luhn check."""
    total = 0
    for i, char in enumerate(reversed(payload)):
        value = int(char) * (2 if i % 2 == 0 else 1)
        total += value - 9 if value > 9 else value
    return (10 - total % 10) % 10


def luhn_valid(number: str) -> bool:
    """Whether the digits of ``number`` (12 or more) pass the Luhn check."""
    digits = digits_of(number)
    return len(digits) >= 12 and luhn_check_digit(digits[:-1]) == int(digits[-1])


class CardNumber(PatternRecognizer):
    """``NNNN-NNNN-NNNN-NNNN`` (spaces or hyphens, 15-16 digits, ``*`` masks allowed) or 16 bare digits: 0.95
    when the Luhn check holds, 0.6 when masked, 0.5 for grouped digits that fail it (0.7 after a context word);
    bare digits need the check."""

    name = "card_number"
    identifier = NAME
    pattern = re.compile(
        r"(?<![\d\-])(?P<id>\d{4}([- ])[\d*]{4}\2[\d*]{4}\2[\d*]{3,4}|\d{4}([- ])[\d*]{6}\3[\d*]{5}|\d{16})(?![\d\-])"
    )
    context = ("카드", "신용카드", "체크카드", "결제")

    def score(self, match: re.Match, text: str) -> float:
        value = match.group("id")
        if "*" in value:
            return 0.6
        if luhn_valid(value):
            return 0.95
        if not re.search(r"[- ]", value):
            return 0
        return 0.7 if self.near_context(text, match) else 0.5


# (issuer identification number prefixes, length): Visa, Mastercard, Amex, JCB, UnionPay, Korean domestic (BC)
CARD_PREFIXES: tuple[tuple[tuple[str, ...], int], ...] = (
    (("4",), 16),
    (("51", "52", "53", "54", "55", "2221", "2720"), 16),
    (("34", "37"), 15),
    (("3528", "3589"), 16),
    (("62",), 16),
    (("9410", "9420", "9430", "9440"), 16),
)


def generate(rng: random.Random, context: MentionContext) -> str:
    """A card number with a real IIN prefix that passes the Luhn check, grouped as printed on cards."""
    prefixes, length = rng.choices(CARD_PREFIXES, (40, 30, 5, 5, 5, 15))[0]
    payload = rng.choice(prefixes)
    payload += fill_digits(rng, "#" * (length - 1 - len(payload)))
    number = payload + str(luhn_check_digit(payload))
    groups = (4, 6, 5) if length == 15 else (4, 4, 4, 4)
    parts, start = [], 0
    for size in groups:
        parts.append(number[start : start + size])
        start += size
    return "-".join(parts)


IDENTIFIER = Identifier(NAME, CardNumber, generate)
