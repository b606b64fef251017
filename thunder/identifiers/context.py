"""What generators read around an entity: :class:`MentionContext`, and the gender and birth year it suggests."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class MentionContext:
    """The label and the text (left, right) around every occurrence of one entity (~40 characters)."""

    label: str
    occurrences: tuple[tuple[str, str], ...] = ()

    @property
    def lefts(self) -> tuple[str, ...]:
        return tuple(left for left, _ in self.occurrences)

    @property
    def rights(self) -> tuple[str, ...]:
        return tuple(right for _, right in self.occurrences)


_FEMALE_WORDS = (
    "아내", "처", "부인", "여자친구", "여자 친구", "여동생", "누나", "언니", "어머니", "모친", "딸", "며느리", "할머니",
    "여성", "여학생", "여직원", "여종업원", "여사", "이모", "고모", "장모", "시어머니", "손녀", "조카딸", "여친",
)  # fmt: skip
_MALE_WORDS = (
    "남편", "남자친구", "남자 친구", "남동생", "형", "오빠", "아버지", "부친", "아들", "사위", "할아버지", "남성",
    "남학생", "남직원", "삼촌", "외삼촌", "장인", "시아버지", "손자", "남친",
)  # fmt: skip
_PARENTHESIS = re.compile(r"\s*[(\[]([^()\[\]]{1,30})[)\]]")  # "(남, 29세)" right after a mention
_GENDER_WORDS = {"남": "male", "남자": "male", "남성": "male", "여": "female", "여자": "female", "여성": "female"}
_GENDER_BEFORE = re.compile(
    r"(" + "|".join(sorted(_FEMALE_WORDS + _MALE_WORDS, key=len, reverse=True)) + r")(?:인|이자|[ ]?피해자)?\s*$"
)
_BIRTH_YEAR = re.compile(r"((?:19|20)\d\d)\s*년\s*(?:생|\d{1,2}\s*월)|((?:19|20)\d\d)\.\s*\d{1,2}\.\s*\d{1,2}\.?\s*생")
_AGE = re.compile(r"(?:만\s*)?(\d{1,3})\s*세")
REFERENCE_YEAR = 2021  # judgments of the corpus: ages in them are read relative to this year


def infer_gender(context: MentionContext) -> str | None:
    """``"male"``, ``"female"`` or ``None`` from ``(남, 29세)`` after, or 아내/남편-like words before, a mention."""
    votes = {"male": 0, "female": 0}
    for left, right in context.occurrences:
        match = _PARENTHESIS.match(right)
        words = re.split(r"[\s,·/]+", match.group(1)) if match else ()
        gender = next((_GENDER_WORDS[w] for w in words if w in _GENDER_WORDS), None)
        if gender:
            votes[gender] += 2
            continue
        match = _GENDER_BEFORE.search(left[-16:])
        if match:
            votes["female" if match.group(1) in _FEMALE_WORDS else "male"] += 1
    if votes["male"] == votes["female"]:
        return None
    return max(votes, key=votes.__getitem__)


def infer_birth_year(context: MentionContext) -> int | None:
    """A birth year from ``1990년생`` / ``1990. 3. 1.생`` or an age ``(남, 29세)`` right after a mention."""
    for _, right in context.occurrences:
        parenthesis = _PARENTHESIS.match(right)
        if not parenthesis:
            continue
        head = parenthesis.group(1)
        match = _BIRTH_YEAR.search(head)
        if match:
            return int(match.group(1) or match.group(2))
        match = _AGE.search(head)
        if match and 0 < int(match.group(1)) < 120:
            return REFERENCE_YEAR - int(match.group(1))
    return None
