"""Whole judgments around a facts paragraph: section templates composed into one annotated document.

The corpus holds facts paragraphs (범죄사실) only; a court publishes whole judgments. A :class:`Composer` builds one
from a paragraph and the section templates under ``resources/sections`` (written for Thunder, see its README): a
criminal judgment's header (사건, 피고인 with 주민등록번호, 주거, 등록기준지; 검사, 변호인), 주문, 증거의 요지, 법령의
적용, 양형의 이유 and the judges' signatures, first instance or appeal; civil, family and administrative skeletons that
quote the paragraph as a criminal judgment's facts in their 기초사실, or (some cases) stand without it.

Template text is the corpus's annotation format with two kinds of slot:

* Identifiers are placeholders (``<<<내국인이름>>>A<<</내국인이름>>>``) that synthesis fills like the corpus's own.
  A file's ``roles`` bind letters to the paragraph's people: ``offender`` (the person written after 피고인; else the
  letter ``A`` the corpus leaves to an unnamed defendant, when the paragraph does not use it), ``victim`` (after
  피해자) and ``other`` (anyone else); a bound letter takes the paragraph's letter and tag when the labels are of one
  kind (same category and subcategory). Every other letter is a new entity with a letter the document does not use.
* Legal text is ``{slot}`` (``{statute}``, ``{case_number}``, ``{judge}``, ``{heading:주문}``, a list name, ...),
  filled here with random values: statute references of many shapes, case numbers, courts, dates, amounts,
  sentences, crimes, and the names of judges, prosecutors and counsel, which courts publish: they are placeholders
  only for the roles named in ``officials``. A particle after a slot is made to agree with the value.

The composition of a document depends only on ``(seed, epoch, doc_id)`` (:func:`thunder.synthesis.synthesizer.stable_seed`),
and so does the choice of the documents composed at all (``share``).
"""

from __future__ import annotations

import datetime
import random
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from thunder.documents.annotation import AnnotatedDocument, Placeholder, parse_annotated
from thunder.identifiers.context import MentionContext
from thunder.language.particles import fixed_particle, leading_particle
from thunder.language.regions import PROVINCES
from thunder.seeds import stable_seed, stable_share
from thunder.synthesis.names import PersonNames
from thunder.synthesis.synthesizer import SynthesizedDocument, Synthesizer
from thunder.synthesis.templates import (
    FACTS,
    FIRM_TAG,
    OFFICIAL_TAG,
    OFFICIALS,
    SLOT,
    Case,
    TemplateError,
    load_cases,
)
from thunder.taxonomy import Label, Taxonomy, UnknownTagError

__all__ = ["SLOT_NAMES", "Composer", "ComposingSynthesizer"]

_PLACEHOLDER = re.compile(r"<<<([^<>\n]+)>>>([A-Z]{1,3})<<</\1>>>")
_FACTS_HEADING = re.compile(r"\s*[【\[]?\s*범\s*죄\s*사\s*실\s*[】\]]?[ \t]*\n")
_ROLE_BEFORE = {"offender": re.compile(r"피고인[ \t]*$"), "victim": re.compile(r"피해자(?:인|이자)?[ \t]*$")}
_LETTERS = tuple(chr(c) for c in range(ord("A"), ord("Z") + 1))
_OFFICIAL_OF = {"judge": "judge", "prosecutor": "prosecutor", "counsel": "counsel", "attorney": "counsel"}
_NAMES = PersonNames("broad", foreign=0.0, masked=0.0)  # officials: the name shapes synthesis gives people
_NO_CONTEXT = MentionContext(OFFICIAL_TAG)


# ----------------------------------------------------------------------------------------------- composing


