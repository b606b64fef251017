"""Korean final-consonant (받침) rules and particle agreement (은/는, 이/가, 을/를, ...).

A particle written directly after a word takes one form after a final consonant and another after a vowel
(``책은`` / ``사과는``); ``으로``/``로`` also takes ``로`` after a final ㄹ (``서울로``). Thunder needs this twice:
a synthesized mention must agree with the particle the original text wrote after its placeholder, and a
de-identified entity (``A``, ``B``) must carry the particle that agrees with its letter.

Rules (conservative by design):

* The *pronounced* end of ``previous`` decides. Trailing whitespace, closing quotes and closing brackets are
  skipped (``한빛(주)는`` reads ``주``). Hangul syllables use their 종성; lone consonant jamo (``ㄱ`` = 기역)
  end in a consonant, lone vowel jamo do not. Numbers are read in Sino-Korean: the last non-zero digit
  (일 삼 육 칠 팔 영/공 end in a consonant, 이 사 오 구 do not) or, after trailing zeros, the unit
  (십 백 천 만 억 end in a consonant, 조 does not; 경 does). Latin letters are read by their English names:
  L, M, N, R end in a consonant (L and R in ㄹ), all others in a vowel. Anything else (Hanja, symbols,
  ``○``) is undecidable: ``None``, and nothing is changed.
* A particle is recognised only at the very start of ``following`` and only when it is followed by a word
  boundary (end of text, whitespace, punctuation) or by one of a few listed continuations
  (``으로부터``, ``과의``, ``이었다`` ...). So ``이후``, ``가방``, ``로비``, ``다방`` are never touched. A de-identified
  word's particle may also follow closing quotes, which it agrees across (``'해오름한의원'이라는`` -> ``'A'라는``):
  :func:`fix_particle` looks past them.
* Ambiguous vowel forms are resolved to the commoner particle: ``야`` becomes vocative ``아``.
* A particle written with its other form in parentheses (``이(가)``, ``은(는)``, ``(으)로``, ``(이)라는``), as
  forms and templates write it, fits either ending: it is left as written (:func:`particle_choice`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Container

__all__ = [
    "PARTICLE_RUN",
    "agrees",
    "run_agrees",
    "ends_with_rieul",
    "final_consonant",
    "final_particles",
    "fix_particle",
    "fixed_particle",
    "has_final_consonant",
    "leading_particle",
    "particle_choice",
    "particle_length",
    "trailing_particle",
    "written_into_word",
]

_HANGUL_FIRST, _HANGUL_LAST = 0xAC00, 0xD7A3
_JONGSEONG = " ㄱㄲㄳㄴㄵㄶㄷㄹㄺㄻㄼㄽㄾㄿㅀㅁㅂㅄㅅㅆㅇㅈㅊㅋㅌㅍㅎ"
# lone consonant jamo are read by their names (기역, 니은, 디귿, 리을, ...): final consonant of the name
_JAMO_NAME_FINAL = {
    "ㄱ": "ㄱ", "ㄲ": "ㄱ", "ㄴ": "ㄴ", "ㄷ": "ㄷ", "ㄸ": "ㄷ", "ㄹ": "ㄹ", "ㅁ": "ㅁ", "ㅂ": "ㅂ", "ㅃ": "ㅂ",
    "ㅅ": "ㅅ", "ㅆ": "ㅅ", "ㅇ": "ㅇ", "ㅈ": "ㅈ", "ㅉ": "ㅈ", "ㅊ": "ㅊ", "ㅋ": "ㅋ", "ㅌ": "ㅌ", "ㅍ": "ㅍ",
    "ㅎ": "ㅎ",
}  # fmt: skip
_DIGIT_FINAL = {"0": "ㅇ", "1": "ㄹ", "2": "", "3": "ㅁ", "4": "", "5": "", "6": "ㄱ", "7": "ㄹ", "8": "ㄹ", "9": ""}
# unit read after k trailing zeros: 십 백 천 만 (십만 백만 천만) 억 ... 조 ... 경
_UNIT_FINAL = {1: "ㅂ", 2: "ㄱ", 3: "ㄴ", 4: "ㅁ", 5: "ㅁ", 6: "ㅁ", 7: "ㅁ", 8: "ㄱ", 9: "ㄱ", 10: "ㄱ", 11: "ㄱ"}
_UNIT_FINAL.update({k: "" for k in range(12, 16)})
_LATIN_FINAL = {"L": "ㄹ", "M": "ㅁ", "N": "ㄴ", "R": "ㄹ"}
_SKIPPED_TAIL = set(" \t\r\n\u00a0'\"’”`)]}」』〉》】〕")
_CLOSING_QUOTES = "'\"’”」』"
_NUMBER_TAIL = re.compile(r"[0-9][0-9,]*$")


def final_consonant(text: str) -> str | None:
    """The final consonant (jamo) of the last pronounced character of ``text``; ``""`` for a vowel end;
    ``None`` where undecidable (empty text, Hanja, symbols)."""
    # full-width forms -> ASCII; compatibility jamo (ㄱ, ㅏ) are kept (NFKC would decompose them)
    text = "".join(c if "\u3131" <= c <= "\u318e" else unicodedata.normalize("NFKC", c) for c in text[-40:])
    end = len(text)
    while end and text[end - 1] in _SKIPPED_TAIL:
        end -= 1
    if not end:
        return None
    char = text[end - 1]
    code = ord(char)
    if _HANGUL_FIRST <= code <= _HANGUL_LAST:
        return _JONGSEONG[(code - _HANGUL_FIRST) % 28].strip()
    if char in _JAMO_NAME_FINAL:
        return _JAMO_NAME_FINAL[char]
    if "ㅏ" <= char <= "ㅣ":
        return ""
    if char.isascii() and char.isdigit():
        digits = _NUMBER_TAIL.search(text[:end]).group().replace(",", "")
        stripped = digits.rstrip("0")
        zeros = len(digits) - len(stripped)
        if not stripped or zeros == 0:
            return _DIGIT_FINAL[digits[-1]]
        if digits.startswith("0"):  # a code read digit by digit: "...0" is 공
            return "ㅇ"
        return _UNIT_FINAL.get(zeros, "ㅇ")  # 16+ zeros: 경
    if char.isascii() and char.isalpha():
        return _LATIN_FINAL.get(char.upper(), "")
    return None


def has_final_consonant(text: str) -> bool | None:
    """Whether the last pronounced character of ``text`` ends in a consonant (``None``: undecidable)."""
    final = final_consonant(text)
    return None if final is None else final != ""


def ends_with_rieul(text: str) -> bool | None:
    """Whether ``text`` ends in a final ㄹ (``서울``, ``7``, ``L``), which takes ``로`` not ``으로``."""
    final = final_consonant(text)
    return None if final is None else final == "ㄹ"


# (form after a consonant, form after a vowel, allowed continuations after the particle)
_PAIRS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("이었다", "였다", ("",)),
    ("이었고", "였고", ("",)),
    ("이었던", "였던", ("",)),
    ("이었으며", "였으며", ("",)),
    ("이었는데", "였는데", ("",)),
    ("이었지만", "였지만", ("",)),
    ("이라는", "라는", ("",)),
    ("이라고", "라고", ("", "는", "도", "만")),
    ("이라며", "라며", ("",)),
    ("이라면", "라면", ("",)),
    ("이라서", "라서", ("",)),
    ("이라도", "라도", ("",)),
    ("이란", "란", ("",)),
    ("이나", "나", ("", "마")),
    ("이며", "며", ("",)),
    ("이랑", "랑", ("", "은", "도", "의")),
    ("이에요", "예요", ("",)),
    ("이다", "다", ("",)),
    ("으로", "로", ("", "부터", "서", "서는", "서도", "써", "는", "도", "만", "의", "나", "라도", "인해", "하여")),
    ("은", "는", ("", "커녕")),
    ("이", "가", ("",)),
    ("을", "를", ("",)),
    ("과", "와", ("", "의", "는", "도", "만", "같이", "같은")),
    ("아", "야", ("",)),
)
_FORMS = sorted(
    ((form, pair) for pair in _PAIRS for form in pair[:2]), key=lambda item: len(item[0]), reverse=True
)


def _is_boundary(char: str) -> bool:
    return not (char.isalnum() or char == "_")


def leading_particle(following: str) -> tuple[str, tuple[str, str]] | None:
    """The particle written at the start of ``following`` and its (after-consonant, after-vowel) pair, or
    ``None`` where ``following`` does not start with a particle followed by a word boundary."""
    for form, (consonant, vowel, tails) in _FORMS:
        if not following.startswith(form):
            continue
        rest = following[len(form) :]
        for tail in sorted(tails, key=len, reverse=True):
            if rest.startswith(tail) and (len(rest) == len(tail) or _is_boundary(rest[len(tail)])):
                return form, (consonant, vowel)
    return None


# particles and suffixes that do not change with the word before them, longest first
INVARIANT_PARTICLES = tuple(sorted((
    "의", "에", "에게", "에서", "에게서", "께", "께서", "한테", "한테서", "도", "만", "부터", "까지", "보다", "처럼",
    "조차", "마저", "밖에", "마다", "하고", "씨", "님", "측", "들",
), key=len, reverse=True))  # fmt: skip


def starts_with_particle(following: str) -> bool:
    """Whether ``following`` starts with a particle (or a suffix such as ``씨``) that may follow a word."""
    return leading_particle(following) is not None or following.startswith(INVARIANT_PARTICLES)


def _choices() -> re.Pattern:
    """Every particle written with its other form in parentheses: ``이(가)``, ``가(이)``, ``(이)가``, ``(으)로``."""
    written = set()
    for consonant, vowel, _ in _PAIRS:
        written |= {f"{consonant}({vowel})", f"{vowel}({consonant})", f"({consonant}){vowel}", f"({vowel}){consonant}"}
        if consonant.endswith(vowel) and consonant != vowel:  # (으)로, (이)라는, (이)나
            written.add(f"({consonant[: -len(vowel)]}){vowel}")
    return re.compile("|".join(map(re.escape, sorted(written, key=len, reverse=True))))


_CHOICE = _choices()


def particle_choice(following: str) -> int:
    """How many characters of ``following`` a particle written with its other form in parentheses takes at its start
    (``이(가) 왔다``: 4, ``(으)로``: 4), which fits either ending; 0 where none leads it."""
    match = _CHOICE.match(following)
    return match.end() if match else 0


def _correct_form(final: str, pair: tuple[str, str]) -> str:
    consonant, vowel = pair
    if consonant == "으로":
        return vowel if final in ("", "ㄹ") else consonant
    return vowel if final == "" else consonant


def _quoted_particle(following: str) -> tuple[int, str, tuple[str, str]] | None:
    """The closing quotes at the start of ``following``, counted, then its particle and the particle's pair."""
    quotes = len(following) - len(following.lstrip(_CLOSING_QUOTES))
    found = leading_particle(following[quotes:])
    return None if found is None else (quotes, *found)


