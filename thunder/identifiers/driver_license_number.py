"""운전면허번호 ``RR-YY-NNNNNN-CC``: region code (or, on older licences, region name), year, serial, check."""

from __future__ import annotations

import random
import re

from thunder.identifiers.base import Identifier, PatternRecognizer, digits_of, fill_digits
from thunder.identifiers.context import MentionContext

NAME = "driver_license_number"
REGION_CODES = {
    "11": "서울", "12": "부산", "13": "경기", "14": "강원", "15": "충북", "16": "충남", "17": "전북", "18": "전남",
    "19": "경북", "20": "경남", "21": "제주", "22": "대구", "23": "인천", "24": "광주", "25": "대전", "26": "울산",
    "28": "경기북부",
}  # fmt: skip
_REGION_NAMES = "|".join(sorted(REGION_CODES.values(), key=len, reverse=True))


class DriverLicenseNumber(PatternRecognizer):
    """``11-12-345678-90`` with a known region code (0.85, 0.95 after a context word) or ``서울 12-345678-90``
    (0.9, 0.95 after one); 12 bare digits need a known region code and a context word (0.8)."""

    name = NAME
    identifier = NAME
    pattern = re.compile(
        rf"(?<![\d가-힣\-])(?P<id>(?:(?P<region>{_REGION_NAMES})\s?|\d{{2}}[- ]?)"  # region name or code
        r"\d{2}[- ]?\d{6}[- ]?\d{2})(?![\d\-])"  # year, serial, check
    )
    context = ("운전면허", "면허번호", "운전면허번호", "면허증")

    def score(self, match: re.Match, text: str) -> float:
        value, has_context = match.group("id"), self.near_context(text, match)
        if match.group("region"):
            return 0.95 if has_context else 0.9
        if digits_of(value)[:2] not in REGION_CODES:
            return 0
        if not re.search(r"[- ]", value):
            return 0.8 if has_context else 0
        return 0.95 if has_context else 0.85


def generate(rng: random.Random, context: MentionContext) -> str:
    """A licence of the region named before it (else any): ``RR-YY-NNNNNN-CC``, 15% in the older regional form."""
    text = " ".join(left[-30:] for left in context.lefts)
    named = [code for code, region in REGION_CODES.items() if region in text]
    code = named[-1] if named else rng.choice(tuple(REGION_CODES))
    year = f"{rng.choice((rng.randint(0, 24), rng.randint(80, 99))):02d}"
    tail = fill_digits(rng, "######-##")
    return f"{REGION_CODES[code]} {year}-{tail}" if rng.random() < 0.15 else f"{code}-{year}-{tail}"


IDENTIFIER = Identifier(NAME, DriverLicenseNumber, generate)
