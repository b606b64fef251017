"""A person's name where a judgment's wording says one stands: after the role a person plays in the case, or before
the resident number, sex or age a judgment writes after a name.

Judgments name people in fixed places: the parties in the header (``피고(반소원고) 강화훈 (941217-...)``,
``원      고     김철``), everyone else by role or relation (``감정인 백밀참``, ``간호사 김처어의 사실확인서``,
``피고인의 누나 김소리가``, ``이웃 석초인의``), often with sex and age after the name (``김칸창(남, 35세)``). The model
learns most of them; this recognizer finds a name in such a place when the model does not, and as a recognizer's
span it is then replaced at every occurrence of its text in the document.

A candidate is the Hangul word right after a role word, on the same line or the next (published decisions are
wrapped at a margin: ``의사 ⏎ 김형준으로부터``), a few particles after it cut off (see
:func:`split_particles`) or right before ``(`` with a resident number, sex or age (there no particle comes between:
``김인이(51세)``). It is a name when it has two to four syllables, starts with a Korean surname, and is no word
(:func:`name_in`): not legal text (:class:`thunder.language.legal.LegalText`), a protected word, a common word of the genre or
a city, county or district, and not one dictionary word by Mecab-ko (``원고 주장은``, ``피해자 본인``, ``증인 신문``)
unless the dictionary knows it as a person's name or it is a rare noun shaped like one (``피고인 홍길동은``: three
syllables, a surname first, none of the general nouns of Korean). Names listed with middle dots after a role are each found
(``피고인 김철수·이영희``); a foreign name is found whole, its words joined by middle dots or spaces, where Mecab-ko
knows its words as persons' names (``원고 쿠즈네초바 이리나``, ``물리치료사 올가·소콜로프``; :func:`foreign_name`).
A name in quotes after its role is found whole (``피고인 '김민수'는``), and the text is read in the recognizers'
normalised view (a zero-width space inside a name is no break). A header's party written with a registration number
after the name is found whatever the name's words
(``피고 후지에 (외국인등록번호 …``, ``상 대 방 자오 진 (990714-…``), unless a word is a role, an organisation's form
(``주식회사 한빛 (110111-…``), a common word or a place (:func:`party_name`); so are the parties a header lists by
number after their role (``원 고 1. 김령항 / 2. 고속상``, :func:`_listed_parties`).
The officials whose names courts publish (judges, prosecutors, counsel) have no role word here: their
names follow the officials policy (:mod:`thunder.deid.protection`). The pipeline also takes the names joined to a found
one by ``과``/``와``, a comma, a middle dot or ``및`` (:func:`coordinated_names`: ``증인 최별겨, 김주무, 박존허``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from functools import lru_cache
from typing import Iterable

from thunder.deid.policy import PROTECTED_WORDS
from thunder.identifiers.base import PatternRecognizer, ScoredSpan
from thunder.identifiers.normalize import normal_view
from thunder.language.genre import load_genre_words
from thunder.language.legal import PARTY_ROLES, PERSON_ROLES, ROLE_WORDS, LegalText
from thunder.language.morphemes import final_particles, is_person, noun_compound, word_analysis
from thunder.language.particles import PARTICLE_RUN, agrees
from thunder.language.regions import PLACE_NAMES
from thunder.synthesis.names import DOUBLE_SURNAMES, SURNAMES
from thunder.synthesis.vocabulary import load_general_nouns

_SPACED = "[ \\t]{0,8}"
_PARTY = "|".join(_SPACED.join(role) for role in sorted(PARTY_ROLES, key=len, reverse=True))
_ROLE = "|".join(sorted(PERSON_ROLES, key=len, reverse=True))
_NOTE = r"(?:[ \t]*\([^()\n]{1,12}\))?[ \t]+"  # after a role: 피고(반소원고), 원고(선정당사자), then blanks
_WRAP = r"[ \t]*\n[ \t]*"  # ... or the end of a line: published decisions are wrapped at a margin (의사 ⏎ 김철수)
_AFTER_ROLE = re.compile(
    rf"(?<![가-힣])(?:{_PARTY}|{_ROLE})인?(?:{_NOTE}|{_WRAP})"  # the role (처남인: "who is the brother-in-law")
    r"(?:(?P<quote>['‘\"“])(?P<quoted>[가-힣]{2,4})['’\"”]|(?P<word>[가-힣]{2,8})(?![가-힣]))"  # 피고인 '김민수'는
)
_BEFORE_DETAILS = re.compile(  # the details may wrap to the next line: 강산겐( ⏎ 980205-…
    r"(?<![가-힣])(?P<word>[가-힣]{2,4})[ \t]*\([ \t]*(?:\n[ \t]*)?(?:\d{6}[ \t]*-|[남여](?:자|성)?[ \t]*[,)]|\d{1,3}[ \t]*세)"
)
# a header's party: the role, then the name of one to four words (a spaced or foreign one too: 길 영길, 자오 진), then
# the resident or foreign registration number in parentheses, perhaps on the next line
_PARTY_HEADER = re.compile(
    rf"(?<![가-힣])(?:{_PARTY}){_NOTE}"
    r"(?P<name>[가-힣]{1,8}(?:(?:[ \t]{1,3}|·)[가-힣]{1,8}){0,3})[ \t]*\n?[ \t]*"
    r"\((?:\d{6}[ \t]*-|(?:주민|외국인)등록번호)"
)
# a header's parties listed by number after their role (원 고 1. 김령항 / 2. 박시우 / ...), addresses between them
_PARTY_LIST = re.compile(rf"(?<![가-힣])(?:{_PARTY}){_NOTE}(?=1\.)")
_LIST_ITEM = re.compile(r"[ \t]*(?P<number>\d{1,2})\.[ \t]*(?:(?P<word>[가-힣]{2,4})[ \t]*(?:\(|$))?")
_NEXT_PARTY = re.compile(rf"[ \t]*(?:【)?(?:{_PARTY})")
_MAX_LIST_LINES = 16
_ORGANISATION = re.compile(r"(?:회사|법인|조합|협회|공사|공단|은행|재단|학교|병원|의원)$")  # 주식회사, 사단법인, 농협은행
# the next part of a name of several words (올가·소콜로프, 쿠즈네초바 이리나) or of a list of names (김철수·이영희)
_NEXT_PART = re.compile(r"(?P<separator>·|[ \t])(?P<part>[가-힣]{2,8})(?![가-힣])")
_MAX_PARTS = 4  # words of one name, or names in one list
_SURNAMES = frozenset(SURNAMES)
# the twenty most common Korean surnames (about four in five people; Statistics Korea's census)
COMMON_SURNAMES = frozenset("김이박최정강조윤장임한오서신권황안송류유전홍")
_ROLE_WORDS = frozenset(role for role in ROLE_WORDS if len(role) > 1)


def split_particles(word: str, longest: int = 4) -> list[str]:
    """The readings of ``word`` as a name of two to ``longest`` syllables followed by particles, by the vocative
    ``아`` or ``야`` (``홍길동아``, ``영희야``) or by nothing, longest first (``두단고로부터`` -> ``두단고로``,
    ``두단고``); none ends in a particle written after the name (:func:`~thunder.language.morphemes.final_particles`:
    ``이씨는`` -> ``이씨``, not ``이씨는``)."""
    cuts = range(min(len(word), longest), 1, -1)
    return [word[:cut] for cut in cuts
            if (cut == len(word) or PARTICLE_RUN.fullmatch(word, cut) or _vocative(word, cut))
            and not final_particles(word, 0, cut)]  # fmt: skip


def _vocative(word: str, cut: int) -> bool:
    """Whether ``word`` ends at ``cut`` in the vocative particle agreeing with the name before it (``홍길동|아``)."""
    return word[cut:] in ("아", "야") and agrees(word[:cut], word[cut:]) is True


_GRAMMAR = ("J", "E", "VCP", "XSN")  # particles, endings, the copula, noun suffixes (들, 용)


def is_word(analysis: tuple[tuple[str, str, str], ...]) -> bool:
    """Whether Mecab-ko reads a text as one dictionary word other than a person's name (``주장``, ``이제``), or as one
    common word with particles, the copula or endings after it (``이에게``, ``방으로``, ``사이이고``, ``소유였고``)."""
    if len(analysis) == 1:
        return analysis[0][1] != "UNKNOWN" and not is_person(analysis)
    content = [m for m in analysis if not m[1].startswith(_GRAMMAR)]
    return len(content) == 1 and content[0] is analysis[0] and content[0][1] in ("NNG", "NNB", "NP", "VV", "VA", "MAG")


def _word_and_grammar(analysis: tuple[tuple[str, str, str], ...]) -> bool:
    """Whether Mecab-ko reads a text as a dictionary word of two syllables or more and then particles, the copula or
    endings of two syllables or more (``사안|에서``, ``부부|인데``): a word of a sentence, not a name, which read as
    pieces starts with a surname of one syllable (``박|은지``)."""
    grammar = 0
    for surface, tag, _ in reversed(analysis):
        if not tag.startswith(("J", "E", "VCP")):
            break
        grammar += len(surface)
    return grammar >= 2 and is_word(analysis) and len(analysis[0][0]) >= 2


def _name_shaped_noun(reading: str, analysis: tuple[tuple[str, str, str], ...]) -> bool:
    """Whether ``reading`` is a dictionary noun shaped like a name and rare as a word: three syllables, one of the
    :data:`COMMON_SURNAMES` first, one common noun by Mecab-ko that is none of the general nouns of Korean and no
    compound of a common noun (``홍길동``, the dictionary's everyman, is a noun there, ``홍+길동``; ``이야기`` is a
    general noun; ``조합원`` is ``조합+원``; ``구치소`` starts with no common surname)."""
    return (len(reading) == 3 and reading[0] in COMMON_SURNAMES and len(analysis) == 1 and analysis[0][1] == "NNG"
            and reading not in _general_nouns() and not noun_compound(reading))  # fmt: skip


@lru_cache(maxsize=1)
def _general_nouns() -> frozenset[str]:
    return frozenset(load_general_nouns())


def _common_compound(name: str, particles: bool = False) -> bool:
    """Whether Mecab-ko reads ``name`` as two nouns of two syllables or more, the second a common noun, the first a
    common noun or a place (``신문조서``, ``사촌언니``; an office or a body of a place: ``김해군수``, ``양양군청``);
    with ``particles``, so followed by one particle or more (``단독명의|로``)."""
    analysis = word_analysis(name)
    nouns, rest = analysis[:2], analysis[2:]
    if (len(nouns) != 2 or not all(len(m[0]) >= 2 for m in nouns) or nouns[1][1] != "NNG"
            or bool(rest) != particles or not all(m[1].startswith("J") for m in rest)):  # fmt: skip
        return False
    place = nouns[0][1:] == ("NNP", "지명") and name[:2] not in DOUBLE_SURNAMES  # 남궁|지연 is a name
    return nouns[0][1] == "NNG" or place


@lru_cache(maxsize=1)
def _not_names() -> tuple[LegalText, frozenset[str]]:
    return LegalText(), frozenset(PROTECTED_WORDS) | load_genre_words(True) | PLACE_NAMES


def name_in(word: str, shared: frozenset[str] = frozenset(), particles: bool = True) -> str | None:
    """The name that ``word`` (a Hangul word in a place where a judgment names a person) starts with, or ``None``.

    Of the readings of :func:`split_particles`, the longest of ``shared`` wins (readings that other words of the
    document share: ``오숿은``, ``오숿의`` -> ``오숿``), then one Mecab-ko knows as a person's name, then three
    syllables, two, four (most Korean names have three); a word that is another dictionary word as it stands or
    less its last particles is none. Where no particle can follow (``particles=False``: right before ``(`` and a
    resident number, sex or age, or a comma of a list) the whole word is the only reading, and only one dictionary
    word is none (``연예은 (920205-…``), or one with particles or an ending after it (``사안에서, 김보잴이``). The
    name must start with a surname and be neither legal text, nor a protected or common word or a place, nor two
    common nouns, nor start or end with a role."""
    if not particles:
        analysis = word_analysis(word)
        if len(analysis) == 1 and is_word(analysis) or _word_and_grammar(analysis):
            return None
        readings, persons = [word], []
    else:
        readings = split_particles(word)
        analyses = {reading: word_analysis(reading) for reading in readings}
        persons = [r for r in readings if is_person(analyses[r]) or _name_shaped_noun(r, analyses[r])]
        stem = next((reading for reading in readings if reading != word), word)  # less its last particles
        stem_is_word = len(analyses.get(stem, ())) == 1 and is_word(analyses[stem])  # one dictionary word: 주장|은
        if not persons and (is_word(word_analysis(word)) or stem_is_word):
            return None
    preference = {3: 0, 2: 1, 4: 2}
    ranked = sorted(readings, key=lambda r: (r not in shared, -len(r) if r in shared else 0, r not in persons,
                                             preference.get(len(r), len(preference))))  # fmt: skip
    legal, words = _not_names()
    if _common_compound(word, particles=True):
        return None  # a compound of nouns and its particles (단독명의|로), whatever a shorter reading
    for name in ranked:
        if not surname_first(name):
            continue
        if name in words or word in words or _common_compound(name) or any(s.start == 0 for s in legal.find(name)):
            return None
        if _role_at_an_end(name):
            return None  # 남편인, 사촌언니: a role, not a name after it
        return name
    return None


def surname_first(word: str) -> bool:
    """Whether ``word`` starts with a Korean surname (``남궁``, ``김``)."""
    return word[:2] in DOUBLE_SURNAMES or word[0] in _SURNAMES


def _role_at_an_end(word: str) -> bool:
    """Whether ``word`` starts or ends with a role word (``남편인``, ``사촌언니``)."""
    return any(word.startswith(role) or word.endswith(role) for role in _ROLE_WORDS)


def party_name(name: str) -> bool:
    """Whether ``name``, written between a header's party role and a registration number, is a person's: two
    syllables or more, no word of it a role, an organisation's form (``주식회사``, ``사단법인``), a protected or common
    word or a place, and no legal text."""
    words = re.split(r"[ \t·]+", name)
    legal, common = _not_names()
    if len(name.replace(" ", "").replace("\t", "").replace("·", "")) < 2:
        return False
    if any(w in _ROLE_WORDS or w in common or _ORGANISATION.search(w) for w in words):
        return False
    return not legal.find(name)


def _listed_parties(text: str, start: int) -> list[tuple[int, int]]:
    """The names of a header's numbered list of parties that starts at ``start`` (``1. 김령항``): the item numbered
    one more than the last on each following line, lines between them (addresses) skipped, up to the next party role
    or a break in the numbering; a list whose first item is no name is none. An item is a name when it is one word
    of two to four syllables that :func:`party_name` takes and that starts with a surname; the dictionary is not
    asked (``고속상``): the header says it is a party. A particle at the end of a line's word is no part of the name
    (``피고인 1. 김철수는 ⏎``: a sentence wrapped after the name)."""
    names, expected, position = [], 1, start
    for _ in range(_MAX_LIST_LINES):
        end = text.find("\n", position)
        end = len(text) if end < 0 else end
        line = text[position:end]
        item = _LIST_ITEM.match(line)
        if item and int(item.group("number")) == expected:
            word = item.group("word")
            if word and surname_first(word) and party_name(word):
                begin, finish = position + item.start("word"), position + item.end("word")
                cut = 0 if item.group().rstrip().endswith("(") else final_particles(text, begin, finish)
                names.append((begin, finish - cut if finish - cut - begin >= 2 else finish))  # 1. 김철수는 ⏎
            elif expected == 1:
                break  # a list of parties starts with a name (원고 1. 소유권이전등기절차를 ...: no list)
            expected += 1
        elif item or (expected > 1 and _NEXT_PARTY.match(line)):
            break
        if end >= len(text):
            break
        position = end + 1
    return names


def _foreign_part(part: str, beside_dot: bool) -> bool:
    """Whether ``part`` can be a word of a foreign name: one a Mecab-ko knows as a person's name (``쿠즈네초바``,
    ``이리나``), or, written beside a middle dot, any proper noun but a place, or an unknown word (``올가``)."""
    analysis = word_analysis(part)
    if len(analysis) != 1 or part in _not_names()[1] or part in _ROLE_WORDS:
        return False
    _, pos, meaning = analysis[0]
    return is_person(analysis) or beside_dot and (pos == "NNP" and meaning != "지명" or pos == "UNKNOWN")


def foreign_name(parts: list[tuple[str, str]]) -> int:
    """The length of the foreign name the words ``parts`` (``(separator before, word)``, the first word's separator
    empty) start with, or 0: words of a foreign name (:func:`_foreign_part`), the last perhaps with particles, at
    least one of them a person's name by the dictionary (``올가·소콜로프``; ``쿠즈네초바 이리나가``: ``쿠즈네초바
    이리나``)."""
    length, person = 0, False
    for index, (separator, part) in enumerate(parts):
        following = parts[index + 1][0] if index + 1 < len(parts) else ""
        beside_dot = "·" in (separator, following)
        stems = split_particles(part, longest=len(part))
        stem = next((stem for stem in stems if _foreign_part(stem, beside_dot)), None)
        if stem is None:
            break
        length += len(separator) + len(stem)
        person = person or is_person(word_analysis(stem))
        if stem != part:
            break  # particles end the name
    return length if person else 0


_JOINED = r"(?:(?:과|와)[ \t]+|[ \t]*[,·][ \t]*|[ \t]+및[ \t]+)"  # 김철수와 이영희, 김철수, 이영희, 김철수 및 이영희
_JOINED_AFTER = re.compile(rf"{_JOINED}(?P<word>[가-힣]{{2,8}})(?![가-힣])")
_JOINED_BEFORE = re.compile(rf"(?<![가-힣\d])(?P<word>[가-힣]{{2,4}}){_JOINED}$")  # not a count: 400주이고
_BETWEEN = re.compile(rf"{_JOINED}(?P<word>[가-힣]{{2,4}}){_JOINED}")  # what stands between two names of a list
_LOOK_BEFORE = 16  # characters searched before a name for one joined to it


def coordinated_names(
    text: str, names: list[tuple[int, int]], elsewhere: Iterable[tuple[int, int]] = ()
) -> list[tuple[int, int]]:
    """The names joined to known ones (``names``: ``[start, end)`` of persons' names found in ``text``) by ``과``/``와``,
    a comma, a middle dot or ``및``, before or after them (``김잘상과 김뎐던이``, ``최별겨, 김주무, 이던핸``), each a
    name by :func:`name_in`; found again from those found, until none is new. A word listed between two names
    (``이잔, 송하, 김넌하``; ``임이아, 하낼망과 박숭``) is one whatever the dictionary reads in it
    (:func:`_listed_between`); there, and only there, the occurrences ``elsewhere`` (of names found at other places)
    count as names too."""
    known, ends = set(names), set(elsewhere)
    frontier = sorted(known)
    while frontier:
        found = [span for span in _listed_between(text, sorted(known | ends)) if span not in ends]
        for start, end in frontier:
            if after := _JOINED_AFTER.match(text, end):
                name = None if _predicate(after.group("word")) else name_in(after.group("word"))
                if name is not None:
                    found.append((after.start("word"), after.start("word") + len(name)))
            if before := _JOINED_BEFORE.search(text[max(0, start - _LOOK_BEFORE) : start]):
                word_start = max(0, start - _LOOK_BEFORE) + before.start("word")
                word = before.group("word")
                if not _predicate(word) and name_in(word, particles=False) == word:
                    found.append((word_start, word_start + len(word)))
        frontier = sorted(set(found) - known)
        known.update(frontier)
    return sorted(known - set(names))


def _listed_between(text: str, names: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The words listed between two consecutive ``names`` (sorted), joined to both by ``과``/``와``, a comma, a middle
    dot or ``및``: a list of persons goes on with a person, so a word there of two to four syllables that starts with
    a surname is a name even where Mecab-ko reads a common word or a verb in it (``송하``, ``하|낼|망``), unless it is
    legal text, a protected or common word of the genre, a place or a role."""
    legal, words = _not_names()
    found = []
    for (_, end), (start, _) in zip(names, names[1:]):
        between = _BETWEEN.fullmatch(text, end, start)
        if between is None:
            continue
        word = between.group("word")
        if surname_first(word) and not _role_at_an_end(word) and word not in words and not legal.find(word):
            found.append(between.span("word"))
    return found


def _predicate(word: str) -> bool:
    """Whether Mecab-ko reads ``word`` as a verb or an adjective: one that starts it (``다투다가``) or a noun of two
    syllables or more made one (``공모|하여``); what follows ``과`` is then what was done with the person, not another
    person (a name it does not know may read as odd pieces: ``김|뎐|던이``, ``이|던|핸``)."""
    analysis = word_analysis(word)
    if analysis and analysis[0][1].startswith(("VV", "VA", "VX")):
        return True
    return any(len(noun) > 1 and tag.startswith("NN") and following.startswith(("XSV", "XSA"))
               for (noun, tag, _), (_, following, _) in zip(analysis, analysis[1:]))  # fmt: skip


class NamedInRoleRecognizer(PatternRecognizer):
    """Person names in the places a judgment names people (see the module docstring); the label is the taxonomy's
    person-name label (source ``generator:korean_name``) unless given."""

    name = "named_in_role"
    identifier = "korean_name"
    pattern = _AFTER_ROLE
    base_score = 0.9

    def find(self, text: str) -> list[ScoredSpan]:
        """The names in ``text``, read in its normalised view (a zero-width space inside a name, full-width forms:
        :mod:`thunder.identifiers.normalize`) and given back as spans of the original characters."""
        view = normal_view(text)
        return [replace(span, start=start, end=end) for span in self._find(view.text)
                for start, end in [view.original_span(span.start, span.end)]]  # fmt: skip

    def _find(self, text: str) -> list[ScoredSpan]:
        found = {m.start("word"): (m.group("word"), True) for m in _AFTER_ROLE.finditer(text) if m.group("word")}
        found |= {m.start("quoted"): (m.group("quoted"), False) for m in _AFTER_ROLE.finditer(text) if m.group("quote")}
        found |= {m.start("word"): (m.group("word"), False) for m in _BEFORE_DETAILS.finditer(text)}
        headers = [m.span("name") for m in _PARTY_HEADER.finditer(text) if party_name(m.group("name"))]
        headers += [span for m in _PARTY_LIST.finditer(text) for span in _listed_parties(text, m.end())]
        readings: dict[str, set[str]] = {}  # each distinct word's readings; none but itself where no particle follows
        for word, particles in found.values():
            readings.setdefault(word, set()).update(split_particles(word) if particles else [word])
        support = Counter(reading for word_readings in readings.values() for reading in word_readings)
        shared = frozenset(reading for reading, words in support.items() if words > 1)
        spans = []
        for start, (word, particles) in sorted(found.items()):
            spans += [ScoredSpan(a, b, self.label, self.base_score, self.name, self.category, self.tier1)
                      for a, b in self._names_at(text, start, word, shared, particles)]  # fmt: skip
        seen = {(span.start, span.end) for span in spans}
        spans += [ScoredSpan(a, b, self.label, self.base_score, self.name, self.category, self.tier1)
                  for a, b in headers if (a, b) not in seen]  # fmt: skip
        return spans

    @staticmethod
    def _names_at(text: str, start: int, word: str, shared: frozenset[str], particles: bool) -> list[tuple[int, int]]:
        """The names from ``word`` at ``start`` on: a Korean name (:func:`name_in`) and the names listed after it with
        middle dots (``김철수·이영희``), or one foreign name of several words (:func:`foreign_name`)."""
        parts, end = [("", word)], start + len(word)
        while particles and len(parts) < _MAX_PARTS and (next_part := _NEXT_PART.match(text, end)):
            parts.append((next_part.group("separator"), next_part.group("part")))
            end = next_part.end()
        name = name_in(word, shared, particles)
        if name is not None and name != word:
            return [(start, start + len(name))]  # particles end it
        if name is not None and len(parts) > 1 and parts[1][0] == "·" and name_in(parts[1][1], shared):
            names, position = [], start
            for separator, part in parts:
                listed = name_in(part, shared) if separator != " " else None
                if listed is None:
                    break
                names.append((position + len(separator), position + len(separator) + len(listed)))
                if listed != part:
                    break
                position += len(separator) + len(part)
            return names
        length = foreign_name(parts)
        predicate = text[start + length - 1 : start + length + 1] == "다."  # ends a sentence: 아버지인 자이다.
        if length > len(name or "") and not predicate:
            return [(start, start + length)]
        return [(start, start + len(name))] if name else []
