"""차량번호: current (``12가3456``, ``123가4567``) and older regional (``서울12가3456``) plates."""

from __future__ import annotations

import random
import re

from thunder.identifiers.base import Identifier, PatternRecognizer
from thunder.identifiers.context import MentionContext

NAME = "vehicle_plate"
PLATE_PRIVATE = "가나다라마거너더러머버서어저고노도로모보소오조구누두루무부수우주"
PLATE_COMMERCIAL = "바사아자배"
PLATE_RENTAL = "하허호"
PLATE_REGIONS = (
    "서울", "부산", "대구", "인천", "광주", "대전", "울산", "세종", "경기", "강원", "충북", "충남", "전북", "전남",
    "경북", "경남", "제주",
)  # fmt: skip
_COMMERCIAL_HINT = re.compile(r"택시|화물|버스|택배|영업용|트럭|카고")


class VehiclePlate(PatternRecognizer):
    """Plates with a plate letter (private, commercial or rental class) and, in the older format, a region:
    0.9 with a region, 0.85 after a vehicle word, else 0.8 unless near 법원/사건/판결 words (a case number such
    as ``98노1234`` has the same shape) or the four digits go on as a date or an amount (``공소외 32가 2005. 3월경``:
    a court's mark, its particle and a year)."""

    name = "vehicle_plate"
    identifier = NAME
    REGIONS = "|".join(PLATE_REGIONS)
    LETTERS = PLATE_PRIVATE + PLATE_COMMERCIAL + PLATE_RENTAL
    pattern = re.compile(
        rf"(?<![\d가-힣])(?P<id>(?:(?P<region>{REGIONS})\s?(?:\d{{1,2}})|\d{{2,3}})\s?[{LETTERS}]\s?\d{{4}})(?!\d)"
    )
    context = ("차량", "차량번호", "번호판", "승용차", "화물차", "자동차", "택시", "오토바이", "렌터카")
    CASE_CONTEXT = re.compile(r"(법원|사건|판결|선고|항소|상고|결정|대법)")
    # four digits that go on as a date or a quantity: 공소외 32가 2005. 3월경, 피고인 2가 2019. 3. 1., 1가 1200만 원
    DATE_OR_QUANTITY_AFTER = re.compile(r"\.\s?\d{1,2}\s?[.월]|[년월일만억천원명개건회세%평㎡]")

    def score(self, match: re.Match, text: str) -> float:
        if match.group("region"):
            return 0.9
        start, end = match.span("id")
        if self.near_context(text, match):
            return 0.85
        if self.CASE_CONTEXT.search(text[max(0, start - 20) : start]) or self.CASE_CONTEXT.search(text[end : end + 8]):
            return 0
        if self.DATE_OR_QUANTITY_AFTER.match(text, end):
            return 0
        return 0.8


def generate(rng: random.Random, context: MentionContext) -> str:
    """A plate in the current (``123가4567``, ``12가3456``) or older regional (``서울12가3456``) format."""
    text = " ".join(context.lefts + context.rights)
    if _COMMERCIAL_HINT.search(text):
        letter = rng.choice(PLATE_COMMERCIAL)
    else:
        letter = rng.choice(PLATE_PRIVATE if rng.random() < 0.9 else PLATE_RENTAL)
    style = rng.random()
    if style < 0.45:
        return f"{rng.randint(100, 699)}{letter}{rng.randint(1000, 9999)}"
    if style < 0.8:
        return f"{rng.randint(10, 99)}{letter}{rng.randint(1000, 9999)}"
    return f"{rng.choice(PLATE_REGIONS)}{rng.randint(10, 99)}{letter}{rng.randint(1000, 9999)}"


IDENTIFIER = Identifier(NAME, VehiclePlate, generate)