def particle_length(following: str) -> int:
    """How many characters of ``following`` its leading particle takes, closing quotes before it included (``'이라는``:
    4); 0 where no particle leads it."""
    found = _quoted_particle(following)
    return 0 if found is None else found[0] + len(found[1])


def fixed_particle(previous: str, following: str) -> tuple[str, int] | None:
    """The start of ``following`` up to the end of its leading particle (closing quotes before it kept), the particle
    made to agree with ``previous``, and how many characters of ``following`` that start replaces; ``None`` where no
    particle leads ``following`` or ``previous`` is undecidable."""
    found = _quoted_particle(following)
    final = final_consonant(previous) if found else None
    if found is None or final is None or particle_choice(following[found[0] :]):
        return None  # no particle, an undecidable end, or a particle written for either ending: as written
    quotes, form, pair = found
    return following[:quotes] + _correct_form(final, pair), quotes + len(form)


def fix_particle(previous: str, following: str) -> str:
    """``following`` with its leading particle made to agree with the end of ``previous``.

    ``fix_particle("홍길동", "는 ...") == "은 ..."``, ``fix_particle("A", "'이라는") == "'라는"``; text that does not
    start with a particle, or a ``previous`` whose end is undecidable, is returned unchanged.
    """
    fixed = fixed_particle(previous, following)
    return following if fixed is None else fixed[0] + following[fixed[1] :]


