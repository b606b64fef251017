"""사업자등록번호 ``AAA-BB-CCCCC``: tax office, business type, serial and a check digit."""

from __future__ import annotations

import random
import re

from thunder.identifiers.base import Identifier, PatternRecognizer, digits_of, followed_by_amount
from thunder.identifiers.context import MentionContext

NAME = "business_registration_number"
KEYS = (1, 3, 7, 1, 3, 7, 1, 3, 5)
CORPORATE_TYPES = ("81", "86", "87", "88")  # for-profit corporations; 01-79: individuals
_CORPORATE_HINT = re.compile(r"법인|주식회사|\(주\)|㈜|유한회사|회사")


def check_digit(first9: str) -> int:
    """Check digit of a business registration number from its first 9 digits."""
    digits = [int(d) for d in first9]
    total = sum(k * d for k, d in zip(KEYS[:8], digits)) + digits[8] * KEYS[8] + digits[8] * KEYS[8] // 10
    return (10 - total % 10) % 10


def check_digit_valid(number: str) -> bool:
    """Whether the 10 digits of ``number`` end with a valid check digit."""
    digits = digits_of(number)
    return len(digits) == 10 and check_digit(digits[:9]) == int(digits[9])


class BusinessRegistrationNumber(PatternRecognizer):
    """``AAA-BB-CCCCC``: 0.95 with a valid check digit after a context word, 0.8 without the word, 0.6 with the
    word and a wrong check digit. 10 digits without hyphens (bare or ``AAA BB CCCCC``) need the context word: 0.85
    with a valid check digit, 0.6 without; never an amount. Other ``3-2-5`` numbers are left to the account
    recognizer."""

    name = NAME
    identifier = NAME
    pattern = re.compile(r"(?<![\d\-])(?P<id>\d{3}-\d{2}-\d{5}|\d{10}|(?<!\d )\d{3} \d{2} \d{5}(?! \d))(?![\d\-])")
    context = ("사업자등록번호", "사업자번호", "사업자")

    def score(self, match: re.Match, text: str) -> float:
        value = match.group("id")
        valid, has_context = check_digit_valid(value), self.near_context(text, match)
        if "-" not in value:
            if not has_context or followed_by_amount(text, match):
                return 0
            return 0.85 if valid else 0.6
        if valid:
            return 0.95 if has_context else 0.8
        return 0.6 if has_context else 0


def generate(rng: random.Random, context: MentionContext) -> str:
    """``AAA-BB-CCCCC`` with a corporate type code where the context names a company, and a valid check digit."""
    corporate = any(_CORPORATE_HINT.search(left[-20:]) for left in context.lefts)
    kind = rng.choice(CORPORATE_TYPES) if corporate else f"{rng.randint(1, 79):02d}"
    body = f"{rng.randint(101, 799)}{kind}{rng.randint(0, 9999):04d}"
    return f"{body[:3]}-{body[3:5]}-{body[5:]}{check_digit(body)}"


IDENTIFIER = Identifier(NAME, BusinessRegistrationNumber, generate)