class Composer:
    """Facts paragraph -> whole judgment (an :class:`AnnotatedDocument` with placeholders), seeded per
    ``(seed, epoch, doc_id)``.

    Args:
        taxonomy: The taxonomy synthesis resolves tags with (templates are checked against it).
        seed: Seed of the choice of documents, cases, sections and slot values.
        share: Share of documents composed (``__call__`` returns the others unchanged), drawn anew every epoch.
        officials: Roles among ``judge``, ``prosecutor``, ``counsel`` whose names are identifiers (placeholders);
            by default none: courts publish them.
        directory: Section templates; None: the packaged ones.
    """

    def __init__(
        self,
        taxonomy: Taxonomy,
        seed: int = 0,
        share: float = 1.0,
        officials: Collection[str] = (),
        directory: str | Path | None = None,
    ) -> None:
        if not 0 <= share <= 1:
            raise ValueError(f"whole-judgment share must be in [0, 1], got {share}")
        unknown = set(officials) - set(OFFICIALS)
        if unknown:
            raise ValueError(f"officials must be among {', '.join(OFFICIALS)}, got {sorted(unknown)}")
        self.taxonomy, self.seed, self.share, self.officials = taxonomy, seed, float(share), frozenset(officials)
        self.cases = load_cases(taxonomy, SLOT_NAMES, directory)
        self.weights = [case.weight for case in self.cases]
        if sum(self.weights) <= 0:
            raise TemplateError("section templates: every case has weight 0")
        for tag in [OFFICIAL_TAG] * bool(self.officials) + [FIRM_TAG] * ("counsel" in self.officials):
            try:
                taxonomy.resolve(tag)
            except UnknownTagError as error:
                raise TemplateError(f"officials {sorted(self.officials)}: {error}") from None

    def picks(self, doc_id: str, epoch: int) -> bool:
        """Whether document ``doc_id`` is composed into a whole judgment at ``epoch``."""
        return stable_share("whole", self.seed, epoch, doc_id) < self.share

    def __call__(self, doc: AnnotatedDocument, epoch: int = 0) -> AnnotatedDocument:
        """The whole judgment around ``doc`` when it :meth:`picks` it at ``epoch``, else ``doc``."""
        return self.compose(doc, epoch) if self.picks(doc.doc_id, epoch) else doc

    def compose(self, doc: AnnotatedDocument, epoch: int = 0) -> AnnotatedDocument:
        """The whole judgment around ``doc`` at ``epoch``."""
        rng = random.Random(stable_seed("compose", self.seed, epoch, doc.doc_id))
        case = rng.choices(self.cases, self.weights)[0]
        return _Composition(self, case, doc, rng).document()


@dataclass(frozen=True)
class ComposingSynthesizer:
    """A :class:`Synthesizer` that first composes the documents its :class:`Composer` picks into whole judgments;
    called like one (``(doc, epoch) -> SynthesizedDocument``)."""

    composer: Composer
    synthesizer: Synthesizer

    def __call__(self, doc: AnnotatedDocument, epoch: int = 0) -> SynthesizedDocument:
        return self.synthesizer(self.composer(doc, epoch), epoch=epoch)


@dataclass
class _Entity:
    tag: str
    key: str