# Particles written directly after a noun, alternating or not (the case particles, 의, 에게, 도, 만, 부터, 랑, ...).
_NOUN_PARTICLES = (
    "이라는", "에게", "에서", "한테", "부터", "까지", "으로", "이나", "이랑", "라는", "처럼", "보다",
    "은", "는", "이", "가", "을", "를", "과", "와", "로", "의", "에", "도", "만", "께", "나", "랑",
)  # fmt: skip
PARTICLE_RUN = re.compile("(?:" + "|".join(_NOUN_PARTICLES) + ")+")
"""One or more particles in a row (``에게는``), for ``PARTICLE_RUN.match(text, pos)``."""


# Particles that are also common last syllables of names and words (서은, 배비이, 김엉가, 지나, 태만, 사랑): a word
# ending in one of them is not taken to end in a particle.
_NAME_FINAL_PARTICLES = frozenset({"은", "이", "가", "나", "도", "만", "로", "이나", "랑"})
# Of those, the ones that are common last syllables of names, places and institutions even where they agree with
# the letter before them as a particle would (지나, 태만, 하랑, 경기도, 세종대로, 종로3가, 신경과, 이나): a span
# keeps them where its source took them.
ENTITY_FINAL_PARTICLES = frozenset({"가", "과", "나", "도", "로", "만", "랑", "이나"})
# The vocative particle (홍길동아, 김철수야) and what follows a word called out: a comma, an exclamation or question
# mark, a full stop, a closing quote
_VOCATIVES = ("아", "야")
_AFTER_VOCATIVE = frozenset(",!?.~…" + _CLOSING_QUOTES)


