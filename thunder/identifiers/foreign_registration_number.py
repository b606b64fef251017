"""외국인등록번호 ``YYMMDD-GNNNNNC``: as a resident registration number, with gender digits 5-8 and its own check."""

from __future__ import annotations

import random
import re

from thunder.identifiers.base import Identifier, PatternRecognizer, digits_of
from thunder.identifiers.context import MentionContext, infer_gender
from thunder.identifiers.resident_registration_number import (
    DATE,
    birth_year,
    gender_digit,
    month_day,
    valid_birth_date,
    weighted_sum,
)

NAME = "foreign_registration_number"


def check_digit(first12: str) -> int:
    """Check digit of a foreign registration number from its first 12 digits."""
    return (13 - weighted_sum(first12) % 11) % 10


def check_digit_valid(number: str) -> bool:
    """Whether the 13 digits of ``number`` end with a valid (pre-Oct-2020) check digit."""
    digits = digits_of(number)
    return len(digits) == 13 and check_digit(digits[:12]) == int(digits[12])


class ForeignRegistrationNumber(PatternRecognizer):
    """``YYMMDD-GNNNNNN`` with a valid birth date and gender digit 5-8 (separated by a hyphen, a dot or a space):
    0.95 with a valid check digit, 0.75 without (never rejected: numbers issued since Oct 2020 end in random
    digits); 13 digits without a separator: 0.9 with a valid check digit, 0.6 after a context word, else 0.5 when
    the birth date is a day of the calendar."""

    name = NAME
    identifier = NAME
    pattern = re.compile(rf"(?<![\d\-])(?P<id>{DATE}(?P<separator> ?[-.] ?| )?[5-8]\d{{6}})(?![\d*])")
    context = ("외국인등록번호", "외국인번호", "외국인등록증", "외국인등록")

    def score(self, match: re.Match, text: str) -> float:
        value, separated = match.group("id"), (match.group("separator") or "").strip()
        if check_digit_valid(value):
            return 0.95 if separated else 0.9
        if separated:
            return 0.75
        if self.near_context(text, match):
            return 0.6
        return 0.5 if valid_birth_date(digits_of(value)) else 0


def generate(rng: random.Random, context: MentionContext) -> str:
    """``YYMMDD-GNNNNNC`` with gender digit 5-8 and a valid check digit, consistent with the context."""
    year = birth_year(rng, context)
    gender = infer_gender(context) or rng.choice(("male", "female"))
    month, day = month_day(rng, year)
    body = f"{year % 100:02d}{month:02d}{day:02d}{gender_digit(gender, year, male=5)}{rng.randint(0, 99999):05d}"
    return f"{body[:6]}-{body[6:]}{check_digit(body)}"


IDENTIFIER = Identifier(NAME, ForeignRegistrationNumber, generate)
