"""Fills whose shape the corpus dictates: place numbers (building 동, room 호, floor 층, ...), bus routes, and
the labels that the corpus fills with places of another kind (crime scenes are businesses).

A number is written with its unit (``1203호``) unless the text after the placeholder already has it
(``<<<호>>>C<<</호>>>호``), as the judgments do.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from thunder.identifiers.context import MentionContext

__all__ = ["PLACE_NUMBERS", "POOLED_PLACES", "PlaceNumber", "bus_route"]

_BUSINESSES = (
    ("사업체", "외식업"), ("사업체", "유흥업"), ("사업체", "숙박업"), ("사업체", "오락및스포츠"),
    ("사업체", "미용욕탕신체관리서비스"), ("사업체", "도소매및유통"), ("기관및시설", "상업시설"),
)  # fmt: skip
# labels without a list of their own, filled from the pooled lists of these (category, subcategory) folders
POOLED_PLACES: dict[str, tuple[tuple[str, str], ...]] = {
    "폭행장소": _BUSINESSES,
    "추행장소": _BUSINESSES,
    "사기장소": (*_BUSINESSES, ("사업체", "서비스일반"), ("사업체", "부동산중개및임대매매")),
}


def _unit_written(context: MentionContext, unit: str) -> bool:
    """Whether the text after every occurrence already writes the unit (``호`` after ``<<<호>>>C<<</호>>>``)."""
    return bool(context.rights) and all(right.lstrip().startswith(unit) for right in context.rights)


def _room(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.75:  # apartments and offices: floor + unit
        return f"{rng.randint(1, 25)}{rng.randint(1, 8):02d}"
    if roll < 0.95:  # villas, motels, karaoke rooms
        return str(rng.randint(1, 30) if roll < 0.85 else rng.randint(101, 405))
    return f"B{rng.randint(1, 3):02d}"


def _building(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.8:
        return str(rng.randint(101, 125))
    if roll < 0.92:
        return str(rng.randint(1, 20))
    return rng.choice("가나다라ABCD")


def _floor(rng: random.Random) -> str:
    return str(rng.randint(1, 25)) if rng.random() < 0.9 else f"지하 {rng.randint(1, 4)}"


def _number(rng: random.Random) -> str:
    return str(rng.choices((rng.randint(1, 12), rng.randint(13, 99)), (85, 15))[0])


_SHAPES = {"room": _room, "building": _building, "floor": _floor, "number": _number}


@dataclass(frozen=True)
class PlaceNumber:
    """A place number of one ``shape`` (room, building, floor, number) with its ``unit`` unless the text has it;
    a picklable ``MentionSource``."""

    shape: str
    unit: str

    def sample(self, rng: random.Random, context: MentionContext) -> str:
        value = _SHAPES[self.shape](rng)
        return value if _unit_written(context, self.unit) else value + self.unit


# numbering labels without a list of their own
PLACE_NUMBERS: dict[str, PlaceNumber] = {
    "동": PlaceNumber("building", "동"),
    "호": PlaceNumber("room", "호"),
    "호실": PlaceNumber("room", "호"),
    "층": PlaceNumber("floor", "층"),
    "번호": PlaceNumber("number", "번"),
}


def bus_route(rng: random.Random, context: MentionContext) -> str:
    """A bus route number (``7016번``, ``M6117``, ``5-1번``); ``번`` unless the text writes it."""
    roll = rng.random()
    if roll < 0.5:
        route = str(rng.randint(100, 799) if roll < 0.3 else rng.randint(1000, 9800))
    elif roll < 0.7:
        route = str(rng.randint(1, 99))
    elif roll < 0.85:
        route = f"{rng.randint(1, 30)}-{rng.randint(1, 9)}"
    else:
        route = f"{rng.choice('MGN')}{rng.randint(4000, 7999)}" if roll < 0.95 else f"좌석 {rng.randint(1, 999)}"
    return route if _unit_written(context, "번") or route[0] in "MGN" else route + "번"
