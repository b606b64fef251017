"""주민등록번호 ``YYMMDD-GNNNNNC``: birth date, gender/century digit, serial, check digit (none since Oct 2020)."""

from __future__ import annotations

import random
import re

from thunder.identifiers.base import Identifier, PatternRecognizer, digits_of
from thunder.identifiers.context import MentionContext, infer_birth_year, infer_gender

NAME = "resident_number"
WEIGHTS = (2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5)
KOREAN_GENDER_DIGITS = "1234"  # 1/2: born 1900-1999, 3/4: 2000 or later (odd: male); 5-8 are foreigners'
DATE = r"\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])"
_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
RANDOM_TAIL_SHARE = 0.1  # generated numbers issued (or re-issued) since Oct 2020: a random last digit, no check digit


def weighted_sum(first12: str) -> int:
    """The weighted digit sum behind the check digits of resident and foreign registration numbers."""
    return sum(int(d) * w for d, w in zip(first12, WEIGHTS))


def check_digit(first12: str) -> int:
    """Check digit of a resident registration number from its first 12 digits."""
    return (11 - weighted_sum(first12) % 11) % 10


def check_digit_valid(number: str) -> bool:
    """Whether the 13 digits of ``number`` end with a valid (pre-Oct-2020) check digit."""
    digits = digits_of(number)
    return len(digits) == 13 and check_digit(digits[:12]) == int(digits[12])


def valid_birth_date(digits: str) -> bool:
    """Whether ``YYMMDDG`` (birth date and gender/century digit) names a day of the calendar."""
    century = {"9": 1800, "0": 1800, "1": 1900, "2": 1900, "5": 1900, "6": 1900}.get(digits[6], 2000)
    year, month, day = century + int(digits[:2]), int(digits[2:4]), int(digits[4:6])
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return 1 <= month <= 12 and 1 <= day <= _DAYS_IN_MONTH[month - 1] + (month == 2 and leap)


class ResidentRegistrationNumber(PatternRecognizer):
    """``YYMMDD-GNNNNNN`` with a valid birth date (separated by a hyphen, a dot or a space, or not at all; the tail
    may be masked with ``*``, gender digit included).

    The check digit raises confidence and never rejects (numbers issued since Oct 2020 end in random digits):
    0.95 with a valid one, 0.7 without, 0.6 when partly masked, 0.5 with a foreigner's or 19th-century gender
    digit. 13 digits without a separator: 0.9 with a valid check digit, 0.6 after a context word, else 0.5 when
    the birth date is a day of the calendar and the gender digit a Korean's (a failing check digit proves
    nothing since Oct 2020; other shapes of 13 digits are left to the account recognizer).
    """

    name = "resident_registration_number"
    identifier = NAME
    pattern = re.compile(rf"(?<![\d\-])(?P<id>{DATE}(?P<separator> ?[-.] ?| )?[\d*][\d*]{{6}})(?![\d*])")
    context = ("주민등록번호", "주민번호", "주민등록", "생년월일")

    def score(self, match: re.Match, text: str) -> float:
        value = match.group("id")
        if "*" in value:
            return 0.6
        digits = digits_of(value)
        korean, valid = digits[6] in KOREAN_GENDER_DIGITS, check_digit_valid(value)
        if not (match.group("separator") or "").strip():
            if valid:
                return 0.9 if korean else 0.5
            if self.near_context(text, match):
                return 0.6
            return 0.5 if korean and valid_birth_date(digits) else 0
        if not korean:
            return 0.5
        return 0.95 if valid else 0.7


def birth_year(rng: random.Random, context: MentionContext) -> int:
    """A birth year: the one the context gives (``1990년생``, ``(남, 29세)``), else 1950-2004."""
    return min(max(infer_birth_year(context) or rng.randint(1950, 2004), 1900), 2099)


def month_day(rng: random.Random, year: int) -> tuple[int, int]:
    """A valid (month, day) of ``year``."""
    month = rng.randint(1, 12)
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return month, rng.randint(1, _DAYS_IN_MONTH[month - 1] + (1 if month == 2 and leap else 0))


def gender_digit(gender: str, year: int, male: int = 1) -> int:
    """The gender/century digit: ``male`` or ``male + 1`` (female), plus 2 for births from 2000."""
    return male + (gender == "female") + (2 if year >= 2000 else 0)


def generate(rng: random.Random, context: MentionContext) -> str:
    """``YYMMDD-GNNNNNC``: a valid date and the gender/century digit consistent with the context; the check digit,
    except for :data:`RANDOM_TAIL_SHARE` of the numbers (a random last digit), so that no model learns to trust it."""
    year = birth_year(rng, context)
    gender = infer_gender(context) or rng.choice(("male", "female"))
    month, day = month_day(rng, year)
    body = f"{year % 100:02d}{month:02d}{day:02d}{gender_digit(gender, year)}{rng.randint(0, 99999):05d}"
    last = rng.randint(0, 9) if rng.random() < RANDOM_TAIL_SHARE else check_digit(body)
    return f"{body[:6]}-{body[6:]}{last}"


IDENTIFIER = Identifier(NAME, ResidentRegistrationNumber, generate)
