"""A person's name in a table column that holds people: the victims of a crime table (범죄일람표), the drivers,
patients, account holders or tenants of a list a judgment attaches.

A table here is two lines or more in a row with the same number of cells, two or more, split by ``|`` or by
`` / `` (a slash with spaces round it); its first line is the header. A column holds people when its header ends
with a word for a person, a whole word (``피해자``, ``상대 차량 운전자``, ``입원자``, ``처분 상대방``, ``명의``,
``송금한 사람``, not ``발명의``; a parenthesis after it is left out). In every further line, the cell of such a column
is taken as names, listed with commas or middle dots (:func:`is_name`: ``김철수·이영희`` are two, ``엄·뒷뷾`` and
``제임스 존슨`` one); a role (``피고``, ``원고``), a dictionary word (``소계``), a protected or common word of the
genre, a place or legal text is none. The model reads a table badly, since nothing but the header says what a cell
is; the header says it plainly, so this recognizer reads it.
"""

from __future__ import annotations

import re
from typing import Iterator

from thunder.deid.recognizers.named_in_role import is_word, name_in, party_name
from thunder.identifiers.base import PatternRecognizer, ScoredSpan
from thunder.language.morphemes import word_analysis
from thunder.synthesis.names import SURNAMES

# words a header of a column of people ends with
PERSON_COLUMNS = (
    "피해자", "성명", "이름", "운전자", "입원자", "환자", "상대방", "임차인", "임대인", "예금주", "명의자", "명의인",
    "명의", "송금인", "수령인", "사람", "채무자", "채권자", "매수인", "매도인", "계약자", "피보험자", "수익자",
    "가입자", "근로자", "직원", "학생", "고소인", "증인", "참고인", "피의자", "피고인", "원고", "피고", "신청인",
)  # fmt: skip
_SEPARATORS = (re.compile(r"[ \t]*\|[ \t]*"), re.compile(r"[ \t]+/[ \t]+"))
_PERSON_COLUMN = "|".join(sorted(PERSON_COLUMNS, key=len, reverse=True))
_HEADER_END = re.compile(rf"(?<![가-힣])(?:{_PERSON_COLUMN})(?:[ \t]*\([^()]*\))?$")
_KOREAN_NAME = re.compile(r"[가-힣]{2,4}")
_SEVERAL_WORDS = re.compile(r"[가-힣]{1,8}(?:(?:[ \t]|·)[가-힣]{1,8}){1,2}")  # 엄·뒷뷾, 제임스 존슨
_LIST = re.compile(r"[ \t]*,[ \t]*")
_DOT = re.compile(r"[ \t]*·[ \t]*")


def _cells(line: str, start: int, separator: re.Pattern) -> list[tuple[int, int]]:
    """The ``[start, end)`` of each cell of ``line`` (at ``start`` in the text), outer bars and blanks left out."""
    bounds, position = [], 0
    for match in separator.finditer(line):
        bounds.append((position, match.start()))
        position = match.end()
    bounds.append((position, len(line)))
    if separator is _SEPARATORS[0] and line.lstrip().startswith("|"):
        bounds = bounds[1:]
    if separator is _SEPARATORS[0] and line.rstrip().endswith("|"):
        bounds = bounds[:-1]
    return [(start + a, start + b) for a, b in bounds]


def _tables(text: str) -> Iterator[tuple[re.Pattern, list[tuple[int, str]]]]:
    """Runs of two lines or more that one separator splits into the same number (two or more) of cells."""
    lines, offset = [], 0
    for line in text.split("\n"):
        lines.append((offset, line))
        offset += len(line) + 1
    for separator in _SEPARATORS:
        run: list[tuple[int, str]] = []
        width = 0
        for start, line in [*lines, (offset, "")]:
            cells = len(_cells(line, start, separator)) if separator.search(line) else 0
            if cells >= 2 and (not run or cells == width):
                run.append((start, line))
                width = cells
                continue
            if len(run) >= 2:
                yield separator, run
            run, width = ([(start, line)], cells) if cells >= 2 else ([], 0)


def is_name(candidate: str) -> bool:
    """Whether an entry of a cell in a column of people is a person's name: one Hangul word of two to four syllables
    that :func:`thunder.deid.recognizers.named_in_role.name_in` takes for a name where no particle follows (a surname first, no
    dictionary word, ``소계``), or two or three Hangul words joined by spaces or a middle dot that
    :func:`thunder.deid.recognizers.named_in_role.party_name` takes (no role, organisation, common word, place or legal text), no word
    of them a dictionary word of two syllables or more but a surname (``해당 없음``; ``남궁 민`` is a name)."""
    if _KOREAN_NAME.fullmatch(candidate):
        return name_in(candidate, particles=False) == candidate
    if not party_name(candidate):
        return False
    words = re.split(r"[ \t·]+", candidate)
    given = words[1:] if words[0] in SURNAMES else words  # 남궁 민, though 남궁 is a dictionary word too
    words_of_dictionary = [w for w in given if len(w) > 1 and is_word(word_analysis(w))]  # 해당 없음
    return bool(_SEVERAL_WORDS.fullmatch(candidate)) and not words_of_dictionary


class NamedInTableRecognizer(PatternRecognizer):
    """Person names in the columns of a table whose header names people (see the module docstring); the label is
    the taxonomy's person-name label (source ``generator:korean_name``) unless given."""

    name = "named_in_table"
    identifier = "korean_name"
    pattern = _HEADER_END
    base_score = 0.9

    def find(self, text: str) -> list[ScoredSpan]:
        spans = []
        for separator, rows in _tables(text):
            header_start, header = rows[0]
            header_cells = _cells(header, header_start, separator)
            columns = [i for i, (a, b) in enumerate(header_cells) if _HEADER_END.search(text[a:b].strip())]
            for row_start, row in rows[1:] if columns else ():
                cells = _cells(row, row_start, separator)
                for column in columns:
                    spans += [ScoredSpan(a, b, self.label, self.base_score, self.name, self.category, self.tier1)
                              for a, b in self._names(text, *cells[column])]  # fmt: skip
        return spans

    @staticmethod
    def _names(text: str, start: int, end: int) -> list[tuple[int, int]]:
        """The names of the cell ``text[start:end]``: its entries split by commas, each a name or, split by middle
        dots, a list of names (``김철수·이영희``; ``엄·뒷뷾`` is one name)."""
        names = []
        for a, b in _entries(text, start, end, _LIST):
            listed = _entries(text, a, b, _DOT) if "·" in text[a:b] else []
            if listed and all(_KOREAN_NAME.fullmatch(text[c:d]) and is_name(text[c:d]) for c, d in listed):
                names += listed
            elif is_name(text[a:b]):
                names.append((a, b))
        return names


def _entries(text: str, start: int, end: int, separator: re.Pattern) -> list[tuple[int, int]]:
    """The ``[start, end)`` of the entries of ``text[start:end]`` between ``separator``, blanks left out."""
    entries, position = [], start
    for part in [*separator.finditer(text, start, end), None]:
        stop = part.start() if part else end
        entry = text[position:stop]
        a, b = position + len(entry) - len(entry.lstrip()), position + len(entry.rstrip())
        if b > a:
            entries.append((a, b))
        position = part.end() if part else end
    return entries