def trailing_particle(text: str) -> str:
    """The particle ``text`` ends with, the longest one (``냘라의`` -> ``의``, ``수에게`` -> ``에게``), or ``""``;
    also ``""`` where that particle is a common last syllable of a name (``배비이``)."""
    form = next((form for form in _NOUN_PARTICLES if len(form) <= len(text) and text.endswith(form)), "")
    return "" if form in _NAME_FINAL_PARTICLES else form


def final_particles(
    text: str,
    start: int,
    end: int,
    inside_nouns: Container[int] = (),
    entity_finals: Container[str] = ENTITY_FINAL_PARTICLES,
) -> int:
    """How many characters at the end of the span ``text[start:end]`` are the particles written after it, not part
    of it (``정미래는``: 1, ``이씨는``: 1, ``홍길동에게는``: 3, ``김서은``: 0): particles up to the end of the word
    that agree with the text before them (``이별와`` before ``의``: ``의`` only; after ``이별`` it would be ``과``),
    the first of them none of ``entity_finals``, the common last syllables of a name, place or institution
    (``김하랑``, ``경기도``, ``세종대로``: none), and none starting at an offset of ``inside_nouns`` (inside one noun
    of the word as Mecab-ko reads it: :func:`thunder.language.morphemes.final_particles`); or the vocative ``아`` /
    ``야`` agreeing with the text before it, ending the span's word before a comma, ``!``, ``?``, a full stop or a
    closing quote (``홍길동아,``: a word called out, whatever Mecab-ko makes of the word alone). Something of the
    span always remains."""
    word_end = end
    while word_end < len(text) and text[word_end].isalnum():
        word_end += 1
    if (word_end == end < len(text) and end - start > 1 and text[end - 1] in _VOCATIVES
            and text[end] in _AFTER_VOCATIVE and agrees(text[start : end - 1], text[end - 1]) is True):  # fmt: skip
        return 1
    cut = end
    while True:
        span = text[start:cut]
        form = next((form for form in _NOUN_PARTICLES if len(form) < len(span) and span.endswith(form)), "")
        before = cut - len(form)
        if (not form or form in entity_finals or before in inside_nouns
                or not PARTICLE_RUN.fullmatch(text, before, word_end)
                or not run_agrees(text[start:before], text[before:word_end])):  # fmt: skip
            return end - cut
        cut = before


