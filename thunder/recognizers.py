"""Pattern recognizers for structured direct identifiers (Presidio-style, pluggable).

A :class:`Recognizer` has a ``name``, the tier-3 ``label`` its spans get (plus ``category``/``tier1`` used when the
label is not in the model's taxonomy) and ``find(text) -> list[ScoredSpan]``. Labels default to those of the packaged
taxonomy, where the pipeline also looks up their category and tier. The built-in recognizers are in
:data:`RECOGNIZERS` by name; :func:`load_recognizers` builds them from names, ``"package.module.Class"`` paths or
``{"class_path": ..., "init_args": {...}}`` dicts, so a user plugs in their own without touching Thunder.

The recognizers favour recall on well-formed identifiers (a resident registration number with a wrong check digit is
still reported, with a lower score) while staying off the look-alikes that fill court judgments: dates
(``2021. 3. 4.``), amounts (``1,000,000원``), case numbers (``2020고단1234``, ``98노1234``) and statute numbers.
"""

from __future__ import annotations

import bisect
import importlib
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence


@dataclass(frozen=True)
class ScoredSpan:
    """A labelled character span ``[start, end)`` with a confidence in ``(0, 1]``, from a recognizer or the model."""

    start: int
    end: int
    label: str
    score: float
    source: str  # recognizer name or "model"
    category: str | None = None
    tier1: str | None = None


class Recognizer(ABC):
    """Finds one kind of identifier in raw text."""

    name: ClassVar[str]
    label: str
    category: str = "사건관계인특정정보"
    tier1: str = "direct"

    @abstractmethod
    def find(self, text: str) -> list[ScoredSpan]:
        """All spans of this identifier in ``text``."""


class PatternRecognizer(Recognizer):
    """A regular expression plus a ``score(match, text)`` hook; a score of 0 rejects the match."""

    pattern: ClassVar[re.Pattern]
    base_score: ClassVar[float] = 0.85

    def __init__(self, label: str | None = None) -> None:
        self.label = label or type(self).label

    def score(self, match: re.Match, text: str) -> float:
        """Confidence for one match (0 rejects it)."""
        return self.base_score

    def find(self, text: str) -> list[ScoredSpan]:
        spans = []
        for match in self.pattern.finditer(text):
            start, end = match.span("id") if "id" in self.pattern.groupindex else match.span()
            score = self.score(match, text)
            if score > 0 and end > start:
                spans.append(ScoredSpan(start, end, self.label, score, self.name, self.category, self.tier1))
        return spans


def _digits(value: str) -> str:
    return re.sub(r"\D", "", value)


def _context(text: str, start: int, end: int, before: int = 20, after: int = 10) -> tuple[str, str]:
    return text[max(0, start - before) : start], text[end : end + after]


class ResidentRegistrationNumber(PatternRecognizer):
    """주민등록번호/외국인등록번호 ``YYMMDD-GNNNNNN`` (a valid birth date required; tail may be masked with ``*``).

    Score 0.95 with a valid check digit, 0.7 without (numbers issued since Oct 2020 have no check digit, and a
    well-formed number must never leak), 0.6 when the tail is partly masked.
    """

    name = "resident_registration_number"
    label = "주민등록번호"
    pattern = re.compile(
        r"(?<![\d\-])(?P<id>\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\s?[-–]?\s?[0-9][\d*]{6})(?![\d*])"
    )
    WEIGHTS: ClassVar[tuple[int, ...]] = (2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5)

    @classmethod
    def check_digit_valid(cls, number: str) -> bool:
        """Whether the 13-digit ``number`` carries a valid (pre-2020) check digit."""
        digits = [int(d) for d in _digits(number)]
        if len(digits) != 13:
            return False
        total = sum(w * d for w, d in zip(cls.WEIGHTS, digits))
        return (11 - total % 11) % 10 == digits[12]

    def score(self, match: re.Match, text: str) -> float:
        value = match.group("id")
        compact = re.sub(r"\s", "", value)
        if "-" not in compact and "–" not in compact and "*" not in compact:
            # 13 bare digits: only when the check digit is right (otherwise likely an account number)
            return 0.9 if self.check_digit_valid(compact) else 0
        if "*" in value:
            return 0.6
        if compact[7] not in "12345678":
            return 0.5
        return 0.95 if self.check_digit_valid(value) else 0.7


