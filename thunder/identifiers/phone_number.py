"""전화번호: mobile (``010-1234-5678``), landline with an area code (``02-123-4567``), nationwide (``1588-1234``)."""

from __future__ import annotations

import random
import re

from thunder.identifiers.base import Identifier, PatternRecognizer, fill_digits
from thunder.identifiers.context import MentionContext

NAME = "phone_number"
AREA_CODES = (
    "02", "031", "032", "033", "041", "042", "043", "044", "051", "052", "053", "054", "055", "061", "062",
    "063", "064",
)  # fmt: skip
NATIONWIDE = ("1588", "1577", "1566", "1544", "1600")
_AREA = "(?:" + "|".join(code[1:] for code in AREA_CODES) + "|70|50[2-8])"  # after the leading 0
_PREFIX = r"(?:0|\+82[-. ]?(?:\(0\)[-. ]?)?)"  # the trunk prefix at home, the country code (+82) from abroad


class PhoneNumber(PatternRecognizer):
    """Mobile (``010-1234-5678``, ``01012345678``, ``(010)1234-5678``, ``+82 10 1234 5678``: 0.9, bare digits
    0.8), landline (``02-123-4567``, ``(031) 123-4567``, ``+82 2 123 4567``; separators required: 0.85) and
    nationwide business (``1588-1234``: 0.6, 0.8 after a context word; ``1588 1234`` only after one) numbers.
    A parenthesis is part of a number only around its prefix: ``(02-123-4567)`` keeps both."""

    name = "phone_number"
    identifier = NAME
    pattern = re.compile(
        r"(?<![\d\-.+])(?P<id>"
        rf"(?P<mobile>(?:\({_PREFIX}1[016789]\)[-. ]?|{_PREFIX}1[016789][-. ]?)[\d*]{{3,4}}[-. ]?[\d*]{{4}})"
        rf"|(?P<landline>(?:\({_PREFIX}{_AREA}\) ?|{_PREFIX}{_AREA}[-. ])[\d*]{{3,4}}[-. ][\d*]{{4}})"
        r"|1[5-8]\d{2}[- ]\d{4}"  # nationwide business numbers (1588-1234)
        r")(?![\d\-])"
    )
    context = ("전화", "연락처", "휴대폰", "핸드폰", "고객센터", "대표번호", "콜센터", "번호")

    def score(self, match: re.Match, text: str) -> float:
        if match.group("mobile"):
            return 0.9 if re.search(r"[-. )]", match.group("mobile")) else 0.8
        if match.group("landline"):
            return 0.85
        if self.near_context(text, match):
            return 0.8
        return 0.6 if "-" in match.group("id") else 0


_MOBILE_HINT = re.compile(r"휴대|핸드폰|휴대폰|스마트폰|문자|카카오톡|카톡|메시지")
_SERVICE_HINT = re.compile(r"콜센터|대표번호|고객센터|상담센터")


def generate(rng: random.Random, context: MentionContext) -> str:
    """A mobile (``010-1234-5678``), landline with a real area code, or service (``1588-1234``) number."""
    text = " ".join(context.lefts)
    if _SERVICE_HINT.search(text):
        return fill_digits(rng, rng.choice(NATIONWIDE) + "-####")
    if _MOBILE_HINT.search(text) or rng.random() < 0.7:
        return fill_digits(rng, "010-####-####")
    if rng.random() < 0.1:
        return fill_digits(rng, "070-####-####")
    area = rng.choice(AREA_CODES)
    return f"{area}-{rng.randint(200, 9999) if area == '02' else rng.randint(200, 999)}-{fill_digits(rng, '####')}"


IDENTIFIER = Identifier(NAME, PhoneNumber, generate)
