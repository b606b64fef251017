"""Legal text of Korean judgments, which is never an identifier, and where the published officials' names stand.

:class:`LegalText` finds, in a judgment's text, the character intervals of

- **statute references**: articles, paragraphs, items and their qualifiers (``제62조의2 제1항 제3호 본문``, ``같은 법``,
  ``같은 조 제2항``), amendment notes (``(2003. 5. 29. 법률 제6916호로 개정되기 전의 것)``) and statute numbers
  (``법률 제6916호``);
- **statutes**: the acts of :data:`STATUTES_FILE` (with their 시행령 / 시행규칙, written with or without spaces), and
  names of unlisted acts where their shape says so: a name in 「」, or one word ending in 법/법률/령/규칙/조례 before an
  article (``○○법 제3조``), before 위반 or after 구;
- **courts** (``대법원``, ``서울고등법원``, ``대구지방법원 안동지원``, ``서울중앙지법``, ``특허법원``) and prosecutors' offices;
- **procedural roles and terms** of :data:`TERMS_FILE` (원고, 피고인, 원심, 재판장, 상고이유, 지연손해금, 입주자대표회의, ...),
  the vocabulary of patent, trademark and design cases (심결, 등록상표, 청구항, 진보성) and of tax cases (취득세,
  부과처분, 경정청구, 납세의무자) among them;
- **exhibits** (``갑 제1호증``, ``을 제2호증의 1``, ``증 제3호``), **precedent citations** (``대법원 2010. 1. 14. 선고
  2009다67429 판결``) and **case numbers** (``2024고단3187``).

:func:`official_names` finds the names that courts publish on purpose: judges in the signature block (``판사 오현석``,
``대법관 김OO(재판장) 이OO``), prosecutors (``검 사 윤서진(기소)``) and counsel (``변 호 인 변호사 문태경(국선)``,
``소송대리인 법무법인 OO 담당변호사 OO``, ``소송수행자 OO``), each on the lines a judgment gives them.
:data:`PARTY_ROLES` and :data:`PERSON_ROLES` are the words by which a judgment names everyone else (``피고인``,
``증인``, ``누나``): a name follows them.

Both are text rules, written for Thunder; :mod:`thunder.deid.protection` turns them into the pipeline's non-identifier step.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from thunder.language.particles import PARTICLE_RUN, run_agrees

__all__ = [
    "KINDS",
    "OFFICIAL_ROLES",
    "PARTY_ROLES",
    "PERSON_ROLES",
    "ROLE_WORDS",
    "STATUTES_FILE",
    "TERMS_FILE",
    "LegalSpan",
    "LegalText",
    "OfficialName",
    "official_names",
    "read_lexicon",
]

STATUTES_FILE = Path(str(resources.files("thunder") / "resources" / "legal" / "statutes.txt"))
TERMS_FILE = Path(str(resources.files("thunder") / "resources" / "legal" / "terms.txt"))
KINDS = ("statute reference", "statute", "court", "procedural term", "exhibit", "precedent", "case number")

# the parties, whose role a header may write one syllable at a time (원      고, 피 고 인)
PARTY_ROLES = (
    "원고", "피고", "피고인", "청구인", "피청구인", "상대방", "신청인", "피신청인", "사건본인", "항소인", "피항소인",
    "상고인", "피상고인", "항고인", "재항고인", "채권자", "채무자", "참가인", "피참가인", "소송수계인",
)  # fmt: skip
# everyone else a judgment names by role or relation
PERSON_ROLES = (
    "증인", "감정인", "참고인", "피해자", "고소인", "피고소인", "고발인", "피고발인", "피의자", "진정인", "피진정인",
    "신고인", "제보자", "입회인", "보증인", "연대보증인", "임대인", "임차인", "매도인", "매수인", "공소외", "소외",
    "상피고인",
    "공범", "남편", "아내", "처", "배우자", "부친", "모친", "아버지", "어머니", "아들", "딸", "장남", "장녀", "차남",
    "차녀", "누나", "오빠", "언니", "동생", "남동생", "여동생", "조카", "손자", "손녀", "할머니", "할아버지", "장인",
    "장모", "시아버지", "시어머니", "며느리", "사위", "처남", "매형", "매제", "동서", "부모", "자녀", "친구", "동료",
    "이웃", "애인", "지인", "직원", "학생", "교사", "담임교사", "간호사", "의사", "전문의", "주치의", "세무사",
    "법무사", "감정평가사", "공인중개사", "건축사", "물리치료사", "경찰관",
    # more relatives, and the people of a workplace, a school, a home or a car by their relation to the case
    "형", "형님", "누님", "삼촌", "외삼촌", "숙부", "숙모", "사촌", "생부", "생모", "친부", "친모", "계부", "외할머니",
    "외할아버지", "외손자", "외손녀", "조카딸", "시누이", "올케", "처제", "처형", "전남편", "동거인", "학부모", "보호자",
    "동업자", "대표이사", "대표자", "사장", "점장", "업주", "점주", "실장", "팀장", "과장", "부장", "관리소장",
    "관리사무소장", "종업원", "교장", "교감", "선배", "후배", "세입자", "집주인", "소유자", "운전자", "동승자", "고객",
    "택시기사",
)  # fmt: skip
ROLE_WORDS = frozenset(PARTY_ROLES + PERSON_ROLES)
OFFICIAL_ROLES = ("judge", "prosecutor", "counsel")


@dataclass(frozen=True)
class LegalSpan:
    """Legal text ``[start, end)`` of one of :data:`KINDS`."""

    start: int
    end: int
    kind: str


@dataclass(frozen=True)
class OfficialName:
    """A published official's name ``[start, end)``: ``role`` in :data:`OFFICIAL_ROLES`; ``firm`` for a law firm."""

    start: int
    end: int
    role: str
    firm: bool = False