@dataclass
class _Composition:
    """The state of composing one document: letters in use, roles bound, document-wide slot values."""

    composer: Composer
    case: Case
    doc: AnnotatedDocument
    rng: random.Random
    used: set[str] = field(default_factory=set)
    bound: dict[tuple[str, int, str], _Entity] = field(default_factory=dict)
    values: dict[tuple[str, str], str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.used = {p.entity for p in self.doc.placeholders}
        self.people = self._people()
        self.offenders = [e for e, roles in self.people if "offender" in roles] or [None]
        judgment = datetime.date(2016, 1, 1) + datetime.timedelta(days=self.rng.randrange(9 * 365))
        self.judgment_date = judgment

    # -- roles and letters ---------------------------------------------------------------------------------------

    def _people(self) -> list[tuple[_Entity, set[str]]]:
        """The paragraph's entities that carry a letter code, in order, with the roles the words before them give."""
        found: dict[tuple[str, str], tuple[_Entity, set[str]]] = {}
        text = self.doc.text
        for placeholder in sorted(self.doc.placeholders, key=lambda p: p.start):
            if not re.fullmatch("[A-Z]{1,3}", placeholder.entity):
                continue
            label = self._label(placeholder.tag)
            key = (placeholder.entity, f"{label.category}/{label.subcategory}" if label else placeholder.tag)
            entity, roles = found.setdefault(key, (_Entity(placeholder.tag, placeholder.entity), set()))
            before = text[max(0, placeholder.start - 12) : placeholder.start]
            roles.update(role for role, pattern in _ROLE_BEFORE.items() if pattern.search(before))
        return list(found.values())

    def _label(self, tag: str) -> Label | None:
        try:
            return self.composer.taxonomy.resolve(tag).label
        except UnknownTagError:
            return None

    def fresh(self) -> str:
        """A letter code no placeholder of the document uses yet."""
        for size in (1, 2):
            for letters in (_LETTERS if size == 1 else (a + b for a in _LETTERS for b in _LETTERS)):
                if letters not in self.used:
                    self.used.add(letters)
                    return letters
        raise TemplateError(f"{self.doc.doc_id}: no letter code left for a new entity")

    def _same_kind(self, tag: str, other: str) -> bool:
        a, b = self._label(tag), self._label(other)
        return a is not None and b is not None and (a.category, a.subcategory) == (b.category, b.subcategory)

    def role(self, role: str, index: int, tag: str) -> _Entity:
        """The entity a role letter stands for: the paragraph's own where one of the kind of ``tag`` has the role,
        else one new entity shared by every section."""
        key = (role, index, tag)
        if key in self.bound:
            return self.bound[key]
        candidates: list[_Entity] = []
        if role == "offender":
            offender = self.offenders[index] if index < len(self.offenders) else None
            candidates = [offender] if offender is not None else []
        elif role == "victim":
            candidates = [e for e, roles in self.people if "victim" in roles and "offender" not in roles]
        else:
            candidates = [e for e, roles in self.people if not roles]
        entity = next((e for e in candidates if self._same_kind(e.tag, tag)), None)
        if entity is None:
            unnamed = role == "offender" and index == 0 and "A" not in self.used
            letter = "A" if unnamed else self.fresh()
            self.used.add(letter)
            entity = _Entity(tag, letter)
        self.bound[key] = entity
        return entity

    # -- rendering -----------------------------------------------------------------------------------------------

    def document(self) -> AnnotatedDocument:
        pieces: list[tuple[str, tuple[Placeholder, ...]]] = []
        for name, probability in self.case.layout:
            if probability < 1 and self.rng.random() >= probability:
                continue
            if name == FACTS:
                pieces.append(self._facts())
                continue
            times = len(self.offenders) if name in self.case.each else 1
            for index in range(times):
                raw = self.render(self.case.sections[name].render(self.rng), index)
                parsed = parse_annotated(raw, source=f"{self.case.source}: {name}", doc_id=self.doc.doc_id)
                pieces.append((parsed.text, parsed.placeholders))
        text, placeholders, length = [], [], 0
        for piece, marks in pieces:
            placeholders += [_shifted(p, length) for p in marks]
            text.append(piece)
            length += len(piece) + 1
        return AnnotatedDocument(self.doc.doc_id, "\n".join(text), tuple(placeholders), self.doc.case_type, self.doc.source)

    def _facts(self) -> tuple[str, tuple[Placeholder, ...]]:
        """The paragraph, without a heading line of its own (the templates write the heading)."""
        heading = _FACTS_HEADING.match(self.doc.text)
        cut = heading.end() if heading and all(p.start >= heading.end() for p in self.doc.placeholders) else 0
        return self.doc.text[cut:].strip("\n"), tuple(_shifted(p, -cut) for p in self.doc.placeholders)

    def render(self, template: str, index: int = 0) -> str:
        """``template`` with its letters bound (roles) or new, then its slots filled."""
        fresh: dict[str, str] = {}

        def letter(match: re.Match[str]) -> str:
            tag, code = match.groups()
            role = self.case.roles.get(code)
            if role is not None:
                entity = self.role(role, index, tag)
                return f"<<<{entity.tag}>>>{entity.key}<<</{entity.tag}>>>"
            if code not in fresh:
                fresh[code] = self.fresh()
            return f"<<<{tag}>>>{fresh[code]}<<</{tag}>>>"

        return self.fill(_PLACEHOLDER.sub(letter, template))

    def fill(self, template: str) -> str:
        """Every ``{slot}`` of ``template`` filled, and a particle written after it made to agree."""
        out: list[str] = []
        cursor = 0
        for match in SLOT.finditer(template):
            if match.start() < cursor:  # the particle fixed after the last slot swallowed this one's start
                continue
            out.append(template[cursor : match.start()])
            value = self.slot(match.group(1), match.group(2) or "")
            out.append(value)
            cursor = match.end()
            following = template[cursor:]
            if not value.endswith(">>>") and leading_particle(following) is not None:
                fixed = fixed_particle(value, following)
                if fixed is not None:
                    out.append(fixed[0])
                    cursor += fixed[1]
        out.append(template[cursor:])
        return "".join(out)

    def slot(self, name: str, arg: str) -> str:
        """The value of ``{name:arg}``: the same throughout the document for the slots of :data:`_DOCUMENT_SLOTS`."""
        if name not in _DOCUMENT_SLOTS:
            return self._draw(name, arg)
        key = (name, arg)
        if key not in self.values:
            self.values[key] = self._draw(name, arg)
        return self.values[key]

    def _draw(self, name: str, arg: str) -> str:
        if name in _GENERATORS:
            return _GENERATORS[name](self, arg)
        return self.rng.choice(self.case.lists[name])

    # -- values of the slots -------------------------------------------------------------------------------------

    def crime(self) -> tuple[str, str]:
        if ("crime", "*") not in self.values:
            crimes = self.case.crimes.get(self.doc.case_type or "") or self.case.crimes["default"]
            name, statute = self.rng.choice(crimes)
            self.values[("crime", "*")], self.values[("crime_statute", "*")] = name, statute
        return self.values[("crime", "*")], self.values[("crime_statute", "*")]

    def person(self, name: str, arg: str) -> str:
        """An official's name: plain text, or a placeholder when ``officials`` names the role."""
        if _OFFICIAL_OF[name] in self.composer.officials:
            return f"<<<{OFFICIAL_TAG}>>>{self.fresh()}<<</{OFFICIAL_TAG}>>>"
        return _NAMES.sample(self.rng, _NO_CONTEXT)

    def firm(self) -> str:
        if "counsel" in self.composer.officials:
            return f"<<<{FIRM_TAG}>>>{self.fresh()}<<</{FIRM_TAG}>>>"
        return self.rng.choice(self.case.lists["firms"])

    def date(self, arg: str) -> str:
        """``judgment`` (the document's), ``closing`` (weeks before it), else a day of the years before it."""
        if arg == "judgment":
            day = self.judgment_date
        elif arg == "closing":
            day = self.judgment_date - datetime.timedelta(days=self.rng.randint(14, 49))
        else:
            day = self.judgment_date - datetime.timedelta(days=self.rng.randint(30, 6 * 365))
        return f"{day.year}. {day.month}. {day.day}."

    def case_number(self, codes: Sequence[str], years_back: int) -> str:
        year = self.judgment_date.year - self.rng.randint(0, years_back)
        number = self.rng.choice((self.rng.randint(1, 999), self.rng.randint(1000, 9999), self.rng.randint(10000, 99999)))
        return f"{year}{self.rng.choice(codes)}{number}"


def _shifted(placeholder: Placeholder, offset: int) -> Placeholder:
    p = placeholder
    return Placeholder(p.start + offset, p.end + offset, p.tag, p.entity, p.line, p.column)


# ----------------------------------------------------------------------------------------------- slot values

_DOCUMENT_SLOTS = frozenset(
    "courts lower_courts agencies case_names case_number lower_case_number judge prosecutor counsel attorney firm "
    "sentence probation fine hours claim awarded".split()
)


def _amount(rng: random.Random, low: int, high: int, step: int) -> str:
    """``12,340,000원``, or in 만 원 (``1,234만 원``, ``2억 3,000만 원``) when it is a whole number of them."""
    value = rng.randrange(low // step, high // step + 1) * step
    if value % 10_000 or rng.random() < 0.6:
        return f"{value:,}원"
    eok, man = divmod(value // 10_000, 10_000)
    return " ".join([f"{eok}억"] * bool(eok) + [f"{man:,}만"] * bool(man)) + " 원"


def _article(rng: random.Random) -> str:
    """``제N조``, ``제N조의M``, with 항, 호, 목 and 본문/단서/전단/후단 at times."""
    text = f"제{rng.choice((rng.randint(1, 30), rng.randint(1, 120), rng.randint(1, 400)))}조"
    if rng.random() < 0.15:
        text += f"의{rng.randint(2, 9)}"
    if rng.random() < 0.6:
        text += f" 제{rng.randint(1, 5)}항"
        if rng.random() < 0.4:
            text += f" 제{rng.randint(1, 12)}호"
            if rng.random() < 0.15:
                text += f" {rng.choice('가나다라마바')}목"
    if rng.random() < 0.15:
        text += " " + rng.choice(("본문", "단서", "전단", "후단"))
    return text


def _statute(c: _Composition, arg: str) -> str:
    """A statute reference of one of many shapes (a law's name, ``구 …법(… 개정되기 전의 것)``, ``같은 법``, bare
    articles, several articles, 시행령, 시행규칙)."""
    rng = c.rng
    law, article = rng.choice(c.case.lists["laws"]), _article(rng)
    shapes = (
        f"{law} {article}",
        f"{law} {', '.join([article] + [_article(rng) for _ in range(rng.randint(1, 2))])}",
        f"구 {law}({c.date('')} 법률 제{rng.randint(9000, 19999)}호로 개정되기 전의 것) {article}",
        f"같은 법 {article}",
        article,
        f"{law} 시행령 {article}",
        f"{law} 시행규칙 {article} [별표 {rng.randint(1, 30)}]",
    )
    return rng.choices(shapes, (40, 15, 12, 10, 10, 7, 6))[0]


def _precedent(c: _Composition, arg: str) -> str:
    rng = c.rng
    year = c.judgment_date.year - rng.randint(1, 25)
    day = f"{year}. {rng.randint(1, 12)}. {rng.randint(1, 28)}."
    number = f"{year - rng.randint(0, 1)}{rng.choice(c.case.lists['precedent_codes'])}{rng.randint(100, 99999)}"
    shapes = (
        f"대법원 {day} 선고 {number} 판결",
        f"대법원 {day} 선고 {number} 전원합의체 판결",
        f"대법원 {day} 자 {year}마{rng.randint(100, 9999)} 결정",
        f"헌법재판소 {day} 선고 {year}헌{rng.choice('바마가')}{rng.randint(10, 999)} 결정",
    )
    return rng.choices(shapes, (7, 1, 1, 1))[0]


def _exhibit(c: _Composition, arg: str) -> str:
    """``갑 제1호증``, ``갑 제1, 2호증``, ``을 제3 내지 7호증(가지번호 포함)``, ``갑 제4호증의 1, 2``; ``arg``: the side."""
    rng = c.rng
    first = rng.randint(1, 15)
    roll = rng.random()
    if roll < 0.2:
        return f"{arg or '갑'} 제{first}호증의 {', '.join(str(n) for n in range(1, rng.randint(3, 5)))}"
    last = first + rng.randint(1, 12)
    numbers = str(first) if roll < 0.55 else f"{first}, {last}" if roll < 0.75 else f"{first} 내지 {last}"
    branches = "(가지번호 포함)" if roll >= 0.75 and rng.random() < 0.7 else ""
    return f"{arg or rng.choice(('갑', '갑', '을'))} 제{numbers}호증{branches}"


def _heading(c: _Composition, arg: str) -> str:
    """A heading as judgments space it: ``주문``, ``주 문``, ``주      문``, ``【주문】``."""
    rng = c.rng
    wide = (" " * rng.randint(2, max(2, 8 - len(arg)))).join(arg)
    return rng.choices((arg, " ".join(arg), wide, f"【{arg}】"), (30, 30, 25 if len(arg) < 6 else 0, 15))[0]


def _district(c: _Composition, arg: str) -> str:
    """Upper administrative levels written before a ``…아래주소`` placeholder: ``서울 강남구``, ``경기도 성남시 분당구``."""
    rng = c.rng
    province = rng.choice(tuple(PROVINCES))
    short, units = PROVINCES[province]
    written = rng.choice((province, *short))
    unit = rng.choice(tuple(units))
    lower = units[unit]
    parts = [written, unit] if unit else [written]
    if lower:
        parts.append(rng.choice(lower))
    return " ".join(parts)


def _sentence(c: _Composition, arg: str) -> str:
    rng = c.rng
    years, months = rng.choice((0, 0, 1, 1, 1, 2, 3)), rng.choice((0, 0, 6, 4, 8, 10))
    if years == 0:
        return f"징역 {rng.choice((4, 6, 8, 10))}개월"
    return f"징역 {years}년" + (f" {months}개월" if months else "")


_GENERATORS: dict[str, Callable[[_Composition, str], str]] = {
    "statute": _statute,
    "precedent": _precedent,
    "exhibit": _exhibit,
    "heading": _heading,
    "district": _district,
    "sentence": _sentence,
    "article": lambda c, arg: _article(c.rng),
    "date": lambda c, arg: c.date(arg),
    "crime": lambda c, arg: c.crime()[0],
    "crime_statute": lambda c, arg: c.crime()[1],
    "judge": lambda c, arg: c.person("judge", arg),
    "prosecutor": lambda c, arg: c.person("prosecutor", arg),
    "counsel": lambda c, arg: c.person("counsel", arg),
    "attorney": lambda c, arg: c.person("attorney", arg),
    "firm": lambda c, arg: c.firm(),
    "case_number": lambda c, arg: c.case_number(c.case.lists["case_codes"], 1),
    "lower_case_number": lambda c, arg: c.case_number(c.case.lists["lower_case_codes"], 2),
    "other_case_number": lambda c, arg: c.case_number(c.case.lists["other_case_codes"], 6),
    "law_number": lambda c, arg: f"제{c.rng.randint(9000, 19999)}호",
    "receipt": lambda c, arg: str(c.rng.randint(1000, 199999)),
    "ratio": lambda c, arg: f"{c.rng.randint(1000, 99999):,}.{c.rng.randint(1, 9)}분의 {c.rng.randint(10, 99)}.{c.rng.randint(100, 999)}",
    "amount": lambda c, arg: _amount(c.rng, 100_000, 90_000_000, 10_000 if c.rng.random() < 0.7 else 10),
    "claim": lambda c, arg: _amount(c.rng, 5_000_000, 300_000_000, 100_000),
    "awarded": lambda c, arg: _amount(c.rng, 1_000_000, 80_000_000, 10_000),
    "fine": lambda c, arg: _amount(c.rng, 500_000, 20_000_000, 500_000),
    "months": lambda c, arg: c.rng.choice(("2개월", "3개월", "4개월", "6개월", "8개월", "10개월", "1년", "1년 6개월", "2년")),
    "probation": lambda c, arg: c.rng.choice(("1년", "2년", "2년", "3년", "3년", "4년", "5년")),
    "years": lambda c, arg: f"{c.rng.randint(1, 10)}년",
    "hours": lambda c, arg: f"{c.rng.choice((40, 40, 80, 80, 120, 160, 200, 240))}시간",
    "days": lambda c, arg: f"{c.rng.randint(1, 300)}일",
    "number": lambda c, arg: str(c.rng.randint(1, 30)),
    "percent": lambda c, arg: f"{c.rng.choice((5, 5, 6, 12, 12, 15, 20))}%",
    "area": lambda c, arg: f"{c.rng.randint(15, 2500)}.{c.rng.randint(0, 99):02d}㎡",
    "fraction": lambda c, arg: c.rng.choice(("10분의 1", "5분의 1", "4분의 1", "3분의 1", "2분의 1", "3분의 2", "5분의 4")),
}
SLOT_NAMES = frozenset(_GENERATORS)  # the {slot} names composition fills (beside a case's lists)