def agrees(previous: str, following: str) -> bool | None:
    """Whether the particle at the very start of ``following`` agrees with ``previous`` (``None``: no particle
    there, or ``previous`` undecidable)."""
    found = leading_particle(following)
    final = final_consonant(previous) if found else None
    return None if found is None or final is None else _correct_form(final, found[1]) == found[0]


def run_agrees(previous: str, run: str) -> bool:
    """Whether a run of particles written after ``previous`` (``에게는``, ``와의``) may follow it: ``False`` only where
    the run starts with an alternating particle of the wrong form (``원고은``, ``원고은은``)."""
    found = agrees(previous, run)
    if found is not None:
        return found
    first = next((run[:n] for n in (1, 2, 3) if leading_particle(run[:n]) is not None), None)
    return first is None or agrees(previous, first) is not False


# Case particles after which Korean writes no further particle (홍길동이에게, 홍길동의는 are not Korean), and
# particles after which it writes no subject, object or conjunctive one (학교에는, 학교에도; not 학교에를, 학교에와)
_CLOSING_PARTICLES = frozenset("이가을를은는의")
_NO_CASE_AFTER = {"에": frozenset("이가을를와과")}
_HANGUL_RUN = re.compile(r"[가-힣]+")
_PARTICLE_CHOICE = re.compile(r"(?:" + "|".join(_NOUN_PARTICLES) + r")\)")
_QUOTE_PAIRS = {"'": "'", "‘": "’", '"': '"', "“": "”", "「": "」", "『": "』"}


def written_into_word(text: str, start: int, end: int) -> int:
    """How many characters after the word ``text[start:end]`` read as particles yet belong to it, as the writing
    shows (0: none). Three written cues, each impossible for a particle:

    * a case particle no particle may follow is followed by more particles that end the word (``강요가에게``:
      ``가``; after ``최``, ``최을의는``: ``을의``), or ``에`` by a subject, object or conjunctive one (``최엥에와``);
    * one particle syllable ends the word right before an opening parenthesis (``피해자 이헐나(43세)``: Korean
      writes the particle after the parenthetical);
    * one particle syllable ends a quotation that opened with the word (``'반도' 식당``: the particle goes after
      the closing quote).
    """
    grown, opening = end, text[start - 1] if start else ""
    while True:
        run = _HANGUL_RUN.match(text, grown)
        word = run.group() if run else ""
        after = text[grown + len(word) : grown + len(word) + 1]
        if not word or after.isalnum():
            return grown - end
        first, rest = word[0], word[1:]
        found = leading_particle(word)
        stacked = (
            (first in _CLOSING_PARTICLES or rest[:1] in _NO_CASE_AFTER.get(first, ()))
            and bool(rest)
            and PARTICLE_RUN.fullmatch(rest) is not None
            and (found is None or len(found[0]) == 1)  # 이나, 이라는: one particle
            and run_agrees(text[start:grown] + first, rest)
        )
        alone = not rest and PARTICLE_RUN.fullmatch(first) is not None
        parenthesis = after == "(" and not _PARTICLE_CHOICE.match(text, grown + 2)  # 이(가): the other form
        if alone and (parenthesis or (opening in _QUOTE_PAIRS and after == _QUOTE_PAIRS[opening])):
            return grown + 1 - end
        if not stacked:
            return grown - end
        grown += 1
