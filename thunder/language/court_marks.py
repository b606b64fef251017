"""The courts' own de-identification marks in published Korean decisions, and what each stood for.

A court publishes a decision with its marks where identifiers stood: ``피고인 1``, ``공소외 1``, ``소외인``, ``○○○``,
``김○○``, ``(주소 1 생략)``, ``甲 회사``, ``000000-0000000``. :func:`court_marks` finds them and gives each a
:class:`Mark`: its span, the label of the packaged taxonomy the identifier had, and its kind:

- ``id``: where an identifier stood (a placeholder for training: :mod:`thunder.documents.published`);
- ``plain``: a mark standing for text Thunder's policy keeps (a region inside a public body's name, ``○○세무서``;
  ``○○시장`` the mayor; a masked judge or counsel);
- ``ignore``: a mark whose meaning the context does not decide (``○○`` alone, a masked digit ``4○8``).

``entity`` is the same for every occurrence of one entity where the mark says so (``공소외 1``, ``(주소 1 생략)``,
``△△△``), else unique per occurrence. Span conventions are those of the annotated corpus
(``<<<아파트>>>D<<</아파트>>>아파트``): a role word stays and only its number is the mark (``피고인 [1]``);
``공소외``/``소외`` exist only because of the masking, so ``[공소외 1]`` is the mark whole; a head noun after a mask
stays outside (``[○○]병원``); an omission note is the mark with its parentheses (``서울 강남구 [(주소 1 생략)]``).

The words that decide are data (``resources/legal/court_marks.yaml``); the families of marks, one pattern each, and
the order in which they claim text are here. Label noise measured by hand: docs/experiments/2026-12-04-legal-corpus.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from thunder.language.morphemes import common_words, word_analysis

__all__ = ["KINDS", "MARKS_FILE", "Mark", "court_marks", "masked_entities"]

MARKS_FILE = Path(str(resources.files("thunder") / "resources" / "legal" / "court_marks.yaml"))
KINDS = ("id", "plain", "ignore")
PERSON, COMPANY, BUSINESS, ADDRESS = "내국인이름", "주식회사", "기업명", "주소"
MASK = "○◯◎□△▽◇☆♡♤◁▷◆◈★♧"  # ○ mostly; △ □ ◇ ☆ ... tell different entities apart within a decision
_COMPANY_FORMS = {"주식회사": COMPANY, "(주)": COMPANY, "㈜": COMPANY, "유한공사": "유한공사", "건설회사": "건설업체",
                  "증권회사": "증권사", "보험회사": "보험회사"}  # fmt: skip
_ORGANISATIONS = {"저축은행": "저축은행", "은행": "은행", "사단법인": "사단법인", "재단법인": "단체명",
                  "사회복지법인": "사회복지법인", "법인": BUSINESS, "학교법인": "학교", "의료법인": "의료법인",
                  "재단": "단체명", "건설": "건설업체", "증권": "증권사", "보험": "보험회사", "캐피탈": "금융회사",
                  "협회": "협회", "대학교": "대학교", "병원": "병원", "학교": "학교", "교회": "교회",
                  "새마을금고": "금융기관", "신용협동조합": "금융기관", "농업협동조합": "금융기관",
                  "수산업협동조합": "금융기관"}  # fmt: skip
_ADDRESS_UNITS = {"특별시": "시아래주소", "광역시": "시아래주소", "특별자치시": "시아래주소", "특별자치도": "도아래주소",
                  "도": "도아래주소", "시": "시아래주소", "군": "군아래주소", "구": "구아래주소", "읍": "읍아래주소",
                  "면": "면아래주소", "동": "동아래주소", "리": "동아래주소", "가": "동아래주소", "로": "구아래주소",
                  "길": "구아래주소"}  # fmt: skip
_METROPOLITAN = ("서울", "부산", "대구", "인천", "광주", "대전", "울산", "세종")
_PROVINCES = ("경기", "강원", "충북", "충남", "전북", "전남", "경북", "경남", "제주")


@dataclass(frozen=True)
class Mark:
    """A court mark ``text[start:end]``: ``label`` a label of the packaged taxonomy (empty when ``kind`` is
    ``ignore``), ``family`` the pattern that found it, ``entity`` its key within the decision."""

    start: int
    end: int
    label: str
    kind: str
    family: str
    entity: str


@dataclass(frozen=True)
class _Words:
    """The decisive words of ``resources/legal/court_marks.yaml``, compiled."""

    particle: str
    particles_only: re.Pattern
    roles: str
    nonparty: str
    person_before: str
    official_before: str
    surnames: re.Pattern
    heads: dict[str, tuple[str, str]]
    head: re.Pattern
    organisations: re.Pattern
    notes: list[tuple[re.Pattern, str, str]]
    families: dict[str, re.Pattern]


@lru_cache(maxsize=1)
def _words() -> _Words:
    data: dict[str, Any] = yaml.safe_load(MARKS_FILE.read_text(encoding="utf-8"))
    particle = "(?:" + "|".join(data["particles_after"]) + ")"
    roles, nonparty = "|".join(data["party_roles"]), "|".join(data["nonparty"])
    heads = {word: (h["label"], h["kind"]) for h in data["heads"] for word in h["words"]}
    ordered = sorted(heads, key=len, reverse=True)
    not_after = r"[호심차년월일회항조층동번쪽면명인원세개]"
    families = {
        # ``피고인 1``, ``원고 2``, ``피고인 1, 2``: only the number is the mark; not ``원고 1. 청구취지``, ``호증``
        "ROLE_NUMBER": re.compile(
            rf"(?<![가-힣])(?P<role>{roles})\s{{0,12}}"
            rf"(?P<nums>\d{{1,3}}(?!\d|,\d{{3}})(?:\s?(?:,|및|과|와|내지|ㆍ|·)\s{{0,12}}\d{{1,3}}(?!\d|,\d{{3}}))*)"
            rf"(?![\d.,]\d|\.\s|\.$|\)|{not_after}|\s?(?:호증|번지|내지\s*\d+호|%|퍼센트))"  # 피고 35%: a share
        ),
        # ``공소외 1``, ``소외 2``, ``청구외 3`` (``소외1`` too): the whole is the mark
        "NONPARTY_NUMBER": re.compile(
            rf"(?<![가-힣])(?P<role>{nonparty})\s?(?P<num>\d{{1,3}})(?![\d.]\d|\.\s|[호심차년월일항조인명개])"
            rf"(?P<more>(?:\s?(?:,|및|과|와|내지|ㆍ|·)\s{{0,12}}\d{{1,3}}(?![\d.]\d|\.\s|[호심차년월일항조인명개층번]))*)"
        ),
        # ``공소외인``, ``소외인``: the only masked non-party of a decision (not ``소외인들``)
        "NONPARTY_SINGLE": re.compile(rf"(?<![가-힣])(?:{nonparty})인(?!들)(?=[^가-힣]|{particle})"),
        # ``(주소 생략)``, ``(이하 주소 1 생략)``, ``(상호 생략)``, ``상세주소생략``: the note, parentheses included
        "OMITTED_NOTE": re.compile(
            r"\((?P<inner>(?:이하\s?)?(?P<what>[^()\n]{1,30}?)\s?(?P<num>\d{1,3}(?:\s?,\s?\d{1,3})*)?\s?생략)\)"
            r"|(?P<bare>(?:상세)?주소\s?생략|이하\s?주소\s?\d*\s?생략|(?:상세)?지번\s?생략|이하\s?생략)"
        ),
        # a run of mask symbols with the Hangul glued to it: ``○○○``, ``○○병원``, ``김○○``, ``○○시``
        "MASK": re.compile(rf"(?P<pre>[가-힣]{{0,4}})(?P<mask>[{MASK}]+)(?P<post>[가-힣A-Za-z]*)"),
        # ``甲``, ``乙`` (``甲 회사``, ``甲과 乙``): the parties of a summary or of an older decision
        "HANJA_PARTY": re.compile(r"(?<![一-龥])(?P<h>[甲乙丙丁戊己庚辛壬癸])(?:\s?(?P<n>\d{1,2}))?(?![一-龥])"),
        # ``갑이 을을 상대로``: only in 판시사항/판결요지 and where both 갑 and 을 are used so
        "HANGUL_PARTY": re.compile(
            r"(?:(?<=[\s(‘'“,·])|^)(?P<h>[갑을병])(?P<p>이|은|는|과|와|의|을|를|에게|으로부터|로부터|에|으로| 등)"
            r"(?=[\s,.)’”])", re.M),  # fmt: skip
        # ``피고인 C``, ``망 B``, ``주무관 A``: letters elsewhere are technical (B형 간염, 도 10A)
        "LATIN_PARTY": re.compile(
            rf"(?<![가-힣])(?P<role>{roles}|{nonparty}|망|주무관|위)\s(?P<l>[A-Z]{{1,2}})(?![A-Za-z0-9\-+/＆&'’])"
        ),
        # ``000000-0000000``, ``010-****-****``, ``****-****-1234``
        "DIGIT_MASK": re.compile(
            r"(?P<rrn>\d{6}-[0*]{7}|[0*]{6}-[0-9*]{7}|[0*xX]{6}-[1-4][0*xX]{6})"
            r"|(?P<phone>0\d{1,2}-[*xX]{3,4}-[\d*xX]{4})"
            r"|(?P<long>[\d*]{3,6}-[*]{2,6}-[\d*]{2,8}|[*]{4}-[*]{4}[\d]{1,4})"
        ),
    }
    return _Words(
        particle=particle,
        particles_only=re.compile(particle + "*"),
        roles=roles,
        nonparty=nonparty,
        person_before="(?:" + "|".join([*data["party_roles"], *data["nonparty"], *data["person_before"]]) + ")",
        official_before="|".join(data["official_before"]),
        surnames=re.compile("(?:" + "|".join(data["surnames"]) + ")"),
        heads=heads,
        head=re.compile("|".join(map(re.escape, ordered))),
        organisations=re.compile(
            rf"\s?({'|'.join(map(re.escape, _ORGANISATIONS))}|[가-힣]{{0,6}}조합)(?=$|[^가-힣]|{particle}|아파트)"
        ),
        notes=[(re.compile(n["pattern"]), n["label"], n["kind"]) for n in data["notes"]],
        families=families,
    )


# ----------------------------------------------------------------------------------------------- labels by context


_COMPANY_AFTER = re.compile(r"\s?(주식회사|\(주\)|㈜|유한회사|합자회사|유한공사|건설회사|증권회사|보험회사|[가-힣]{0,4}회사)")
_SUMMARY = re.compile(r"^## (?:판시사항|판결요지)\n[\s\S]*?(?=^## |\Z)", re.M)
_UNIT_BEFORE = re.compile(
    rf"(?:(?:[가-힣{MASK}]{{1,10}}|같은 )(?P<u>특별시|광역시|특별자치시|특별자치도|도|시|군|구|읍|면|동|리|가|로|길)|"
    rf"(?P<short>{'|'.join(_METROPOLITAN + _PROVINCES)}))\s*$"
)
_BUSINESS_BEFORE = re.compile(r"(?:업체|회사|법인|기업|은행|제조사|공급자|시행사|시공사|수입업자)인\s*(?:[甲乙丙丁戊己庚辛壬癸A-Z],\s*)*$")
_PERSON_AFTER = re.compile(r"^(?:\s?씨|\s?부부|\s?\((?:남|여|\d{1,3}세|\d{2,4}\.\s?\d|\d{6}))")
_PERSON_VERB = re.compile(  # what only a person does (``○○○은 검찰에서 … 진술하였다``)
    r"^(?:이|가|은|는|도)\s[^.。\n]{0,30}?(?:진술|증언|사망|말하|말했|이야기|고소|자백|태어|출생|혼인|결혼|이혼|임신|"
    r"출산|폭행|운전하|입사|퇴사|재직|거주하|살고|살았|졸업|입원|치료를 받|진단을 받|대답|답변|피의자|고백|자살)"
)
_LOT_AFTER = re.compile(rf"^(?:-[\d{MASK}]+)?(?:\s?(?:번지|토지|대|전|답|임야|잡종지|도로|구거|과수원|목장용지|하천)"
                        r"(?![가-힣])|\s?\(|[,\s]|$)")  # fmt: skip


def _company_label(after: str) -> str | None:
    """The label a numbered or lettered party takes from the word after it (``공소외 1 주식회사``), if any."""
    w = _words()
    if m := _COMPANY_AFTER.match(after):
        return _COMPANY_FORMS.get(m.group(1), BUSINESS)
    if m := w.organisations.match(after):
        return "조합" if m.group(1) not in _ORGANISATIONS else _ORGANISATIONS[m.group(1)]
    return None


def _next_word_label(text: str, end: int) -> str | None:
    """The label the word after a mark gives it: a company form, an organisation, or a head noun written apart
    (``甲 약국``, ``공소외 1 병원``)."""
    if label := _company_label(text[end : end + 12]):
        return label
    w = _words()
    if (word := re.match(r"\s([가-힣]+)", text[end : end + 15])) and (head := w.head.match(word.group(1))):
        label, kind = w.heads[head.group()]
        if len(head.group()) > 1 and w.particles_only.fullmatch(word.group(1)[head.end() :]) and kind == "id":
            return label
    return None


def _address_label(text: str, start: int) -> str:
    """The ``…아래주소`` label an address mark takes from the administrative unit written before it."""
    before = text[max(0, start - 40) : start]
    if not (m := _UNIT_BEFORE.search(before)):
        return ADDRESS
    if m.group("short"):
        return "시아래주소" if m.group("short") in _METROPOLITAN else "도아래주소"
    if m.group("u") == "리":  # a lot under a 리: the placeholder stands below the 면 or 읍
        return "읍아래주소" if re.search(r"[가-힣]읍\s", before) else "면아래주소"
    return _ADDRESS_UNITS[m.group("u")]


def _head_of(post: str) -> tuple[str, str, str] | None:
    """``(head, label, kind)`` when the Hangul glued after a mask is a head noun (with particles, or ending a longer
    name: ``○○이엔지개발``)."""
    w = _words()
    if m := w.head.match(post):
        head, rest = m.group(), post[m.end() :]
        if len(head) == 1 and rest and not w.particles_only.fullmatch(rest) \
                and not re.match(r"(?:장|청|민|내|외|소재|일대|지역|주민|사무소|의회)", rest):  # fmt: skip
            return None  # ○○동일한: a one-syllable unit must end the word (동에서, 시장, 군민)
        return (head, *w.heads[head])
    core = re.sub(f"{w.particle}+$", "", post) or post
    for head in sorted(w.heads, key=len, reverse=True):
        if len(head) >= 2 and core.endswith(head) and len(core) <= len(head) + 6:
            return (head, *w.heads[head])
    return None


def _glued_head(text: str, s: int, e: int, pre: str, post: str) -> tuple[int, int, str, str]:
    """A mask with a word glued after it: ``○○병원``, ``○○시``, ``아파트 ○○동 ○○호``."""
    found = _head_of(post)
    if found is None:
        return (s, e, COMPANY, "id") if re.search(r"(?:주식회사|회사)$", pre) else (s, e, "", "ignore")
    head, label, kind = found
    if kind == "id_or_mayor":  # ○○시장: the mayor of ○○시 far more often than a market
        market = re.match(r"\s?(?:뒤|앞|안|내|입구|상가|골목|근처|부근|주차장|상인|번영회)", text[e + len(post) : e + len(post) + 6])
        label, kind = ("시장", "id") if market else ("행정시", "plain")
    building = re.search(r"(?:아파트|빌라|맨션|오피스텔|빌딩|연립|생략\))[^\n]{0,12}$", text[max(0, s - 24) : s])
    if head == "동" and (building or re.match(rf"\s?[\d{MASK}]+\s?호", text[e + 1 : e + 10])):
        label, kind = "동", "id"  # ○○아파트 △△△동 △△△△호: a building's number
    elif head in ("호", "층"):
        label, kind = {"호": "호실", "층": "층"}[head], "id"
    return (s, e, label, kind)


def _label_mask(text: str, m: re.Match) -> tuple[int, int, str, str] | None:
    """``(start, end, label, kind)`` of a mask word, or None where it is no mark (a bullet)."""
    w = _words()
    pre, mask, post = m.group("pre"), m.group("mask"), m.group("post")
    s, e = m.start("mask"), m.end("mask")
    if re.match(r"\d", text[e : e + 1]) or re.search(r"\d$", text[max(0, s - 1) : s]):
        return (s, e, "", "ignore")  # a masked digit of a lot number, or a table's tick
    line_start = text.rfind("\n", 0, s) + 1
    if not pre and e - s == 1 and not text[line_start:s].strip():
        return None  # ``○ 원고는 …``: a bullet
    name_after = post == "" or w.particles_only.fullmatch(post)
    one_syllable = len(mask) == 1 and re.fullmatch(rf"[가-힣]{w.particle}*", post)
    if pre and w.surnames.fullmatch(pre) and (name_after or one_syllable):
        end = e + 1 if one_syllable and not name_after else e  # 이○호: the syllable after is the name's
        return (m.start("pre"), end, PERSON, "id")
    if not pre and s >= 2 and text[s - 1] in "동리가" and (text[s - 2] in MASK or "가" <= text[s - 2] <= "힣") \
            and post in ("", "번지") and _LOT_AFTER.match(text[e : e + 8]):  # fmt: skip
        if text[s - 1] == "리":  # ○○리◇◇◇ 토지: a lot number below the 면 or 읍
            return (s, e, "읍아래주소" if "읍" in text[max(0, s - 15) : s] else "면아래주소", "id")
        return (s, e, "동아래주소", "id")
    if post and not name_after:
        return _glued_head(text, s, e, pre, post)
    return _alone(text, s, e, pre, post)


def _alone(text: str, s: int, e: int, pre: str, post: str) -> tuple[int, int, str, str]:
    """A mask standing alone or with particles: the words around it decide."""
    w = _words()
    after, before = text[e : e + 40], text[max(0, s - 25) : s]
    if pre:  # glued after a word: 주식회사○○, 원고○○○; another word makes a longer name we cannot label
        if re.search(r"(?:주식회사|회사)$", pre):
            return (s, e, COMPANY, "id")
        return (s, e, PERSON, "id") if re.fullmatch(w.person_before, pre) else (s, e, "", "ignore")
    if label := _company_label(after):  # ○○○ 주식회사, ○○ 은행
        return (s, e, label, "id")
    if (word := re.match(r"\s([가-힣]+)", after)) and not post and (found := _head_of(word.group(1))):
        head, label, kind = found
        if len(head) > 1 and word.group(1).startswith(head) and kind in ("id", "plain", "id_or_mayor"):
            return (s, e, "행정시", "plain") if kind == "id_or_mayor" else (s, e, label, kind)  # ○○○ 병원
    if re.search(r"(?:주식회사|\(주\)|㈜|유한회사|합자회사)\s*$", before):
        return (s, e, COMPANY, "id")
    if re.search(rf"(?:{w.official_before})\s*$", before) or re.match(r"\s?\((?:재판장|주심)\)", after):
        return (s, e, PERSON, "plain")  # a judge, prosecutor or counsel: courts publish their names
    if re.search(r"(?:법무법인|특허법인)(?:\([^)]*\))?\s*$", before):
        return (s, e, "법무법인", "plain")
    if re.search(rf"(?<![가-힣])(?:제\d심|원심|당심)?(?:{w.person_before})\s*$", before):
        return (s, e, PERSON, "id")
    if _PERSON_AFTER.match(after) or _PERSON_VERB.match(after):
        return (s, e, PERSON, "id")
    if re.search(r"】\s*$", before) or re.match(r"\s*\((?:소송대리인|대표|\d{6}|생년월일)", after):
        return (s, e, PERSON, "id")  # the header of the parties: 【원고, 피상고인】 ○○○ (소송대리인 …
    return (s, e, "", "ignore")


# ----------------------------------------------------------------------------------------------- the families


def _notes(text: str, found: list[Mark]) -> None:
    w = _words()
    for m in w.families["OMITTED_NOTE"].finditer(text):
        what, number = m.group("what") or m.group("bare") or "", m.group("num") or ""
        label, kind = next(((label, kind) for pattern, label, kind in w.notes if pattern.search(what)), ("", "ignore"))
        if re.fullmatch(r"이하\s?", what) or (m.group("bare") and re.match(r"이하\s?생략", m.group("bare"))):
            if not _UNIT_BEFORE.search(text[max(0, m.start() - 40) : m.start()]):
                continue  # (이하 생략) after no address unit: "and so on"
            label, kind = "ADDR", "id"  # 대구 수성구 범어동 (이하 생략): the rest of an address
        if kind == "not":
            continue
        if label == "ADDR":
            label = _address_label(text, m.start())
            previous = next((c for c in reversed(found) if c.family == "OMITTED_NOTE"), None)
            between = text[previous.end : m.start()] if previous else ""
            if label == ADDRESS and previous and previous.label.endswith("아래주소") and m.start() - previous.end < 60 \
                    and re.fullmatch(r"[\s,및와과]*(?:(?:대|전|답|임야|잡종지|도로|구거)\s*[\d,.]+\s*(?:㎡|평)?[\s,및와과]*)?",
                                     between):  # fmt: skip
                label = previous.label  # 처인구 (주소 1 생략) 전 1,577㎡, (주소 2 생략): under the same unit
        elif label == BUSINESS and (head := w.head.match(text[m.end() : m.end() + 8])):
            if len(head.group()) > 1 and w.heads[head.group()][1] == "id":
                label = w.heads[head.group()][0]  # (상호 생략)노래방: the head noun names the kind
        key = re.sub(r"\s", "", what) + (number.replace(" ", "") or f"@{m.start()}")
        found.append(Mark(m.start(), m.end(), label, kind, "OMITTED_NOTE", "note:" + key))


def _digits(text: str, found: list[Mark]) -> None:
    for m in _words().families["DIGIT_MASK"].finditer(text):
        before = text[max(0, m.start() - 20) : m.start()]
        if re.search(r"(?:출원번호|특허|공보|(?<!주민)(?<!외국인)(?<!사업자)(?<!법인)등록번호|공개번호|제)\s*$", before[-12:]):
            continue  # 출원번호 제***-****-****4호: a patent number (not 주민등록번호 000000-0000000)
        if re.search(r"법인등록번호\s*:?\s*$", before[-12:]):
            label = ""  # a corporation's registration number: no personal identifier
        elif m.group("rrn"):
            label = "주민등록번호"
        elif m.group("phone"):
            label = "전화번호"
        else:
            label = "신용카드번호" if "카드" in before else "계좌번호" if "계좌" in before else \
                "전화번호" if "전화" in before or "휴대" in before else ""  # fmt: skip
        found.append(Mark(m.start(), m.end(), label, "id" if label else "ignore", "DIGIT_MASK", f"num@{m.start()}"))


def _nonparties(text: str, found: list[Mark]) -> None:
    w = _words()
    for m in w.families["NONPARTY_NUMBER"].finditer(text):
        label, role = _next_word_label(text, m.end()) or PERSON, m.group("role")
        more = list(re.finditer(r"\d{1,3}", m.group("more") or ""))
        found.append(Mark(m.start(), m.end("num"), PERSON if more else label, "id", "NONPARTY_NUMBER",
                          f"{role}{m.group('num')}"))  # fmt: skip
        for i, number in enumerate(more):  # 공소외 1, 2: the listed numbers are marks too; the last takes the label
            start = m.start("more") + number.start()
            found.append(Mark(start, start + len(number.group()), label if i == len(more) - 1 else PERSON, "id",
                              "NONPARTY_NUMBER", f"{role}{number.group()}"))  # fmt: skip
    for m in w.families["NONPARTY_SINGLE"].finditer(text):
        end = m.start() + len(re.match(rf"(?:{w.nonparty})인", text[m.start() :]).group())
        found.append(Mark(m.start(), end, _company_label(text[end : end + 8]) or PERSON, "id", "NONPARTY_SINGLE",
                          text[m.start() : end]))  # fmt: skip


def _parties(text: str, found: list[Mark]) -> None:
    w = _words()
    for m in w.families["ROLE_NUMBER"].finditer(text):
        base = re.sub(r"^(원심공동|제1심공동|공동|상|동|원심)", "", m.group("role")) or m.group("role")
        numbers = list(re.finditer(r"\d{1,3}", m.group("nums")))
        label = _company_label(text[m.end() : m.end() + 8]) or PERSON
        for i, number in enumerate(numbers):  # the word after gives its label to the last number only
            start = m.start("nums") + number.start()
            found.append(Mark(start, start + len(number.group()), label if i == len(numbers) - 1 else PERSON, "id",
                              "ROLE_NUMBER", f"{base}{number.group()}"))  # fmt: skip
    for m in w.families["LATIN_PARTY"].finditer(text):
        if m.group("role") == "위" and not re.match(rf"{w.particle}?[\s,.]", text[m.end() : m.end() + 4]):
            continue
        kind = "ignore" if m.group("role") == "위" else "id"  # 위 C: the decision's earlier mention decides
        found.append(Mark(m.start("l"), m.end("l"), _next_word_label(text, m.end()) or PERSON, kind, "LATIN_PARTY",
                          "latin:" + m.group("l")))  # fmt: skip


_NO_NAME_AFTER = re.compile(  # 甲 토지, 乙 살균제, 丙 국: a plot, a product or a state, where no name stood
    r"\s?(?:토지|건물|부동산|부분|지상|필지|아파트|호|동|층|구역|지역|부지|살균제|제품|상품|의약품|약품|제제|발명|상표|"
    r"표장|디자인|국|나라|정부)"
)
_PUBLIC_AFTER = re.compile(r"\s?(?:공사|공단|지방자치단체|시|군|구|도|세무서|시장|군수|구청장|청장|위원회|대학|학교)")


def _hanja(text: str, found: list[Mark]) -> None:
    for m in _words().families["HANJA_PARTY"].finditer(text):
        after = text[m.end() : m.end() + 12]
        if re.match(r"\s?(?:제\s?\d|\d+호증|호증|호)", after):
            continue  # 甲 제1호증: an exhibit
        label = "" if _NO_NAME_AFTER.match(after) else _next_word_label(text, m.end())
        if label is None and _BUSINESS_BEFORE.search(text[max(0, m.start() - 25) : m.start()]):
            label = BUSINESS  # 스위스 업체인 乙
        if label == "" or (label is None and _PUBLIC_AFTER.match(after)):
            label, kind = "", "ignore"  # no name stood there, or a public body (乙 세무서)
        else:
            label, kind = label or PERSON, "id"
        found.append(Mark(m.start(), m.end(), label, kind, "HANJA_PARTY", "hanja:" + m.group()))


def _hangul(text: str, found: list[Mark]) -> None:
    summaries = [(m.start(), m.end()) for m in _SUMMARY.finditer(text)]
    parties = [m for m in _words().families["HANGUL_PARTY"].finditer(text)
               if any(a <= m.start() < b for a, b in summaries)]  # fmt: skip
    if {m.group("h") for m in parties} >= {"갑", "을"}:
        for m in parties:
            label = _company_label(text[m.end("h") : m.end("h") + 8]) or PERSON
            found.append(Mark(m.start("h"), m.end("h"), label, "id", "HANGUL_PARTY", "hangul:" + m.group("h")))


def _masks(text: str, found: list[Mark]) -> None:
    w = _words()
    for m in w.families["MASK"].finditer(text):
        if (labelled := _label_mask(text, m)) is None:
            continue
        s, e, label, kind = labelled
        glued = bool(re.match(r"[가-힣]", text[e : e + 1])) and not w.particles_only.fullmatch(m.group("post"))
        distinct = re.fullmatch(f"[{MASK.replace('○', '')}]+", text[s:e]) and not glued
        found.append(Mark(s, e, label, kind, "MASK", f"sym:{text[s:e]}" if distinct else f"mask@{s}"))


def court_marks(text: str) -> list[Mark]:
    """Every court mark of ``text``, sorted, without overlaps (an earlier family wins: omission notes, digit masks,
    non-parties, numbered and lettered parties, Hanja and Hangul parties, mask symbols), one label per entity."""
    found: list[Mark] = []
    for family in (_notes, _digits, _nonparties, _parties, _hanja, _hangul, _masks):
        family(text, found)
    kept: list[Mark] = []
    taken: list[tuple[int, int]] = []
    for mark in found:
        if not any(mark.start < end and start < mark.end for start, end in taken):
            kept.append(mark)
            taken.append((mark.start, mark.end))
    return _harmonise(sorted(kept, key=lambda mark: mark.start))


def _harmonise(marks: list[Mark]) -> list[Mark]:
    """One label per entity: an entity written once as a company (``공소외 1 주식회사``) is a company throughout, and
    a mark the context left undecided takes the label its entity has elsewhere in the decision, when that is one."""
    labels: dict[str, set[str]] = {}
    for mark in marks:
        keyed = not mark.entity.startswith(("mask@", "num@", "note:")) or "@" not in mark.entity
        if mark.kind == "id" and keyed:
            labels.setdefault(mark.entity, set()).add(mark.label)
    result = []
    for mark in marks:
        known = labels.get(mark.entity, set())
        if mark.kind == "id" and len(known - {PERSON}) == 1 and len(known) > 1:
            mark = replace(mark, label=next(iter(known - {PERSON})))
        elif mark.kind == "ignore" and len(known) == 1:
            mark = replace(mark, label=next(iter(known)), kind="id")
        result.append(mark)
    return result


_MASKED_WORD = re.compile(rf"\S*[{MASK}]\S*")
_WORD = re.compile(r"\S+")
_LETTER_RUN = re.compile(r"[^\W\d_]+|\d+")


def masked_entities(text: str) -> list[tuple[int, int]]:
    """Entities the court already masked, as ``(start, end)``: each word holding one of the court's masks whose
    letters besides the masks are one syllable or the dictionary's common vocabulary (``□□사``, ``○○대학교병원``,
    ``최○○``, ``강동구○○동``; not ``○○리 126-``: digits stay an identifier's), with the word after it where that is
    common vocabulary and the masked word ends in no particle or punctuation (``□□사 납골당``, ``♤♤♤ 사모펀드``):
    the masks stand for the identifier, the rest says what it was."""
    found = []
    for match in _MASKED_WORD.finditer(text):
        runs = _LETTER_RUN.findall(match.group())
        if not all(len(run) == 1 and not run.isdigit() or common_words(run) for run in runs):
            continue
        start, end = match.span()
        last = match.group()[-1]
        open_ended = last in MASK or last.isalpha() and not (runs and word_analysis(runs[-1])[-1][1].startswith("J"))
        following = _WORD.match(text, end + 1) if end < len(text) and text[end] == " " else None
        if open_ended and following and common_words(following.group()):
            end = following.end()
        found.append((start, end))
    return found