class PhoneNumber(PatternRecognizer):
    """Mobile (``010-1234-5678``, ``01012345678``), landline (``02-123-4567``, ``(031) 123-4567``) and nationwide
    business (``1588-1234``, score 0.6) numbers."""

    name = "phone_number"
    label = "전화번호"
    pattern = re.compile(
        r"(?<![\d\-.])(?P<id>"
        r"01[016789](?:[-. ]?[\d*]{3,4}[-. ]?[\d*]{4})"  # mobile
        r"|\(?0(?:2|[3-6][1-5]|70|50[2-8])\)?(?:[-. )]|\) )[\d*]{3,4}[-. ][\d*]{4}"  # landline, separators required
        r"|1[5-8]\d{2}-\d{4}"  # nationwide business numbers (1588-1234)
        r")(?![\d\-])"
    )

    def score(self, match: re.Match, text: str) -> float:
        value = match.group("id")
        if value.startswith("01"):
            return 0.9 if re.search(r"[-. ]", value) else 0.8
        return 0.85 if value.startswith(("0", "(")) else 0.6


class BankAccountNumber(PatternRecognizer):
    """Bank account numbers: 3-4 digit groups joined by hyphens with 10-14 digits (``110-123-456789``), or 10-14
    bare digits right after a word such as 계좌/통장/은행."""

    name = "bank_account_number"
    label = "계좌번호"
    pattern = re.compile(
        r"(?<![\d\-])(?P<id>[\d*]{2,6}-[\d*]{2,6}-[\d*]{2,7}(?:-[\d*]{1,4})?|\d{10,14})(?![\d\-])"
    )
    CONTEXT = re.compile(r"(계좌|통장|은행|뱅크|예금|입금|송금|이체|농협|신협|금고|우체국)")

    def score(self, match: re.Match, text: str) -> float:
        value = match.group("id")
        n = len(re.sub(r"[^\d*]", "", value))
        before, after = _context(text, match.start("id"), match.end("id"), before=25)
        has_context = bool(self.CONTEXT.search(before))
        if after.lstrip().startswith(("원", "만", "억", "천", "달러")):  # an amount
            return 0
        if "-" not in value:
            return 0.75 if has_context else 0
        if not 10 <= n <= 14:
            return 0
        return 0.85 if has_context else 0.55


def luhn_valid(number: str) -> bool:
    """Luhn checksum of the digits of ``number``."""
    digits = [int(d) for d in _digits(number)][::-1]
    total = sum(d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2) for i, d in enumerate(digits))
    return len(digits) >= 12 and total % 10 == 0


class CardNumber(PatternRecognizer):
    """Payment card numbers ``NNNN-NNNN-NNNN-NNNN`` (spaces or hyphens, 15-16 digits, ``*`` masks allowed) or 16
    bare digits; 0.95 when the Luhn checksum holds, lower otherwise."""

    name = "card_number"
    label = "신용카드번호"
    pattern = re.compile(
        r"(?<![\d\-])(?P<id>\d{4}([- ])[\d*]{4}\2[\d*]{4}\2[\d*]{3,4}|\d{4}([- ])[\d*]{6}\3[\d*]{5}|\d{16})(?![\d\-])"
    )

    def score(self, match: re.Match, text: str) -> float:
        value = match.group("id")
        if "*" in value:
            return 0.6
        if luhn_valid(value):
            return 0.95
        return 0.5 if re.search(r"[- ]", value) else 0