def read_lexicon(path: str | Path) -> list[str]:
    """The entries of a lexicon file: one a line, blank lines and ``#`` comments skipped."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


# ----------------------------------------------------------------------------------------------- patterns

_SPACE = "[ \\t]?"  # a space inside a listed name may be left out (정보통신망법 written with or without spaces)
_DOT = "[·ㆍ・]?"  # so may a middle dot
_SPACED = "[ \\t]{1,3}"  # a header writes its labels one syllable at a time (피 고 인, 주 문)


def _trie_pattern(words: Iterable[str], between: str = "") -> str:
    """One regular expression for ``words``, shaped as a trie so that it is fast and prefers the longest word: a
    space or middle dot of a word is optional, and ``between`` is matched between its other characters."""
    trie: dict = {}
    for word in words:
        node = trie
        for char in " ".join(word.split()).replace("ㆍ", "·").replace("・", "·"):
            node = node.setdefault(char, {})
        node[""] = {}

    def pattern(node: dict, first: bool) -> str:
        branches = []
        for char, child in sorted(node.items()):
            if char:
                glue = _SPACE if char == " " else _DOT if char == "·" else ("" if first else between) + re.escape(char)
                branches.append(glue + pattern(child, char in " ·"))
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if first and node.keys() - {"", " ", "·"}:  # a character class rules out most positions at once
            body = "(?=[" + "".join(re.escape(c) for c in sorted(node) if c not in " ·") + "])" + body
        return f"(?:{body})?" if "" in node else body

    return pattern(trie, True)


_WORD_START = r"(?<![가-힣A-Za-z0-9])"
_NUMBER = r"\d+"
# the parts of a statute reference: 제62조의2 제1항 제3호 가목 본문, joined by commas, 및, 내지, ...
_ARTICLE = rf"제\s*{_NUMBER}\s*조(?:\s*의\s*{_NUMBER})?"
_PARAGRAPH = rf"제\s*{_NUMBER}\s*항"
_ITEM = rf"제\s*{_NUMBER}\s*호(?:\s*의\s*{_NUMBER})?"
_SUBITEM = rf"(?:제\s*{_NUMBER}\s*목|[가-하]\s*목)"
_QUALIFIER = r"(?:본문|단서|전단|후단|전문|후문|각\s*호|각\s*목|괄호\s*부분)"

_JOIN = r"\s*(?:,|및|또는|내지|와|과|ㆍ|·|~)?\s*"
_PART = rf"(?:{_ARTICLE}|{_PARAGRAPH}|{_ITEM}|{_SUBITEM}|{_QUALIFIER})"
_REFERENCE = re.compile(
    rf"(?:{_ARTICLE}|{_PARAGRAPH}|{_WORD_START}같은\s*(?:법|조|항|호|목)|{_WORD_START}동\s*(?:법|조|항|호)(?![가-힣]))"
    rf"(?:{_JOIN}{_PART})*"
)
_DATE = r"\d{2,4}\s*\.\s*\d{1,2}\s*\.\s*\d{1,2}\s*\.?"
_STATUTE_NUMBER = re.compile(
    rf"(?:법률|대통령령|총리령|[가-힣]{{1,12}}부령|[가-힣]{{0,12}}(?:규칙|조례))\s*제\s*{_NUMBER}\s*호"
)
_AMENDMENT_NOTE = re.compile(  # (2003. 5. 29. 법률 제6916호로 개정되기 전의 것, 이하 같다)
    r"\([^()\n]{0,80}?(?:개정|제정|폐지|시행|전부개정|일부개정)(?:되기|된|되어|하기)[^()\n]{0,40}\)"
)
_COURT_NAME = (
    r"(?:대법원|헌법재판소|특허법원|(?:고등|보통)?군사법원|[가-힣]{1,8}(?:고등|지방|가정|행정|회생)\s*법원"
    r"|[가-힣]{1,6}(?:지법|고법|가법|행법)|[가-힣]{1,8}(?:고등|지방)\s*검찰청|대검찰청|[가-힣]{1,6}지검)"
    r"(?:\s*\([가-힣]+(?:재판부)?\))?(?:\s+[가-힣]{1,4}(?:지원|지청))?(?:\s+[가-힣]{1,4}(?:시|군)법원)?"
)
_COURT = re.compile(_WORD_START + _COURT_NAME)
_CODE = r"(?!년|월|일|세|명|원|층|호|동|번|개|회|분|시|초|장|건|권|평|억|만|천|배|대)[가-힣]{1,4}"
_CASE_NUMBER = re.compile(  # 2024고단3187; a two-digit year (98노1234) only after 선고 or 사건, or before 판결/결정
    rf"(?<![0-9A-Za-z가-힣])(?:(?:19|20)\d{{2}}{_CODE}\d{{1,7}}(?!\d)"
    rf"|(?<=선고 )\d{{2}}{_CODE}\d{{1,7}}(?!\d)|\d{{2}}{_CODE}\d{{1,7}}(?=\s*(?:판결|결정)))"
)
_PRECEDENT = re.compile(  # 대법원 2010. 1. 14. 선고 2009다67429 판결; [대법원 1983. 6. 28., 선고, 82누362, 판결]
    rf"{_WORD_START}{_COURT_NAME}[\s,]*{_DATE}[\s,]*(?:자|선고)?[\s,]*\d{{2,4}}{_CODE}\d{{1,7}}"
    r"(?:\s*,\s*\d{1,7})*(?:\s*\(\s*[병공]합\s*\))?(?:\s*전원합의체)?[\s,]*(?:판결|결정|명령)"
)
_EXHIBIT = re.compile(
    rf"{_WORD_START}(?:[갑을병정]\s*(?:[가-라]\s*)?(?:제\s*)?{_NUMBER}(?:\s*(?:,|내지|~|-)\s*{_NUMBER})*\s*호증"
    rf"(?:\s*의\s*{_NUMBER}(?:\s*(?:,|내지|~|-)\s*{_NUMBER})*)?(?:\s*\(\s*가지번호\s*포함\s*\))?"
    rf"|증\s*제\s*{_NUMBER}\s*호)"
)
_UNLISTED_ACT = re.compile(  # one word ending in 법/법률/령/규칙/조례 where the text says it is an act
    r"「[^「」\n]{0,78}(?:법|법률|령|규칙|조례)」"
    rf"|{_WORD_START}[가-힣ㆍ·]{{1,40}}(?:법률|법|시행령|시행규칙|규칙|조례)(?=\s*(?:{_ARTICLE}|위반|시행령|시행규칙))"
    rf"|(?<={_WORD_START}구\s)[가-힣ㆍ·]{{1,40}}(?:법률|법|령|규칙|조례)(?![가-힣])"
)
_ACT_SUFFIX = re.compile(r"(?:\s*(?:시행령|시행규칙))?(?:위반(?:\s*\([^()\n]{1,30}\))?)?")
_OLD = re.compile(r"(?<![가-힣])구\s*$")
_BARE_LAW = re.compile(rf"{_WORD_START}법(?=\s*{_ARTICLE})")


class LegalText:
    """Finds legal text (:data:`KINDS`) in a judgment; ``extra_words`` are further terms (acts, roles, phrases),
    found as procedural terms; ``builtin=False`` finds only those."""

    def __init__(self, extra_words: Sequence[str] = (), builtin: bool = True) -> None:
        if isinstance(extra_words, str) or not all(isinstance(w, str) and w.strip() for w in extra_words):
            raise ValueError(f"legal words must be a list of non-empty words, got {extra_words!r}")
        self.extra_words, self.builtin = tuple(w.strip() for w in extra_words), builtin
        self._statutes, self._terms = _compiled(self.extra_words, builtin)

    def find(self, text: str) -> list[LegalSpan]:
        """Every piece of legal text in ``text``, sorted by start (pieces of different kinds may overlap)."""
        if not self.builtin:
            return [LegalSpan(start, end, "procedural term") for start, end in self._term_runs(text)]
        references = (_REFERENCE, _STATUTE_NUMBER, _AMENDMENT_NOTE)
        found = [LegalSpan(m.start(), m.end(), "statute reference") for p in references for m in p.finditer(text)]
        found += self._acts(text)
        found += [LegalSpan(m.start(), m.end(), "court") for m in _COURT.finditer(text)]
        found += [LegalSpan(start, end, "procedural term") for start, end in self._term_runs(text)]
        found += [LegalSpan(m.start(), m.end(), "exhibit") for m in _EXHIBIT.finditer(text)]
        found += [LegalSpan(m.start(), m.end(), "precedent") for m in _PRECEDENT.finditer(text)]
        found += [LegalSpan(m.start(), m.end(), "case number") for m in _CASE_NUMBER.finditer(text)]
        return sorted(found, key=lambda s: (s.start, -s.end))

    def _acts(self, text: str) -> list[LegalSpan]:
        spans = []
        for pattern in (self._statutes, _UNLISTED_ACT, _BARE_LAW):
            for m in pattern.finditer(text):
                if pattern is self._statutes and text[m.end() : m.end() + 1] in _NOT_AN_ACT_AFTER:
                    continue  # 관세법 of 관세법인, 특허법 of 특허법원
                end = _ACT_SUFFIX.match(text, m.end()).end()
                start = m.start()
                if old := _OLD.search(text, max(0, start - 3), start):
                    start = old.start()
                spans.append(LegalSpan(start, end, "statute"))
        return spans

    def _term_runs(self, text: str) -> Iterable[tuple[int, int]]:
        """Runs of one or more terms starting a word and ending it (or followed by 들, by particles, or by a light
        verb that makes the term a verb: ``감면받은``, ``심판청구한``, ``출원되었다``); a header's labels written one
        syllable at a time (``피 고 인``) where they start a line."""
        for pattern in self._terms:
            for m in pattern.finditer(text):
                end = m.end()
                if end < len(text) and text[end] == "들":
                    end += 1
                if end >= len(text) or not _is_letter(text[end]) or _LIGHT_VERB.match(text, end):
                    yield m.start("term"), m.end()
                    continue
                particles = PARTICLE_RUN.match(text, end)
                if particles and (particles.end() >= len(text) or not _is_letter(text[particles.end()])):
                    if run_agrees(text[m.start("term") : end], text[end : particles.end()]):
                        yield m.start("term"), m.end()


_NOT_AN_ACT_AFTER = frozenset("인원무정학관")
# 하다, 되다, 받다, 시키다, 당하다 in any ending, to the end of the word (a term is a noun; with one of them a verb)
_LIGHT_VERB = re.compile(r"(?:[하한할함합해했되된될됨됩돼됐받]|시[키킨킬켜켰]|당[하한할함해했])[가-힣]*(?![가-힣A-Za-z0-9])")


def _is_letter(char: str) -> bool:
    return char.isalnum() or char == "_"


@lru_cache(maxsize=8)
def _compiled(extra_words: tuple[str, ...], builtin: bool) -> tuple[re.Pattern, tuple[re.Pattern, re.Pattern]]:
    acts = (read_lexicon(STATUTES_FILE) if builtin else []) + list(extra_words)
    decrees = [f"{name}{suffix}" for name in acts for suffix in ("", " 시행령", " 시행규칙")]
    terms = (read_lexicon(TERMS_FILE) if builtin else []) + list(extra_words)
    statutes = re.compile(rf"{_WORD_START}(?:{_trie_pattern(decrees)})")
    in_text = re.compile(rf"{_WORD_START}(?P<term>(?:{_trie_pattern(terms)})+)")
    spaced = [term for term in terms if " " not in term and len(term) > 1]
    header = re.compile(rf"^[ \t]*(?:【[ \t]*)?(?P<term>{_trie_pattern(spaced, _SPACED)})", re.M)
    return statutes, (in_text, header)


# ----------------------------------------------------------------------------------------------- officials

# a list of names: 윤서진(기소), 한지오(공판); 오성환(재판장) 정태균; 대위 장천수(공판); ... 외 2인
_NAME, _NOTE, _OTHERS = r"(?:[가-힣]{2,4})", r"(?:\s*\([^()\n]{1,12}\))?", r"(?:\s*외\s*\d+\s*인?)?"
_RANK = r"(?:(?:대위|중위|소위|소령|중령|대령|준장|소장|중장|대장)(?:\(진\))?\s+)?"
_NAMES = rf"{_RANK}{_NAME}{_NOTE}(?:\s*,?[ \t]+{_RANK}{_NAME}{_NOTE}|\s*,\s*{_RANK}{_NAME}{_NOTE})*"
# the lines that give them: names run to the end of the line (or of the parenthesis they stand in)
_LINE_END, _LABEL = r"[ \t]*(?=\)|\n|$)", r"(?:【[^】\n]{0,20}】[ \t]*)?"
_JUDGE = r"(?:대법원장|대법관|대법원판사|부장판사|군판사|판\s*사|재판장|주\s*심)"
_COUNSEL = (
    r"(?<![가-힣])(?:변[ \t]*호[ \t]*인|(?:소송|신청|항고|상고)?대리인)[ \t]*(?:】)?[ \t]*"
    r"(?:(?:법무법인|법률사무소|합동법률사무소|특허법인)(?:\s*\(유한\))?[ \t]+(?P<firm>[가-힣A-Za-z0-9]{1,15})"
    rf"(?:[ \t]+담당[ \t]*변호사[ \t]+(?P<names>{_NAMES}))?{_OTHERS}"
    rf"|(?:변호사|변리사)(?:\s*\((?:국선|사선)\))?[ \t]+(?P<lawyers>{_NAMES}){_OTHERS})(?=[ \t]*(?:\)|\n|$))"
)
_OFFICIAL_LINES: tuple[tuple[str, re.Pattern], ...] = (
    ("judge", re.compile(rf"^[ \t]*{_LABEL}(?:{_JUDGE}[ \t]+){{1,2}}(?P<names>{_NAMES}){_LINE_END}", re.M)),
    ("prosecutor", re.compile(
        rf"^[ \t]*(?:【[ \t]*)?(?:군[ \t]*)?검[ \t]*사[ \t]*(?:】)?[ \t]*(?P<names>{_NAMES}){_LINE_END}", re.M)),
    ("counsel", re.compile(_COUNSEL)),
    ("counsel", re.compile(rf"(?<![가-힣])소송[ \t]*수행자[ \t]*(?:】)?[ \t]*(?P<names>{_NAMES}){_LINE_END}")),
)  # fmt: skip
_NOT_A_NAME = frozenset({"재판장", "주심", "판사", "대법관", "검사", "변호사", "외", "기소", "공판", "국선", "사선"})
_NAME_IN_LIST = re.compile(rf"(?:{_RANK})?(?P<name>{_NAME})(?:{_NOTE})")


def official_names(text: str, roles: Iterable[str]) -> list[OfficialName]:
    """The names of the officials of ``roles`` (some of :data:`OFFICIAL_ROLES`; the publication policy checks them)
    on the lines a judgment gives them: judges in the signature block, the prosecutors and counsel of the header (law
    firms included); sorted."""
    roles = set(roles)
    found = []
    for role, pattern in _OFFICIAL_LINES:
        if role not in roles:
            continue
        for m in pattern.finditer(text):
            for group in ("names", "lawyers"):
                if group in pattern.groupindex and m.group(group):
                    found += _names_in(m.group(group), m.start(group), role)
            if "firm" in pattern.groupindex and m.group("firm"):
                found.append(OfficialName(m.start("firm"), m.end("firm"), role, firm=True))
    return sorted(set(found), key=lambda o: o.start)


def _names_in(names: str, offset: int, role: str) -> list[OfficialName]:
    return [
        OfficialName(offset + m.start("name"), offset + m.end("name"), role)
        for m in _NAME_IN_LIST.finditer(names)
        if m.group("name") not in _NOT_A_NAME
    ]