class VehiclePlate(PatternRecognizer):
    """Korean vehicle plates: current ``12가3456`` / ``123가 4567`` and older regional ``서울12가3456``,
    ``경기 1 가 1234`` formats. Case numbers of the same shape (``98노1234``) are skipped by their context."""

    name = "vehicle_plate"
    label = "차량번호"
    REGIONS = "서울|부산|대구|인천|광주|대전|울산|세종|경기|강원|충북|충남|전북|전남|경북|경남|제주"
    LETTERS = "가나다라마거너더러머버서어저고노도로모보소오조구누두루무부수우주아바사자배하허호"
    pattern = re.compile(
        rf"(?<![\d가-힣])(?P<id>(?:(?P<region>{REGIONS})\s?(?:\d{{1,2}})|\d{{2,3}})\s?[{LETTERS}]\s?\d{{4}})(?!\d)"
    )
    CASE_CONTEXT = re.compile(r"(법원|사건|판결|선고|항소|상고|결정|대법)")

    def score(self, match: re.Match, text: str) -> float:
        if match.group("region"):
            return 0.9
        before, after = _context(text, match.start("id"), match.end("id"), before=20, after=8)
        if self.CASE_CONTEXT.search(before) or self.CASE_CONTEXT.search(after):
            return 0
        return 0.8


class EmailAddress(PatternRecognizer):
    """E-mail addresses."""

    name = "email"
    label = "이메일주소"
    category = "URL"
    pattern = re.compile(
        r"(?<![A-Za-z0-9_.+-])(?P<id>[A-Za-z0-9_.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})(?![A-Za-z0-9_-])"
    )
    base_score = 0.95


class Url(PatternRecognizer):
    """URLs with a scheme or ``www.`` (trailing punctuation and closing brackets are left out)."""

    name = "url"
    label = "URL"
    category = "URL"
    pattern = re.compile(r"(?P<id>(?:https?://|www\.)[^\s<>\"'가-힣]*[^\s<>\"'가-힣.,;:!?)\]}])")
    base_score = 0.9


RECOGNIZERS: dict[str, type[Recognizer]] = {
    cls.name: cls
    for cls in (ResidentRegistrationNumber, PhoneNumber, BankAccountNumber, CardNumber, VehiclePlate, EmailAddress, Url)
}


def register(cls: type[Recognizer]) -> type[Recognizer]:
    """Class decorator adding a recognizer to :data:`RECOGNIZERS` under its ``name``."""
    RECOGNIZERS[cls.name] = cls
    return cls


def _import(path: str) -> Any:
    module_name, _, attr = path.replace(":", ".").rpartition(".")
    if not module_name:
        raise ValueError(f"unknown recognizer {path!r}: not one of {sorted(RECOGNIZERS)} and not a module.Class path")
    return getattr(importlib.import_module(module_name), attr)


def load_recognizers(specs: Sequence[str | dict | Recognizer] | None = None) -> list[Recognizer]:
    """Recognizers from names in :data:`RECOGNIZERS`, ``module.Class`` paths, ``{"class_path", "init_args"}``
    dicts or instances; ``None`` gives all built-in recognizers."""
    if specs is None:
        return [cls() for cls in RECOGNIZERS.values()]
    result = []
    for spec in specs:
        if isinstance(spec, Recognizer):
            result.append(spec)
        elif isinstance(spec, dict):
            cls = RECOGNIZERS.get(spec["class_path"]) or _import(spec["class_path"])
            result.append(cls(**spec.get("init_args", {})))
        else:
            cls = RECOGNIZERS.get(spec) or _import(spec)
            result.append(cls())
    return result


def recognize(text: str, recognizers: Sequence[Recognizer]) -> list[ScoredSpan]:
    """Spans of all recognizers; overlapping spans keep the highest score (then the longest)."""
    found = sorted(
        (span for recognizer in recognizers for span in recognizer.find(text)),
        key=lambda s: (-s.score, -(s.end - s.start), s.start),
    )
    kept: list[ScoredSpan] = []  # disjoint, sorted by start
    starts: list[int] = []
    for span in found:
        i = bisect.bisect_right(starts, span.start)
        if (i and kept[i - 1].end > span.start) or (i < len(kept) and kept[i].start < span.end):
            continue
        starts.insert(i, span.start)
        kept.insert(i, span)
    return kept
